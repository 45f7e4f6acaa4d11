"""Sums of the activity and link quality of a set of devices over a run of whole UTC hours.

The model is documented in ``activity.py`` and ``quality.py``; the arithmetic of each
device-hour is in ``kernel.py`` (numba), imported when the first sums are asked for.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .activity import BASES, SLOTS_PER_HOUR
from .hashing import EXPONENTIAL, GOLDEN
from .incidents import IDLE, OFF, segments
from .network import Network
from .quality import LOAD, LOSS_CUT, QUALITY_BASES

__all__ = ["Accumulated", "accumulate"]

_DEVICE_ARRAYS = ("key", "thr_top", "act_hour", "deact_hour", "full", "rate_up", "rate_down",
                  "qkey", "qlevel")  # fmt: skip

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


@dataclass
class Accumulated:
    """Sums over a set of devices and a run of whole UTC hours.

    Attributes:
        h0: the first hour (hours since 1970-01-01T00:00Z).
        hours: how many hours.
        totals: per base, the sum over devices per hour, counting only the part of each session
            inside the window the sums were asked for; shape ``(hours,)``. Only the bases
            asked for (and ``U`` and ``D`` with ``per_device``) are present.
        per_device: per device (in the order given), uplink plus downlink half-bytes inside the
            window; used to pick the top talker.
        profile: per base asked for, the sum over devices per 5-minute slot, shape
            ``(hours, 12)``, when asked for (the whole hours, not clipped to the window).
    """

    h0: int
    hours: int
    totals: dict[str, I64]
    per_device: I64
    profile: dict[str, F64] | None


@dataclass(frozen=True)
class _Hours:
    """What depends only on the hours: their numbers, hashed keys and day-time classes."""

    h0: int
    hours: int
    key: npt.NDArray[np.uint64]
    cls: I64


@functools.lru_cache(maxsize=16)
def _hours_of(h0: int, hours: int) -> _Hours:
    """Return hours ``[h0, h0 + hours)`` (memoised: a fan-out asks for the same ones)."""
    hr = np.arange(h0, h0 + hours, dtype=np.uint64)
    key = hr * GOLDEN  # wraps around (array arithmetic never warns)
    # the local (+05:30) hour of the week repeats every 168 hours
    week = _week_classes()
    first = (h0 + 5 + 3 * 24) % 168
    reps = -(-(first + hours) // 168)
    cls = np.tile(week, reps)[first : first + hours]
    key.setflags(write=False)
    cls.setflags(write=False)
    return _Hours(h0, hours, key, cls)


@functools.cache
def _week_classes() -> I64:
    """Return the online class of each local hour of a week starting Monday 00:00 (+05:30).

    0: weekday 08:00-20:00, 1: night, 2: weekend 08:00-20:00.
    """
    hour = np.arange(168) % 24
    weekend = np.arange(168) // 24 >= 5
    day = (hour >= 8) & (hour < 20)
    out: I64 = np.where(day, np.where(weekend, 2, 0), 1).astype(np.int64)
    return out


def _device_arrays(net: Network, dev: I64) -> list[npt.NDArray[Any]]:
    """Return the per-device arguments of the kernels, taken for ``dev`` (contiguous)."""
    arr = net.arrays
    take = [np.ascontiguousarray(arr[name][dev]) for name in _DEVICE_ARRAYS]
    take[1] = np.ascontiguousarray(take[1].T)  # thresholds: one row per hour class
    return take


def accumulate(
    net: Network,
    dev: I64,
    h0: int,
    hours: int,
    *,
    window: tuple[int, int] | None = None,
    profile: bool = False,
    bases: tuple[str, ...] = BASES,
    per_device: bool = True,
) -> Accumulated:
    """Sum the activity of devices ``dev`` over hours ``[h0, h0 + hours)``.

    Devices hit by an incident (``incidents.py``) are summed apart, one run of hours with one
    effect at a time: no session (nothing to add), no bytes, or scaled rates.

    Args:
        net: the network.
        dev: device indexes (into ``net.devices``).
        h0: first hour, in hours since the epoch (UTC).
        hours: number of hours (>= 1).
        window: ``(start, end)`` in epoch seconds, multiples of 300 inside the hours; totals
            then count only what lies inside it. ``None`` means the whole hours.
        profile: also return per-slot sums of ``bases`` (costs several times as much).
        bases: the bases to total (the others stay zero).
        per_device: also total each device's bytes (to pick a top talker).

    Returns:
        The sums.
    """
    hit = net.effects_on(dev, h0, h0 + hours)
    if not hit:
        return _accumulate(net, dev, h0, hours, window, profile, bases, per_device, 1.0)
    clean = np.ones(len(dev), dtype=bool)
    clean[list(hit)] = False
    out = _accumulate(net, dev[clean], h0, hours, window, profile, bases, per_device, 1.0)
    per_dev = np.zeros(len(dev), dtype=np.int64)
    per_dev[clean] = out.per_device
    out.per_device = per_dev
    if out.profile is None and profile:  # no clean device: start from zeros
        out.profile = {b: np.zeros((hours, SLOTS_PER_HOUR)) for b in bases}
    for pos, effects in hit.items():
        for a, b, mode, factor in segments(effects, h0, h0 + hours):
            if mode == OFF:
                continue
            part_window = None
            if window is not None:
                w0, w1 = max(window[0], a * 3600), min(window[1], b * 3600)
                if w1 <= w0:
                    continue
                part_window = (w0, w1)
            scale = 0.0 if mode == IDLE else factor
            part = _accumulate(net, dev[pos : pos + 1], a, b - a, part_window, profile, bases,
                               per_device, scale)  # fmt: skip
            for base, sums in part.totals.items():
                out.totals[base][a - h0 : b - h0] += sums
            if profile and part.profile is not None and out.profile is not None:
                for base, slots in part.profile.items():
                    out.profile[base][a - h0 : b - h0] += slots
            per_dev[pos] += part.per_device[0]
    return out


def _accumulate(
    net: Network,
    dev: I64,
    h0: int,
    hours: int,
    window: tuple[int, int] | None,
    profile: bool,
    bases: tuple[str, ...],
    per_device: bool,
    scale: float,
) -> Accumulated:
    """:func:`accumulate` without incidents; ``scale`` multiplies the rates (0: no bytes)."""
    from .kernel import device_detail, hourly_sums, quality_sums  # numba (an extra), on first use

    computed = set(bases) | ({"U", "D"} if per_device else set())
    sums = np.zeros((len(BASES), hours), dtype=np.int64)
    per_dev = np.zeros(len(dev), dtype=np.int64)
    hrs = _hours_of(h0, hours)
    key, thr, act, deact, full, up, down, qkey, qlevel = _device_arrays(net, dev)
    if scale != 1.0:
        up, down = up * scale, down * scale
    sessions = (key, thr, act, deact, full)  # what a device-hour's session needs
    span = (hrs.key, hrs.cls, h0)
    model = (EXPONENTIAL, LOAD, LOSS_CUT)
    prof: dict[str, F64] | None = None
    rates = bool(computed & {"U", "D"}) and scale > 0
    quality = bool(computed & set(QUALITY_BASES))
    if not (profile or per_device or window is not None):
        hourly_sums(*sessions, up, down, *span, rates, EXPONENTIAL, sums)
        if quality:
            quality_sums(*sessions, qkey, qlevel, *span, *model, sums)
    else:
        w0, w1 = window if window is not None else (h0 * 3600, (h0 + hours) * 3600)
        spread = np.array([k for k, b in enumerate(BASES) if profile and b in bases], np.int64)
        slots = np.zeros((len(BASES), hours if profile else 0, SLOTS_PER_HOUR), dtype=np.int64)
        device_detail(*sessions, up, down, qkey, qlevel, *span, w0, w1, rates, quality, *model,
                      sums, per_dev, slots, spread)  # fmt: skip
        if profile:
            prof = {b: slots[k].astype(np.float64) for k, b in enumerate(BASES) if b in bases}
    if not per_device:
        per_dev[:] = 0  # the detail kernel sums them with the rates
    totals = {b: sums[k] for k, b in enumerate(BASES) if b in computed}
    return Accumulated(h0, hours, totals, per_dev, prof)
