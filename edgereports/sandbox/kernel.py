"""The device-hour kernels: activity and link quality of every device-hour, compiled by numba.

``activity.py`` and ``quality.py`` document the model; this is its arithmetic. For each device
and UTC hour it draws the 64-bit counter-based value ``fmix64(device key ^ hour key)`` and cuts
it into 12-bit uniforms (online: bits 52-63, session length: 28-39, start: 40-51, uplink rate:
16-27 with bits 0-3 for a half byte, downlink rate: 4-15); the quality draw does the same with
the device's quality key. The numbers depend only on (seed, device, hour), never on how the
work is cut or which kernel does it.

Two kernels share the per-device-hour functions:

- :func:`hourly_sums`, the fast path: hours outer, devices inner, nothing kept but the sums per
  hour (compiled to SIMD code: well under a nanosecond per device-hour for the activity);
- :func:`device_detail`, for everything else: a window inside the hours, sums per device (the
  top talker) and sums per 5-minute slot (the profile behind MAX, MIN and PERCENTILE).

They are compiled on first use and cached on disk (``cache=True``) and release the GIL, so a
threaded server computes answers on every core. This module imports numba: import it lazily.
"""

from __future__ import annotations

import numba
import numpy as np

from .activity import FULL_HOUR_CUT
from .hashing import FMIX_M1, FMIX_M2
from .quality import JITTER_SPAN, MAX_LOSS

__all__ = ["device_detail", "hourly_sums"]

_S33 = np.uint64(33)
_MASK = np.uint64(0xFFF)

_jit = numba.njit(cache=True, nogil=True)


@_jit
def _fmix64(x):
    x ^= x >> _S33
    x *= FMIX_M1
    x ^= x >> _S33
    x *= FMIX_M2
    x ^= x >> _S33
    return x


@_jit
def _u12(x, shift):
    return np.int64((x >> np.uint64(shift)) & _MASK)


@_jit
def _session(x, threshold, act, deact, full, hour):
    """Return the session ``(start, length)`` in seconds into the hour (length 0: offline)."""
    u_d = _u12(x, 28)
    d = ((u_d * 3540) >> 12) + 60
    d = 3600 if full & (u_d >= FULL_HOUR_CUT) else d
    online = (x < threshold) & (act <= hour) & (hour < deact)
    d = d if online else 0
    s = (_u12(x, 40) * (3601 - d)) >> 12
    return s, d


@_jit
def _slots(s, d):
    """Return the 5-minute slots ``[s, s + d)`` touches (0 when d is 0); ``x // 300`` exact."""
    last = s + d - 1 + (d == 0)
    return (((last * 55925) >> 24) - ((s * 55925) >> 24) + 1) * (d > 0)


@_jit
def _rates(x, up, down, factors):
    """Return the uplink and downlink rates in half-bytes per second."""
    ru = np.int64(factors[_u12(x, 16)] * up) << 1
    ru = max(ru + ((x & np.uint64(0xF)) == 0), 2)
    rd = max(np.int64(factors[_u12(x, 4)] * down) << 1, 2)
    return ru, rd


@_jit
def _quality(q, level, load, cut, factors):
    """Return the latency, jitter and loss samples (eighths) of a quality draw ``q``."""
    lat = np.int64((factors[np.int64(q >> np.uint64(52))] * 0.3 + load) * level)
    jit = np.int64((np.float64(_u12(q, 40)) * JITTER_SPAN + 0.04) * lat)
    size = factors[_u12(q, 4)] * 3.0 + 1.0
    loss = np.int64(min(size, MAX_LOSS)) * (_u12(q, 16) < cut)
    return lat, jit, loss


@_jit
def hourly_sums(
    key, thr, act, deact, full, up, down, qkey, qlevel, hkey, cls, h0, rates, quality,
    factors, load, loss_cut, totals,
):  # fmt: skip
    """Add the sums per hour of T, U, D, C, L, J, P (rows of ``totals``) over the devices.

    Per-device arrays are already taken for the devices; ``thr`` is ``(3, devices)`` (one row
    per hour class). ``rates``/``quality``: also sum U and D / L, J and P.
    """
    for j in range(hkey.shape[0]):
        hour = h0 + j
        c = cls[j]
        tc = thr[c]
        t_sum = u_sum = d_sum = c_sum = 0
        for i in range(key.shape[0]):
            s, d = _session(_fmix64(key[i] ^ hkey[j]), tc[i], act[i], deact[i], full[i], hour)
            t_sum += d
            c_sum += _slots(s, d)
        totals[0, j] += t_sum
        totals[3, j] += c_sum
        if rates:
            for i in range(key.shape[0]):
                x = _fmix64(key[i] ^ hkey[j])
                s, d = _session(x, tc[i], act[i], deact[i], full[i], hour)
                ru, rd = _rates(x, up[i], down[i], factors)
                u_sum += ru * d
                d_sum += rd * d
            totals[1, j] += u_sum
            totals[2, j] += d_sum
        if quality:
            l_sum = j_sum = p_sum = 0
            for i in range(key.shape[0]):
                s, d = _session(_fmix64(key[i] ^ hkey[j]), tc[i], act[i], deact[i], full[i], hour)
                conn = _slots(s, d)
                lat, jit, loss = _quality(
                    _fmix64(qkey[i] ^ hkey[j]), qlevel[i], load[c], loss_cut[c], factors
                )
                l_sum += lat * conn
                j_sum += jit * conn
                p_sum += loss * conn
            totals[4, j] += l_sum
            totals[5, j] += j_sum
            totals[6, j] += p_sum


@_jit
def _div300(x):
    """Return ``x // 300`` for ``0 <= x < 59099`` (a multiply and a shift)."""
    return (x * 55925) >> 24


@_jit
def device_detail(
    key, thr, act, deact, full, up, down, qkey, qlevel, hkey, cls, h0, w0, w1, rates, quality,
    factors, load, loss_cut, totals, per_dev, profile, spread,
):  # fmt: skip
    """Like :func:`hourly_sums`, counting only ``[w0, w1)`` (epoch seconds).

    Also adds each device's uplink plus downlink half-bytes to ``per_dev`` (with ``rates``)
    and, for the bases
    flagged in ``spread``, the sums per 5-minute slot of the whole hours to ``profile``
    (``(7, hours, 12)``): seconds (T), half-bytes (U, D) inside the slot, and one (C) or the
    quality sample (L, J, P) per slot the session overlaps.
    """
    s0 = w0 // 300
    s1 = w1 // 300
    spreading = spread.any()
    for j in range(hkey.shape[0]):
        hour = h0 + j
        c = cls[j]
        t_sum = u_sum = d_sum = c_sum = l_sum = j_sum = p_sum = 0
        for i in range(key.shape[0]):
            x = _fmix64(key[i] ^ hkey[j])
            s, d = _session(x, thr[c, i], act[i], deact[i], full[i], hour)
            start = hour * 3600 + s
            ov = max(min(start + d, w1) - max(start, w0), 0) * (d > 0)
            first = max(hour * 12 + _div300(s), s0)
            last = min(hour * 12 + _div300(s + d - 1 + (d == 0)), s1 - 1)
            conn = max(last - first + 1, 0) * (d > 0)
            ru = rd = lat = jit = loss = 0
            if rates:
                ru, rd = _rates(x, up[i], down[i], factors)
            if quality:
                q = _fmix64(qkey[i] ^ hkey[j])
                lat, jit, loss = _quality(q, qlevel[i], load[c], loss_cut[c], factors)
            t_sum += ov
            u_sum += ru * ov
            d_sum += rd * ov
            c_sum += conn
            l_sum += lat * conn
            j_sum += jit * conn
            p_sum += loss * conn
            per_dev[i] += (ru + rd) * ov
            if spreading and d > 0:
                for k in range(_div300(s), _div300(s + d - 1) + 1):
                    secs = min(s + d, 300 * (k + 1)) - max(s, 300 * k)
                    weights = (secs, secs * ru, secs * rd, 1, lat, jit, loss)
                    for b in range(7):
                        if spread[b]:
                            profile[b, j, k] += weights[b]
        totals[0, j] += t_sum
        totals[1, j] += u_sum
        totals[2, j] += d_sum
        totals[3, j] += c_sum
        totals[4, j] += l_sum
        totals[5, j] += j_sum
        totals[6, j] += p_sum
