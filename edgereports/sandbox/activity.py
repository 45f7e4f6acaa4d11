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
slots (slots that overlap the session). Each connected slot also gives one sample of the link
quality (``quality.py``): the bases ``L``, ``J`` and ``P`` sum those samples (latency, jitter,
loss, in eighths), so that a base divided by ``C`` is a mean per sample. Reporting metrics are
these bases, scaled.

Work is done in blocks of devices x hours; in a block each field (session start, length,
rates, connected slots, quality) is computed only when a requested base needs it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .hashing import GOLDEN, fmix64_inplace
from .network import Network
from .quality import QUALITY_BASES, samples
from .slots import SLOT, SLOTS_PER_HOUR, slot_sums

__all__ = ["ACTIVITY_BASES", "BASES", "SLOT", "SLOTS_PER_HOUR", "Accumulated", "accumulate"]

ACTIVITY_BASES = ("T", "U", "D", "C")
BASES = ACTIVITY_BASES + QUALITY_BASES
#: Elements (device-hours) per block: large enough to amortise numpy's per-call cost, small
#: enough to stay in the CPU caches.
CHUNK_ELEMENTS = 16384
_FACTORS = -np.log((np.arange(4096) + 0.5) / 4096.0)  # exponential, mean about 1
_FULL_HOUR_CUT = 328  # a full-hour device has a shorter session with chance 328/4096
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

    def part(self, a: int, b: int) -> _Hours:
        """Return hours ``[h0 + a, h0 + b)``."""
        return _Hours(self.h0 + a, b - a, self.key[a:b], self.cls[a:b])

    @classmethod
    def of(cls, h0: int, hours: int) -> _Hours:
        """Return hours ``[h0, h0 + hours)`` (memoised: a fan-out asks for the same ones)."""
        return _hours_of(h0, hours)


@functools.lru_cache(maxsize=16)
def _hours_of(h0: int, hours: int) -> _Hours:
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


class _Work:
    """Buffers reused by the blocks of one :func:`accumulate` call (fresh memory is costly)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._buffers: dict[str, npt.NDArray[Any]] = {}

    def get(self, name: str, dtype: type[Any], shape: tuple[int, int]) -> npt.NDArray[Any]:
        """Return buffer ``name`` as an uninitialised array of ``shape``."""
        buf = self._buffers.get(name)
        if buf is None or buf.dtype != dtype:
            buf = self._buffers[name] = np.empty(self.size, dtype=dtype)
        return buf[: shape[0] * shape[1]].reshape(shape)


class _Block:
    """The activity of devices ``dev`` over hours ``hrs``; each field is computed on first use.

    Shapes are ``(devices, hours)``; ``d`` is 0 where the device is offline. Fields live in the
    buffers of ``work`` and are valid until the next block of the same call.
    """

    def __init__(
        self, net: Network, dev: I64, hrs: _Hours, window: tuple[int, int] | None, work: _Work
    ) -> None:
        self.net, self.dev, self.hrs, self.window, self.work = net, dev, hrs, window, work
        self.shape = (len(dev), hrs.hours)
        arr = net.arrays
        bits = self._buf("bits", np.uint64)
        np.bitwise_xor(arr["key"][dev][:, None], hrs.key[None, :], out=bits)
        scratch = self._buf("scratch", np.uint64)
        fmix64_inplace(bits, scratch)
        self.bits = bits
        # the top 12 bits below the device's threshold (stored shifted to the top)
        np.take(arr["thr_top"][dev], hrs.cls, axis=1, out=scratch, mode="clip")
        online = np.less(bits, scratch, out=self._buf("online", np.bool_))
        first = arr["act_hour"][dev] - hrs.h0
        stop = arr["deact_hour"][dev] - hrs.h0
        rows = np.flatnonzero((first > 0) | (stop < hrs.hours))
        if len(rows):
            j = np.arange(hrs.hours)
            online[rows] &= (j >= first[rows, None]) & (j < stop[rows, None])
        self.online = online

    def _buf(self, name: str, dtype: type[Any]) -> npt.NDArray[Any]:
        return self.work.get(name, dtype, self.shape)

    def _bits12(self, shift: int) -> I64:
        """Return the 12 bits of the hash starting at bit ``shift`` (in the scratch buffer)."""
        scratch = self._buf("scratch", np.uint64)
        np.right_shift(self.bits, np.uint64(shift), out=scratch)
        scratch &= _MASK12
        out: I64 = scratch.view(np.int64)
        return out

    def _field(self, shift: int, name: str) -> I32:
        """Return the 12 bits of the hash starting at bit ``shift``, into buffer ``name``."""
        out: I32 = self._buf(name, np.int32)
        np.copyto(out, self._bits12(shift), casting="unsafe")
        return out

    @functools.cached_property
    def d(self) -> I32:
        """Session length in seconds (0 offline)."""
        u_d = self._field(28, "u_d")
        d: I32 = np.multiply(u_d, 3540, out=self._buf("d", np.int32))
        d >>= 12
        d += 60
        full = self.net.arrays["full"][self.dev]
        if full.any():
            cut = np.greater_equal(u_d, _FULL_HOUR_CUT, out=self._buf("flag", np.bool_))
            if not full.all():
                cut &= full[:, None]
            np.copyto(d, 3600, where=cut)
        np.multiply(d, self.online, out=d)
        return d

    @functools.cached_property
    def s(self) -> I32:
        """Session start, seconds into the hour."""
        s = self._field(40, "s")
        room = np.subtract(3601, self.d, out=self._buf("tmp32", np.int32))
        s *= room
        s >>= 12
        return s

    def _rate(self, shift: int, name: str) -> I32:
        """Return a rate in half-bytes per second: the device's mean times a factor, doubled."""
        factor = self._bits12(shift)
        rate = np.take(_FACTORS, factor, out=self._buf("rate", np.float64), mode="clip")
        rate *= self.net.arrays["rate_" + ("up" if name == "ru" else "down")][self.dev][:, None]
        out: I32 = self._buf(name, np.int32)
        np.copyto(out, rate, casting="unsafe")
        out <<= 1
        return out

    @functools.cached_property
    def ru(self) -> I32:
        """Uplink rate in half-bytes per second."""
        ru = self._rate(16, "ru")
        scratch = self._buf("scratch", np.uint64)
        np.bitwise_and(self.bits, _LOW4, out=scratch)
        ru += np.equal(scratch, 0, out=self._buf("flag", np.bool_))
        np.maximum(ru, 2, out=ru)
        return ru

    @functools.cached_property
    def rd(self) -> I32:
        """Downlink rate in half-bytes per second."""
        rd = self._rate(4, "rd")
        np.maximum(rd, 2, out=rd)
        return rd

    @functools.cached_property
    def start(self) -> I64:
        """Session start in epoch seconds (only used with a window)."""
        hours = np.arange(self.hrs.h0, self.hrs.h0 + self.hrs.hours, dtype=np.int64) * 3600
        out: I64 = hours[None, :] + self.s
        return out

    @functools.cached_property
    def ov(self) -> npt.NDArray[np.integer]:
        """Seconds of the session inside the window (the whole session without one)."""
        if self.window is None:
            return self.d
        w0, w1 = self.window
        start = self.start
        ov = np.clip(np.minimum(start + self.d, w1) - np.maximum(start, w0), 0, None)
        out: npt.NDArray[np.integer] = ov * (self.d > 0)
        return out

    @functools.cached_property
    def conn(self) -> npt.NDArray[np.integer]:
        """Slots inside the window that overlap the session."""
        d, s = self.d, self.s
        if self.window is None:
            # slots touched by [s, s + d): (s + d - 1) // 300 - s // 300 + 1 when d > 0
            conn: I32 = np.add(s, d, out=self._buf("conn", np.int32))
            conn -= 1
            conn //= SLOT
            conn -= np.floor_divide(s, SLOT, out=self._buf("tmp32", np.int32))
            conn += 1
            conn *= np.greater(d, 0, out=self._buf("flag", np.bool_))
            return conn
        w0, w1 = self.window
        start = self.start
        first_slot = np.maximum(start // SLOT, w0 // SLOT)
        last_slot = np.minimum((start + d - 1) // SLOT, w1 // SLOT - 1)
        out: npt.NDArray[np.integer] = np.clip(last_slot - first_slot + 1, 0, None) * (d > 0)
        return out

    @functools.cached_property
    def quality(self) -> dict[str, I32]:
        """Latency, jitter and loss samples (``quality.py``) by base."""
        arr = self.net.arrays
        lat, jit, loss = samples(arr["qkey"][self.dev], arr["qlevel"][self.dev],
                                 self.hrs.key, self.hrs.cls)  # fmt: skip
        return {"L": lat, "J": jit, "P": loss}

    def slot_weights(
        self, bases: tuple[str, ...]
    ) -> tuple[dict[str, I32 | None], dict[str, I32 | None]]:
        """Return the time-weighted and per-connected-slot weights of ``bases``."""
        timed: dict[str, I32 | None] = {}
        connected: dict[str, I32 | None] = {}
        for b in bases:
            if b in ("T", "C"):
                (timed if b == "T" else connected)[b] = None
            elif b in ("U", "D"):
                timed[b] = self.ru if b == "U" else self.rd
            else:
                connected[b] = self.quality[b]
        return timed, connected

    def weighted(self, base: str) -> I64:
        """Return the base's amount per device-hour inside the window (int64, a buffer)."""
        out: I64 = self._buf("amount", np.int64)
        if base in ("U", "D"):
            np.multiply(self.ru if base == "U" else self.rd, self.ov, out=out, dtype=np.int64)
        else:
            np.multiply(self.quality[base], self.conn, out=out, dtype=np.int64)
        return out


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
        profile: also return per-slot sums of ``bases`` (costs about twice as much).
        bases: the bases to total (the others stay zero).
        per_device: also total each device's bytes (to pick a top talker).

    Returns:
        The sums.
    """
    computed = set(bases) | ({"U", "D"} if per_device else set())
    totals = {b: np.zeros(hours, dtype=np.int64) for b in BASES if b in computed}
    per_dev = np.zeros(len(dev), dtype=np.int64)
    prof: dict[str, F64] | None = (
        {b: np.zeros((hours, SLOTS_PER_HOUR)) for b in bases} if profile else None
    )
    hrs = _Hours.of(h0, hours)
    span = min(hours, CHUNK_ELEMENTS)
    parts = -(-hours // span)
    span = -(-hours // parts)
    step = max(1, CHUNK_ELEMENTS // span)
    work = _Work(min(len(dev), step) * span)
    for lo in range(0, len(dev), step):
        chunk = dev[lo : lo + step]
        for a in range(0, hours, span):
            b = min(hours, a + span)
            blk = _Block(net, chunk, hrs.part(a, b), window, work)
            if "T" in bases:
                totals["T"][a:b] += blk.ov.sum(axis=0, dtype=np.int64)
            if "C" in bases:
                totals["C"][a:b] += blk.conn.sum(axis=0, dtype=np.int64)
            for base in ("U", "D", *QUALITY_BASES):
                if base in computed:
                    amount = blk.weighted(base)
                    totals[base][a:b] += amount.sum(axis=0)
                    if per_device and base in "UD":
                        per_dev[lo : lo + step] += amount.sum(axis=1)
            if prof is not None:
                part = slot_sums(blk.s, blk.d, b - a, *blk.slot_weights(bases))
                for base in bases:
                    prof[base][a:b] += part[base]
    return Accumulated(h0, hours, totals, per_dev, prof)
