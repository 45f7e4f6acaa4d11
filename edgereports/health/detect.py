"""The detectors: hourly series of each subject in, flags out (numpy only, no I/O).

Every subject is judged against its own history (the hours before the range looked at), per
*hour class* (the local hour of day, weekdays and weekends apart: 48 classes), with estimates
shrunk towards its overall figure. The methods, explained with their thresholds in
docs/health.md: offline gaps (:func:`gaps`), idle SIMs (:func:`idle_runs`) and sustained usage
shifts found by a CUSUM (:func:`shifts`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "CUSUM_DROP",
    "CUSUM_SPIKE",
    "GAP_SCORE",
    "IDLE_HOURS",
    "MIN_RATIO",
    "Baseline",
    "Gap",
    "Shift",
    "class_baseline",
    "gaps",
    "idle_runs",
    "shifts",
]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
B1 = npt.NDArray[np.bool_]

#: A gap (or idle run) is flagged when its chance under the subject's history is <= 10**-6.
GAP_SCORE = 6.0
#: A run without a byte is an idle SIM from this many hours.
IDLE_HOURS = 24
#: The CUSUM's reference (about half the shift it looks for, in spreads) and threshold, per
#: direction: drops (whose left tail is heavier: a quiet hour is common) and spikes.
CUSUM_DROP = (1.0, 10.0)
CUSUM_SPIKE = (0.5, 10.0)
#: A shift is flagged only when its median rate is at least this many times normal (a spike)
#: or at most its inverse (a drop): a sustained but small change is not acted on.
MIN_RATIO = 2.0
#: How many hours of a class weigh as much as the subject's overall figure.
SHRINK = 4.0
#: The smallest spread of log10 rates (a subject whose rate hardly varies).
MIN_SPREAD = 0.15
CLASSES = 48


@dataclass(frozen=True)
class Baseline:
    """A per-class estimate: ``per_class[c]``, the overall value it was shrunk towards, and the
    history's raw counts per class (``hits`` of ``counts`` hours)."""

    per_class: F64
    overall: float
    samples: int
    hits: F64
    counts: F64

    def seen(self, classes: I64) -> tuple[int, int]:
        """Raw ``(hits, hours)`` of the history in the distinct ``classes`` given."""
        distinct = np.unique(classes)
        return int(self.hits[distinct].sum()), int(self.counts[distinct].sum())


def class_baseline(hit: B1, cls: I64, counted: B1) -> Baseline:
    """The share of ``counted`` hours that are ``hit``, per class, shrunk to the overall share.

    The overall share is Laplace-smoothed ((k + 1) / (n + 2)), so it is never 0 or 1.
    """
    n = np.bincount(cls[counted], minlength=CLASSES).astype(float)
    k = np.bincount(cls[counted & hit], minlength=CLASSES).astype(float)
    overall = (k.sum() + 1.0) / (n.sum() + 2.0)
    return Baseline((k + SHRINK * overall) / (n + SHRINK), float(overall), int(n.sum()), k, n)


@dataclass(frozen=True)
class Gap:
    """A run ``[a, b)`` of hours and its score (-log10 of its chance)."""

    a: int
    b: int
    score: float


def _runs(mask: B1) -> list[tuple[int, int]]:
    """The maximal runs ``[a, b)`` where ``mask`` is True."""
    if not len(mask):
        return []
    edges = np.diff(np.concatenate(([0], mask.astype(np.int8), [0])))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


def gaps(online: B1, cls: I64, i0: int, score: float = GAP_SCORE) -> tuple[list[Gap], Baseline]:
    """Offline runs that reach into ``[i0, end)`` scoring at least ``score``.

    Args:
        online: per hour, whether the subject had any time online.
        cls: per hour, its class.
        i0: the first hour looked at (the hours before it are the history).
        score: the least score flagged.

    Returns:
        The flagged gaps and the baseline (per class, the chance of being offline).
    """
    history = np.zeros(len(online), dtype=bool)
    history[:i0] = True
    base = class_baseline(~online, cls, history)
    cost = -np.log10(base.per_class[cls])
    found = []
    for a, b in _runs(~online):
        if b <= i0:
            continue
        s = float(cost[a:b].sum())
        if s >= score:
            found.append(Gap(a, b, s))
    return found, base


def idle_runs(online: B1, traffic: B1, cls: I64, i0: int) -> tuple[list[Gap], Baseline]:
    """Runs without a byte of at least :data:`IDLE_HOURS` hours, reaching into ``[i0, end)``,
    whose online hours without a byte score at least :data:`GAP_SCORE`.

    The score is -log10 of the chance, by the history, that that many online hours pass no
    byte (per class).
    """
    history = np.zeros(len(online), dtype=bool)
    history[:i0] = True
    base = class_baseline(~traffic, cls, history & online)
    cost = -np.log10(base.per_class[cls])
    idle = online & ~traffic
    found = []
    for a, b in _runs(~traffic):
        if b <= i0 or b - a < IDLE_HOURS:
            continue
        s = float(cost[a:b][idle[a:b]].sum())
        if s >= GAP_SCORE:
            found.append(Gap(a, b, s))
    return found, base


@dataclass(frozen=True)
class Shift:
    """A sustained shift of the usage rate over hours ``[a, b)``.

    Attributes:
        a: the first hour (the first sample of the shift).
        b: the hour after the last one.
        direction: -1 (drop) or +1 (spike).
        ratio: the median rate over the shift divided by the baseline's (10**median z*spread).
        samples: online hours in the shift.
    """

    a: int
    b: int
    direction: int
    ratio: float
    samples: int


def _cusum(z: F64, sign: int, k: float, h: float) -> list[tuple[int, int]]:
    """Sample ranges ``[i, j)`` of sustained shifts in direction ``sign`` (reference ``k``,
    threshold ``h``)."""
    out: list[tuple[int, int]] = []
    s, start, i, n = 0.0, 0, 0, len(z)
    while i < n:
        s = max(0.0, s + sign * z[i] - k)
        if s == 0.0:
            start = i + 1
        elif s >= h:  # alarm: follow it to its peak
            peak, top, j = i, s, i + 1
            while j < n:
                s = max(0.0, s + sign * z[j] - k)
                if s >= top:
                    peak, top = j, s
                if s == 0.0:
                    break
                j += 1
            out.append((start, peak + 1))
            s, start, i = 0.0, j + 1, j + 1
            continue
        i += 1
    return out


def shifts(rate: F64, sampled: B1, cls: I64, i0: int) -> list[Shift]:
    """Sustained drops and spikes of ``log10`` rates reaching into ``[i0, end)``.

    Args:
        rate: per hour, bytes per second online (used where ``sampled``).
        sampled: per hour, whether the hour has a rate (online and some bytes).
        cls: per hour, its class.
        i0: the first hour looked at.

    Returns:
        The shifts, in time order.
    """
    idx = np.flatnonzero(sampled)
    hist = idx[idx < i0]
    if len(hist) < 24 or len(idx) == len(hist):
        return []
    x = np.log10(rate[idx])
    c = cls[idx]
    h = len(hist)
    overall = float(np.median(x[:h]))
    base = np.full(CLASSES, overall)
    for k in np.unique(c[:h]).tolist():
        vals = x[:h][c[:h] == k]
        base[k] = (len(vals) * float(np.median(vals)) + SHRINK * overall) / (len(vals) + SHRINK)
    dev = x - base[c]
    spread = max(1.4826 * float(np.median(np.abs(dev[:h] - np.median(dev[:h])))), MIN_SPREAD)
    z = np.clip(dev / spread, -4.0, 4.0)
    found: list[Shift] = []
    for sign, (ref, limit) in ((-1, CUSUM_DROP), (1, CUSUM_SPIKE)):
        for i, j in _cusum(z, sign, ref, limit):
            a, b = int(idx[i]), int(idx[j - 1]) + 1
            if b <= i0:
                continue
            ratio = float(10 ** (np.median(dev[i:j])))
            if ratio**sign < MIN_RATIO:
                continue
            found.append(Shift(a, b, sign, ratio, j - i))
    return sorted(found, key=lambda s: (s.a, s.direction))
