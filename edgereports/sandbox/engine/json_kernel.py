"""The fixed-width JSON writer's inner loop, compiled by numba (``render.py`` documents the layout).

Numpy writes each point's row template and stamp; this writes the numbers into the rows in
place, right-aligned and padded with JSON whitespace, exactly as ``render.value_matrix`` writes
them (integers when no value of the array has a fraction, else up to three decimals with
trailing zeros and a bare point blanked). Compiled on first use, cached on disk, and releases
the GIL. This module imports numba: import it lazily.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["number_layout", "write_numbers"]

_jit = numba.njit(cache=True, nogil=True)
_ZERO = 48
_SPACE = 32
_POINT = 46


@_jit
def _parts(v, frac):
    """Return the integer part and the thousandths of ``v`` (rounded half to even)."""
    whole = np.floor(v)
    ip = np.int64(whole)
    milli = np.int64(0)
    if frac:
        milli = np.int64(np.rint((v - whole) * 1000.0))
        if milli >= 1000:
            ip += 1
            milli = 0
    return ip, milli


@_jit
def number_layout(values):
    """Return ``(integer digits, has a fraction)`` of the widest number of ``values``.

    ``values`` must be finite and non-negative (as for ``value_matrix``).
    """
    frac = False
    for v in values:
        if v != np.floor(v):
            frac = True
            break
    top = np.int64(0)
    for v in values:
        ip, _ = _parts(v, frac)
        top = max(top, ip)
    digits = 1
    while top >= 10:
        top //= 10
        digits += 1
    return digits, frac


@_jit
def write_numbers(buf, pos, width, at_num, values, iw, frac):
    """Write the numbers of ``len(values)`` rows of ``width`` bytes that start at ``pos``.

    Each number (``iw`` integer digits, then ``.ddd`` when ``frac``) goes at ``at_num`` in
    its row; the rest of the rows is left as it is.
    """
    for i in range(len(values)):
        base = pos + i * width
        ip, milli = _parts(values[i], frac)
        at = base + at_num
        k = iw - 1
        while True:
            buf[at + k] = _ZERO + ip % 10
            ip //= 10
            k -= 1
            if ip == 0:
                break
        while k >= 0:
            buf[at + k] = _SPACE
            k -= 1
        if frac:
            d = at + iw
            if milli == 0:
                for j in range(4):
                    buf[d + j] = _SPACE
            else:
                buf[d] = _POINT
                buf[d + 1] = _ZERO + milli // 100
                buf[d + 2] = _ZERO + milli // 10 % 10 if milli % 100 else _SPACE
                buf[d + 3] = _ZERO + milli % 10 if milli % 10 else _SPACE
