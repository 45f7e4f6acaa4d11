"""The statistics of the rules: hourly series of one subject in, runs and shifts out (numpy only).

Every subject is judged against its own history (the judged hours before the range), per *hour
class* (the local hour of day, weekdays and weekends apart: 48 classes). A class's share of an
event is counted over its own hour and the hours either side (same kind of day), then shrunk
towards the subject's overall share, so a class seen rarely borrows from the others. The
methods, with their thresholds, are explained in docs/health.md: unlikely runs of hours
(:func:`gaps`, :func:`idle_runs`) and sustained rate shifts found by a CUSUM of normal scores
(:func:`shifts`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from .grid import CLASSES

__all__ = [
    "CUSUM",
    "GAP_SCORE",
    "IDLE_HOURS",
    "MIN_RATIO",
    "MIN_SAMPLES",
    "REST_SCORE",
    "Baseline",
    "Rates",
    "Run",
    "Shift",
    "class_baseline",
    "gaps",
    "idle_runs",
    "rate_scores",
    "runs",
    "shifts",
]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
B1 = npt.NDArray[np.bool_]

#: A run is flagged when its chance under the subject's history is at most 10**-6.
GAP_SCORE = 6.0
#: A site or eNodeB is dark only when, with its most unusual device left out (one device
#: breaking down is taken for a one-in-a-thousand event), the rest's silence still scores this
#: much by the rest's own history.
REST_SCORE = 3.0
#: A run without a byte is an idle SIM from this many hours.
IDLE_HOURS = 24
#: The CUSUM of normal scores: its reference (half the shift it looks for, in standard
#: deviations) and its threshold; about one false alarm per million samples per direction.
CUSUM = (0.75, 10.0)
#: A shift is flagged only when its median rate is at least this many times normal (a spike)
#: or at most its inverse (a drop): a sustained but small change is not acted on.
MIN_RATIO = 2.0
#: The least online hours of history a rate is judged from.
MIN_SAMPLES = 48
#: How many hours of a class weigh as much as the subject's overall figure.
SHRINK = 4.0
#: The same, for the median rate of a class (a median of few hours is noisy).
SHRINK_RATE = 12.0
#: How far a figure summed in another order may stray: a shortcut is taken only beyond it.
_SLACK = 1e-6
_NORMAL = NormalDist()
_Z = np.linspace(-5.0, 5.0, 2001)
_U = np.array([_NORMAL.cdf(float(z)) for z in _Z])


@dataclass(frozen=True)
class Baseline:
    """What a subject's history says about an event per class: a Beta distribution of its
    chance (``a``, ``b``: hits and misses of the class and its neighbours, plus the overall
    share times the prior's weight), and the raw counts per class (``hits`` of ``counts``)."""

    a: F64
    b: F64
    overall: float
    hits: F64
    counts: F64

    @property
    def per_class(self) -> F64:
        """The expected chance of the event per class."""
        out: F64 = self.a / (self.a + self.b)
        return out

    def seen(self, classes: I64) -> tuple[int, int]:
        """Raw ``(hits, hours)`` of the history in the distinct ``classes`` given."""
        distinct = np.unique(classes)
        return int(self.hits[distinct].sum()), int(self.counts[distinct].sum())

    def score(self, classes: I64, *, exact: bool = False) -> float:
        """-log10 of the chance that hours of these classes are all events, by the history.

        Hours of one class share its unknown chance ``q``, so their joint chance is the Beta
        moment ``E[q**m]``, not ``E[q]**m``: a class seen rarely never makes a run look less
        likely than its data allow. Below :data:`GAP_SCORE` the cheaper ``E[q]**m`` bound
        (never lower) is returned unless ``exact``.
        """
        m = np.bincount(classes, minlength=CLASSES)
        bound = float(-(m * np.log10(self.per_class)).sum())
        if bound < GAP_SCORE and not exact:  # the moments only lower it
            return bound
        log_p = 0.0
        for c in np.flatnonzero(m).tolist():
            a, b, k = float(self.a[c]), float(self.b[c]), int(m[c])
            log_p += (
                math.lgamma(a + k) - math.lgamma(a) + math.lgamma(a + b) - math.lgamma(a + b + k)
            )
        return -log_p / math.log(10)


def _neighbours(values: F64) -> F64:
    """Each class's value plus those of the hours either side on the same kind of day."""
    days = values.reshape(2, 24)
    out: F64 = (days + np.roll(days, 1, axis=1) + np.roll(days, -1, axis=1)).reshape(CLASSES)
    return out


def class_baseline(hit: B1, cls: I64, counted: B1) -> Baseline:
    """The chance of ``hit`` per class, from the ``counted`` hours (empirical Bayes).

    A class counts its own hour and the hours either side. Its chance is a Beta distribution
    around the overall share (Laplace-smoothed, (k + 1) / (n + 2): never 0 or 1) whose weight
    is what the classes' spread says: classes that differ no more than chance would make them
    borrow much from the overall share; classes that clearly differ borrow little (at least
    :data:`SHRINK` hours' worth).
    """
    n = np.bincount(cls[counted], minlength=CLASSES).astype(float)
    k = np.bincount(cls[counted & hit], minlength=CLASSES).astype(float)
    overall = (k.sum() + 1.0) / (n.sum() + 2.0)
    n3, k3 = _neighbours(n), _neighbours(k)
    seen = n3 > 0
    weight = float(max(SHRINK, n.sum()))
    if seen.sum() > 1:
        share = k3[seen] / n3[seen]
        spread = float(np.average((share - overall) ** 2, weights=n3[seen]))
        noise = overall * (1 - overall) * seen.sum() / float(n3[seen].sum())
        between = spread - noise
        if between > 0:
            weight = float(min(max(overall * (1 - overall) / between - 1, SHRINK), weight))
    return Baseline(k3 + weight * overall, n3 - k3 + weight * (1 - overall), float(overall), k, n)


@dataclass(frozen=True)
class Run:
    """A run ``[a, b)`` of hours and its score (-log10 of its chance)."""

    a: int
    b: int
    score: float


def runs(mask: B1) -> list[tuple[int, int]]:
    """The maximal runs ``[a, b)`` where ``mask`` is True."""
    if not len(mask):
        return []
    edges = np.diff(np.concatenate(([0], mask.astype(np.int8), [0])))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


def gaps(
    offline: B1, judged: B1, cls: I64, i0: int, base: Baseline | None = None
) -> tuple[list[Run], Baseline]:
    """Runs of judged offline hours that reach into ``[i0, end)`` scoring at least
    :data:`GAP_SCORE` (hours not judged cut runs).

    Args:
        offline: per hour, whether the subject had no time online.
        judged: per hour, whether the hour is judged (active, outside maintenance).
        cls: per hour, its class.
        i0: the first hour looked at (the hours before it are the history).
        base: the baseline, when computed already (else from the history's judged hours).

    Returns:
        The flagged runs and the baseline (per class, the chance of being offline).
    """
    if base is None:
        history = judged.copy()
        history[i0:] = False
        base = class_baseline(offline, cls, history)
    spans = [(a, b) for a, b in runs(offline & judged) if b > i0]
    if not spans:
        return [], base
    # Each run's bound (never below its score) from running sums: a run whose bound is
    # clearly below GAP_SCORE is not flagged, and is not scored one by one.
    total = np.concatenate(([0.0], np.cumsum(-np.log10(base.per_class)[cls])))
    a_s, b_s = np.asarray(spans).T
    rough = (total[b_s] - total[a_s]).tolist()
    found = []
    for (a, b), bound in zip(spans, rough, strict=True):
        if bound < GAP_SCORE - _SLACK:
            continue
        s = base.score(cls[a:b])
        if s >= GAP_SCORE:
            found.append(Run(a, b, s))
    return found, base


def idle_runs(online: B1, traffic: B1, judged: B1, cls: I64, i0: int) -> tuple[list[Run], Baseline]:
    """Runs without a byte of at least :data:`IDLE_HOURS` judged hours, reaching into
    ``[i0, end)``, whose online hours without a byte score at least :data:`GAP_SCORE`.

    The score is -log10 of the chance, by the history, that that many online hours pass no
    byte (per class).
    """
    history = judged & online
    history[i0:] = False
    base = class_baseline(~traffic, cls, history)
    idle = online & ~traffic & judged
    found = []
    for a, b in runs(~traffic & judged):
        if b <= i0 or b - a < IDLE_HOURS:
            continue
        s = base.score(cls[a:b][idle[a:b]])
        if s >= GAP_SCORE:
            found.append(Run(a, b, s))
    return found, base


@dataclass(frozen=True)
class Shift:
    """A sustained shift of the usage rate over hours ``[a, b)``.

    Attributes:
        a: the first hour (the first sample of the shift).
        b: the hour after the last one.
        direction: -1 (drop) or +1 (spike).
        ratio: the median rate over the shift divided by the baseline's.
        samples: online hours in the shift.
    """

    a: int
    b: int
    direction: int
    ratio: float
    samples: int


def _cusum(z: F64, sign: int, k: float, h: float) -> list[tuple[int, int]]:
    """Sample ranges ``[i, j)`` of sustained shifts in direction ``sign`` (reference ``k``,
    threshold ``h``): each starts after the sum last left zero and ends at its peak."""
    out: list[tuple[int, int]] = []
    if _under(z, sign, k, h):
        return out
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


def _under(z: F64, sign: int, k: float, h: float) -> bool:
    """Whether the CUSUM of ``z`` stays clearly under ``h`` (no alarm), from its closed form:
    the running sum of ``sign * z - k`` less its running minimum (at most 0)."""
    if not len(z):
        return True
    steps = np.cumsum(sign * z - k)
    top = steps - np.minimum.accumulate(np.minimum(steps, 0.0))
    return float(top.max()) < h - _SLACK


def normal_scores(values: F64, reference: F64) -> F64:
    """Each value's normal score among ``reference``: the standard normal quantile of its
    mid-rank share, ``(rank + 0.5) / (n + 1)``, so the scores of values drawn like the
    reference are close to standard normal whatever their distribution."""
    ranked = np.sort(reference)
    low = np.searchsorted(ranked, values, side="left")
    high = np.searchsorted(ranked, values, side="right")
    share = ((low + high) / 2.0 + 0.5) / (len(ranked) + 1.0)
    out: F64 = np.interp(share, _U, _Z)
    return out


@dataclass(frozen=True)
class Rates:
    """A device's online hours as normal scores (what both shift directions read).

    Attributes:
        idx: the sampled hours.
        dev: each sample's ``log10`` rate minus its class's median (shrunk).
        z: each sample's normal score among the history's deviations.
        history: how many samples lie before the range.
    """

    idx: I64
    dev: F64
    z: F64
    history: int


def _class_medians(x: F64, c: I64) -> tuple[F64, F64]:
    """The median of ``x`` per class (NaN where none) and the count per class."""
    counts = np.bincount(c, minlength=CLASSES)
    order = np.lexsort((x, c))
    xs = x[order]
    ends = np.cumsum(counts)
    starts = ends - counts
    seen = counts > 0
    median = np.full(CLASSES, np.nan)
    lo = starts[seen] + (counts[seen] - 1) // 2
    hi = starts[seen] + counts[seen] // 2
    median[seen] = (xs[lo] + xs[hi]) / 2.0
    return median, counts.astype(float)


def rate_scores(rate: F64, sampled: B1, cls: I64, i0: int) -> Rates | None:
    """Each online hour's ``log10`` rate minus its class's median (shrunk towards the overall
    median by :data:`SHRINK_RATE` hours), as a normal score among the history's; None with
    fewer than :data:`MIN_SAMPLES` history samples or none in the range."""
    idx = np.flatnonzero(sampled)
    h = int(np.searchsorted(idx, i0))
    if h < MIN_SAMPLES or h == len(idx):
        return None
    x = np.log10(rate[idx])
    c = cls[idx]
    overall = float(np.median(x[:h]))
    median, n = _class_medians(x[:h], c[:h])
    median = np.where(n > 0, median, overall)
    base = (n * median + SHRINK_RATE * overall) / (n + SHRINK_RATE)
    dev = x - base[c]
    return Rates(idx, dev, normal_scores(dev, dev[:h]), h)


def shifts(scores: Rates, sign: int, i0: int) -> list[Shift]:
    """Sustained drops (``sign`` -1) or spikes (+1) of the usage rate reaching into
    ``[i0, end)``: a CUSUM of the normal scores (:data:`CUSUM`), kept when the shift's median
    ratio to normal reaches :data:`MIN_RATIO`.

    Returns:
        The shifts, in time order.
    """
    ref, limit = CUSUM
    found: list[Shift] = []
    idx, dev = scores.idx, scores.dev
    for i, j in _cusum(scores.z, sign, ref, limit):
        a, b = int(idx[i]), int(idx[j - 1]) + 1
        if b <= i0:
            continue
        ratio = float(10 ** (np.median(dev[i:j])))
        if ratio**sign < MIN_RATIO:
            continue
        found.append(Shift(a, b, sign, ratio, j - i))
    return found


def chance(score: float) -> str:
    """How evidence states a run's score: its chance by the subject's own history."""
    return f"chance by its own history about 1e-{math.floor(score)}" if score < 99 else "chance ~0"
