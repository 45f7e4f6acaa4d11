"""Per-slot sums of sessions: how much of each device-hour falls into each 5-minute slot.

A session ``[s, s + d)`` seconds into an hour touches slots ``s // 300`` to
``(s + d - 1) // 300``. Two kinds of sums are spread over those slots with difference arrays
(no loop over sessions):

- *time-weighted*: the seconds of the session inside each slot, times a weight per second
  (none for seconds online, a rate for bytes);
- *per connected slot*: one per slot the session overlaps, times a weight (none for connected
  slots, a quality sample for latency, jitter and loss).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["SLOT", "SLOTS_PER_HOUR", "slot_sums"]

SLOT = 300
SLOTS_PER_HOUR = 12

I32 = npt.NDArray[np.int32]
F64 = npt.NDArray[np.float64]


def slot_sums(
    s: I32,
    d: I32,
    hours: int,
    timed: dict[str, I32 | None],
    connected: dict[str, I32 | None],
) -> dict[str, F64]:
    """Return per-slot sums over devices, ``(hours, 12)`` per base.

    Args:
        s: session starts, seconds into the hour, ``(devices, hours)``.
        d: session lengths in seconds (0 where offline), the same shape.
        hours: the number of hours (columns).
        timed: time-weighted bases and their weight per second (``None``: 1).
        connected: per-connected-slot bases and their weight (``None``: 1).

    Returns:
        The sums by base (integral values as float64).
    """
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

    def weight_of(w: I32 | None) -> F64 | None:
        return None if w is None else w.ravel()[flat].astype(np.float64)

    def spread(weight: F64 | None) -> F64:
        w_first = first if weight is None else first * weight
        w_last = last if weight is None else last * weight
        w_mid = mid if weight is None else mid * weight
        direct = np.bincount(row + a, w_first, size) + np.bincount(row + b, w_last, size)
        diff = np.bincount(row + a + 1, w_mid, size) - np.bincount(row + b, w_mid, size)
        out = direct.reshape(hours, -1) + np.cumsum(diff.reshape(hours, -1), axis=1)
        return np.ascontiguousarray(out[:, :SLOTS_PER_HOUR])

    def count(weight: F64 | None) -> F64:
        diff = np.bincount(row + a, weight, size) - np.bincount(row + b + 1, weight, size)
        out = np.cumsum(diff.reshape(hours, -1), axis=1)[:, :SLOTS_PER_HOUR]
        return np.ascontiguousarray(out.astype(np.float64))

    sums = {base: spread(weight_of(w)) for base, w in timed.items()}
    sums.update({base: count(weight_of(w)) for base, w in connected.items()})
    return sums
