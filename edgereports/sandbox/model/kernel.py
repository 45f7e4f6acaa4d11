"""The device-hour kernels: activity and link quality of every device-hour, compiled by numba.

``activity.py`` and ``quality.py`` document the model; this is its arithmetic. For each device
and UTC hour it draws the 64-bit counter-based value ``fmix64(device key ^ hour key)`` and cuts
it into 12-bit uniforms (online: bits 52-63, session length: 28-39, start: 40-51, uplink rate:
16-27 with bits 0-3 for a half byte, downlink rate: 4-15); the quality draw does the same with
the device's quality key. The numbers depend only on (seed, device, hour), never on how the
work is cut or which kernel does it.

Compiled on first use, cached on disk (``cache=True``), and releasing the GIL, so a threaded
server computes answers on every core. This module imports numba: import it lazily.
"""

from __future__ import annotations

import numba
import numpy as np

from .activity import FULL_HOUR_CUT
from .hashing import FMIX_M1, FMIX_M2
from .quality import JITTER_SPAN, MAX_LOSS

__all__ = ["device_detail", "hourly_sums", "quality_sums"]

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
def _div300(x):
    """Return ``x // 300`` for ``0 <= x < 59099`` (a multiply and a shift)."""
    return (x * 55925) >> 24


@_jit
def _slots(s, d):
    """Return how many 5-minute slots the session ``[s, s + d)`` touches (0 when d is 0)."""
    return (_div300(s + d - 1 + (d == 0)) - _div300(s) + 1) * (d > 0)


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
def _threshold(t0, t1, t2, c):
    return t0 if c == 0 else (t1 if c == 1 else t2)


@_jit
def hourly_sums(key, thr, act, deact, full, up, down, hkey, cls, h0, rates, factors, totals):
    """Add the sums per hour of T, C and (with ``rates``) U, D over the devices to ``totals``.

    Per-device arrays are already taken for the devices; ``thr`` is ``(3, devices)`` (one row
    per hour class); ``act`` and ``deact`` are hour numbers; ``totals`` has the rows of
    ``activity.BASES``. (Loop orders are the ones that compile to SIMD code: T and C devices
    outer, which is fast for one device too; the rates hours outer.)
    """
    hours = hkey.shape[0]
    for i in range(key.shape[0]):
        k, a, z, f = key[i], act[i] - h0, deact[i] - h0, full[i]
        t0, t1, t2 = thr[0, i], thr[1, i], thr[2, i]
        for j in range(hours):
            tc = _threshold(t0, t1, t2, cls[j])
            s, d = _session(_fmix64(k ^ hkey[j]), tc, a, z, f, j)
            totals[0, j] += d
            totals[3, j] += _slots(s, d)
    if rates:
        for j in range(hours):
            c = cls[j]
            u_sum = d_sum = 0
            for i in range(key.shape[0]):
                x = _fmix64(key[i] ^ hkey[j])
                s, d = _session(x, thr[c, i], act[i] - h0, deact[i] - h0, full[i], j)
                ru, rd = _rates(x, up[i], down[i], factors)
                u_sum += ru * d
                d_sum += rd * d
            totals[1, j] += u_sum
            totals[2, j] += d_sum


@_jit
def quality_sums(key, thr, act, deact, full, qkey, qlevel, hkey, cls, h0, factors, load,
                 loss_cut, totals):  # fmt: skip
    """Add the sums per hour of L, J and P over the devices to ``totals`` (see above)."""
    for j in range(hkey.shape[0]):
        c = cls[j]
        l_sum = j_sum = p_sum = 0
        for i in range(key.shape[0]):
            s, d = _session(_fmix64(key[i] ^ hkey[j]), thr[c, i], act[i] - h0, deact[i] - h0,
                            full[i], j)  # fmt: skip
            conn = _slots(s, d)
            q = _fmix64(qkey[i] ^ hkey[j])
            lat, jit, loss = _quality(q, qlevel[i], load[c], loss_cut[c], factors)
            l_sum += lat * conn
            j_sum += jit * conn
            p_sum += loss * conn
        totals[4, j] += l_sum
        totals[5, j] += j_sum
        totals[6, j] += p_sum


@_jit
def _spread(diff, rows, s, d, weights):
    """Add a session ``[s, s + d)`` (d > 0) to one hour's per-slot differences.

    Rows 0-2 (T, U, D) get the seconds inside each slot times the weight, rows 3-6 (C, L, J, P)
    the weight once per slot the session overlaps.
    """
    a = _div300(s)
    b = _div300(s + d - 1)
    head = min(s + d, 300 * (a + 1)) - s
    tail = s + d - 300 * b
    for r in rows:
        w = weights[r]
        if r < 3 and a == b:
            diff[r, a] += d * w
            diff[r, a + 1] -= d * w
        elif r < 3:  # head, full slots of 300 s, tail
            diff[r, a] += head * w
            diff[r, a + 1] += (300 - head) * w
            diff[r, b] += (tail - 300) * w
            diff[r, b + 1] -= tail * w
        else:
            diff[r, a] += w
            diff[r, b + 1] -= w


@_jit
def device_detail(
    key, thr, act, deact, full, up, down, qkey, qlevel, hkey, cls, h0, w0, w1, rates, quality,
    factors, load, loss_cut, totals, per_dev, profile, spread,
):  # fmt: skip
    """Like :func:`hourly_sums`, counting only ``[w0, w1)`` (epoch seconds).

    Also adds each device's uplink plus downlink half-bytes to ``per_dev`` (with ``rates``)
    and, for the bases whose rows are listed in ``spread``, the sums per 5-minute slot of the
    whole hours to ``profile`` (``(7, hours, 12)``): seconds (T), half-bytes (U, D) inside the
    slot, and one (C) or the quality sample (L, J, P) per slot the session overlaps.
    """
    s0 = w0 // 300
    s1 = w1 // 300
    windowed = w0 > h0 * 3600 or w1 < (h0 + hkey.shape[0]) * 3600
    spreading = len(spread) > 0
    diff = np.zeros((7, 13), dtype=np.int64)  # one hour's profile, as differences
    for j in range(hkey.shape[0]):
        hour = h0 + j
        c = cls[j]
        t_sum = u_sum = d_sum = c_sum = l_sum = j_sum = p_sum = 0
        for i in range(key.shape[0]):
            x = _fmix64(key[i] ^ hkey[j])
            s, d = _session(x, thr[c, i], act[i], deact[i], full[i], hour)
            ov, conn = d, _slots(s, d)
            if windowed:
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
            if rates:
                per_dev[i] += (ru + rd) * ov
            if spreading and d > 0:
                _spread(diff, spread, s, d, (1, ru, rd, 1, lat, jit, loss))
        if spreading:
            for b in spread:
                profile[b, j] = np.cumsum(diff[b])[:12]
                diff[b] = 0
        totals[0, j] += t_sum
        totals[1, j] += u_sum
        totals[2, j] += d_sum
        totals[3, j] += c_sum
        totals[4, j] += l_sum
        totals[5, j] += j_sum
        totals[6, j] += p_sum
