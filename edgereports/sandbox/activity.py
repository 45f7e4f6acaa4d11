"""Per-device activity of the synthetic network, generated on demand and aggregated with numpy.

Model (all integers, so sums are exact):

- Time is cut into UTC hours and each hour into twelve 5-minute slots, aligned in UTC.
- In each hour a device is online or not. The chance depends on its profile, the local hour of
  day in India (+05:30; day is 08:00 to 20:00) and the weekday, and it is zero while its SIM is
  not active. An online device has one session ``[s, s + d)`` seconds into the hour; ``camera``
  and ``gateway`` devices are mostly online for the whole hour.
- During the session it sends and receives at constant rates ``ru`` and ``rd``, counted in
  half-bytes per second (so a byte count can end in ``.5``, as the live service's can).
- Every value is a pure function of (seed, device, hour): a MurmurHash3 ``fmix64`` of the
  device's key and the hour number, cut into 12-bit uniforms (``hashing.py``).

From a session four additive *bases* follow, for any device, slot or set of either:
``T`` seconds online, ``U`` uplink half-bytes, ``D`` downlink half-bytes and ``C`` connected
slots (slots that overlap the session). Reporting metrics are these bases, scaled.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .hashing import GOLDEN, fmix64
from .network import Network

__all__ = ["BASES", "Accumulated", "accumulate"]

BASES = ("T", "U", "D", "C")
SLOT = 300
SLOTS_PER_HOUR = 12
CHUNK_ELEMENTS = 16384  # small blocks stay in the CPU caches
_FACTORS = -np.log((np.arange(4096) + 0.5) / 4096.0)  # exponential, mean about 1
_FULL_HOUR_CUT = 328  # a full-hour device has a shorter session with chance 328/4096
_SHIFT = tuple(np.uint64(52 - 12 * k) for k in range(5))
_MASK12 = np.uint64(0xFFF)
_LOW4 = np.uint64(0xF)

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
F64 = npt.NDArray[np.float64]


@dataclass
class Accumulated:
    """Sums over a set of devices and a run of whole UTC hours.

    Attributes:
        h0: the first hour (hours since 1970-01-01T00:00Z).
        hours: how many hours.
        totals: per base, the sum over devices per hour, counting only the part of each session
            inside the window the sums were asked for; shape ``(hours,)``.
        per_device: per device (in the order given), uplink plus downlink half-bytes inside the
            window; used to pick the top talker.
        profile: per base, the sum over devices per 5-minute slot, shape ``(hours, 12)``, when
            asked for (the whole hours, not clipped to the window).
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

    def part(self, a: int, b: int) -> _Hours:
        """Return hours ``[h0 + a, h0 + b)``."""
        return _Hours(self.h0 + a, b - a, self.key[a:b], self.cls[a:b])

    @classmethod
    def of(cls, h0: int, hours: int) -> _Hours:
        hr = np.arange(h0, h0 + hours, dtype=np.uint64)
        with np.errstate(over="ignore"):
            key = hr * GOLDEN
        # the local (+05:30) hour of the week repeats every 168 hours
        week = _week_classes()
        first = (h0 + 5 + 3 * 24) % 168
        reps = -(-(first + hours) // 168)
        return cls(h0, hours, key, np.tile(week, reps)[first : first + hours])


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


def _sessions(net: Network, dev: I64, hrs: _Hours) -> tuple[I32, I32, I32, I32]:
    """Return ``s, d, ru, rd`` (devices x hours, int32; ``d == 0`` where offline)."""
    arr = net.arrays
    with np.errstate(over="ignore"):
        bits = fmix64(arr["key"][dev][:, None] ^ hrs.key[None, :])
    online = (bits >> _SHIFT[0]) < arr["thr"][dev].astype(np.uint64)[:, hrs.cls]
    first = arr["act_hour"][dev] - hrs.h0
    stop = arr["deact_hour"][dev] - hrs.h0
    for i in np.flatnonzero((first > 0) | (stop < hrs.hours)):
        online[i, : max(0, min(int(first[i]), hrs.hours))] = False
        online[i, max(0, min(int(stop[i]), hrs.hours)) :] = False
    u_d = _field(bits, 2)
    d = 60 + ((u_d * 3540) >> 12)
    rows = np.flatnonzero(arr["full"][dev])
    if len(rows):
        d[rows] = np.where(u_d[rows] >= _FULL_HOUR_CUT, 3600, d[rows])
    np.multiply(d, online, out=d)
    s = (_field(bits, 1) * (3601 - d)) >> 12
    ru = (_FACTORS[_field(bits, 3)] * arr["rate_up"][dev][:, None]).astype(np.int32)
    ru <<= 1
    ru += (bits & _LOW4) == 0
    rd = (_FACTORS[_field(bits, 4)] * arr["rate_down"][dev][:, None]).astype(np.int32)
    rd <<= 1
    np.maximum(ru, 2, out=ru)
    np.maximum(rd, 2, out=rd)
    return s, d, ru, rd


def _field(bits: npt.NDArray[np.uint64], k: int) -> I32:
    """Return the 12-bit field ``k`` (0 is the top one) of hashed bits as int32."""
    return ((bits >> _SHIFT[k]) & _MASK12).astype(np.int32)


def _profile(s: I32, d: I32, ru: I32, rd: I32, hours: int) -> dict[str, F64]:
    """Return per-slot sums over devices, ``(hours, 12)`` per base, via difference arrays."""
    flat = np.flatnonzero(d)
    j = flat % hours
    s_o, d_o = s.ravel()[flat], d.ravel()[flat]
    a = s_o // SLOT
    b = (s_o + d_o - 1) // SLOT
    row = j * (SLOTS_PER_HOUR + 1)
    size = hours * (SLOTS_PER_HOUR + 1)
    first = (np.minimum(s_o + d_o, SLOT * (a + 1)) - s_o).astype(np.float64)
    last = ((s_o + d_o - SLOT * b) * (b > a)).astype(np.float64)
    mid = (SLOT * (b > a + 1)).astype(np.float64)

    def spread(weight: F64 | None) -> F64:
        w_first = first if weight is None else first * weight
        w_last = last if weight is None else last * weight
        w_mid = mid if weight is None else mid * weight
        direct = np.bincount(row + a, w_first, size) + np.bincount(row + b, w_last, size)
        diff = np.bincount(row + a + 1, w_mid, size) - np.bincount(row + b, w_mid, size)
        out = direct.reshape(hours, -1) + np.cumsum(diff.reshape(hours, -1), axis=1)
        return np.ascontiguousarray(out[:, :SLOTS_PER_HOUR])

    conn = np.bincount(row + a, None, size) - np.bincount(row + b + 1, None, size)
    return {
        "T": spread(None),
        "U": spread(ru.ravel()[flat].astype(np.float64)),
        "D": spread(rd.ravel()[flat].astype(np.float64)),
        "C": np.ascontiguousarray(
            np.cumsum(conn.reshape(hours, -1), axis=1)[:, :SLOTS_PER_HOUR].astype(np.float64)
        ),
    }


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

    Args:
        net: the network.
        dev: device indexes (into ``net.devices``).
        h0: first hour, in hours since the epoch (UTC).
        hours: number of hours (>= 1).
        window: ``(start, end)`` in epoch seconds, multiples of 300 inside the hours; totals
            then count only what lies inside it. ``None`` means the whole hours.
        profile: also return per-slot sums (costs about twice as much).
        bases: the bases to total (the others stay zero).
        per_device: also total each device's bytes (to pick a top talker).

    Returns:
        The sums.
    """
    totals = {b: np.zeros(hours, dtype=np.int64) for b in BASES}
    per_dev = np.zeros(len(dev), dtype=np.int64)
    prof: dict[str, F64] | None = (
        {b: np.zeros((hours, SLOTS_PER_HOUR)) for b in BASES} if profile else None
    )
    hrs = _Hours.of(h0, hours)
    need_bytes = per_device or "U" in bases or "D" in bases
    span = min(hours, CHUNK_ELEMENTS)
    step = max(1, CHUNK_ELEMENTS // span)
    for lo in range(0, len(dev), step):
        chunk = dev[lo : lo + step]
        for a in range(0, hours, span):
            b = min(hours, a + span)
            s, d, ru, rd = _sessions(net, chunk, hrs.part(a, b))
            if window is None:
                ov = d
                if "C" in bases:
                    conn = (s + d - 1) // SLOT - s // SLOT + 1
                    conn *= d > 0
            else:
                w0, w1 = window
                start = (np.arange(h0 + a, h0 + b, dtype=np.int64) * 3600)[None, :] + s
                ov = np.clip(np.minimum(start + d, w1) - np.maximum(start, w0), 0, None) * (d > 0)
                first_slot = np.maximum(start // SLOT, w0 // SLOT)
                last_slot = np.minimum((start + d - 1) // SLOT, w1 // SLOT - 1)
                conn = np.clip(last_slot - first_slot + 1, 0, None) * (d > 0)
            if "T" in bases:
                totals["T"][a:b] += ov.sum(axis=0, dtype=np.int64)
            if "C" in bases:
                totals["C"][a:b] += conn.sum(axis=0, dtype=np.int64)
            if need_bytes:
                up = np.multiply(ru, ov, dtype=np.int64)
                down = np.multiply(rd, ov, dtype=np.int64)
                totals["U"][a:b] += up.sum(axis=0)
                totals["D"][a:b] += down.sum(axis=0)
                if per_device:
                    per_dev[lo : lo + step] += up.sum(axis=1) + down.sum(axis=1)
            if prof is not None:
                part = _profile(s, d, ru, rd, b - a)
                for base in BASES:
                    prof[base][a:b] += part[base]
    return Accumulated(h0, hours, totals, per_dev, prof)
