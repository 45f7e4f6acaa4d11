"""The compiled device-hour kernels against a plain numpy model of the same documented rules.

The model below is written per 5-minute slot (the seconds of a session inside each slot), the
kernels per session; both follow ``activity.py`` and ``quality.py``. Any difference in totals,
windowed totals, per-device sums or per-slot profiles is a bug in one of them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from hypothesis import given, settings
from hypothesis import strategies as st

from edgereports.sandbox import build_network
from edgereports.sandbox.model.accumulate import accumulate
from edgereports.sandbox.model.activity import BASES, FULL_HOUR_CUT
from edgereports.sandbox.model.hashing import EXPONENTIAL, GOLDEN, fmix64
from edgereports.sandbox.model.network import Network
from edgereports.sandbox.model.quality import JITTER_SPAN, LOAD, LOSS_CUT, MAX_LOSS

NETWORK = build_network(5, 60, extra_accounts=1)
H2022 = int(np.datetime64("2022-01-01T00", "h").astype(np.int64))
I64 = npt.NDArray[np.int64]


def _u12(x: npt.NDArray[np.uint64], shift: int) -> I64:
    return ((x >> np.uint64(shift)) & np.uint64(0xFFF)).astype(np.int64)


def _hour_classes(h0: int, hours: int) -> I64:
    local = np.arange(h0, h0 + hours) * 60 + 330  # minutes, +05:30
    hour, weekday = local // 60 % 24, (local // 1440 + 3) % 7  # 1970-01-01 was a Thursday
    day = (hour >= 8) & (hour < 20)
    out: I64 = np.where(day, np.where(weekday >= 5, 2, 0), 1)
    return out


def model(net: Network, dev: I64, h0: int, hours: int, window: tuple[int, int] | None) -> Any:
    """Return (totals by base, per-device bytes, per-slot profile by base) the slow way."""
    a = {k: v[dev] for k, v in net.arrays.items() if k not in ("thr",)}
    hour = np.arange(h0, h0 + hours)
    hkey = hour.astype(np.uint64) * GOLDEN
    cls = _hour_classes(h0, hours)
    x = fmix64(a["key"][:, None] ^ hkey[None, :])
    online = (x < a["thr_top"][:, cls]) & (a["act_hour"][:, None] <= hour)
    online &= hour < a["deact_hour"][:, None]
    d = ((_u12(x, 28) * 3540) >> 12) + 60
    d = np.where(a["full"][:, None] & (_u12(x, 28) >= FULL_HOUR_CUT), 3600, d) * online
    s = (_u12(x, 40) * (3601 - d)) >> 12
    ru = (EXPONENTIAL[_u12(x, 16)] * a["rate_up"][:, None]).astype(np.int64) * 2
    ru = np.maximum(ru + ((x & np.uint64(0xF)) == 0), 2)
    rd = np.maximum((EXPONENTIAL[_u12(x, 4)] * a["rate_down"][:, None]).astype(np.int64) * 2, 2)
    q = fmix64(a["qkey"][:, None] ^ hkey[None, :])
    lat = ((EXPONENTIAL[(q >> np.uint64(52)).astype(np.int64)] * 0.3 + LOAD[cls])
           * a["qlevel"][:, None]).astype(np.int64)  # fmt: skip
    jit = ((_u12(q, 40) * JITTER_SPAN + 0.04) * lat).astype(np.int64)
    loss = np.minimum(EXPONENTIAL[_u12(q, 4)] * 3.0 + 1.0, MAX_LOSS).astype(np.int64)
    loss *= _u12(q, 16) < LOSS_CUT[cls]
    lo = np.arange(12) * 300  # slot starts, seconds into the hour
    sec = np.clip(np.minimum((s + d)[..., None], lo + 300) - np.maximum(s[..., None], lo), 0, None)
    conn = (sec > 0).astype(np.int64)
    per_slot = {"T": sec, "U": sec * ru[..., None], "D": sec * rd[..., None], "C": conn}
    per_slot.update({b: conn * v[..., None] for b, v in zip("LJP", (lat, jit, loss), strict=True)})
    inside = np.ones((hours, 12), dtype=bool)
    if window is not None:
        starts = hour[:, None] * 3600 + lo
        inside = (starts >= window[0]) & (starts < window[1])
    totals = {b: (v * inside).sum(axis=(0, 2)) for b, v in per_slot.items()}
    per_dev = ((per_slot["U"] + per_slot["D"]) * inside).sum(axis=(1, 2))
    profile = {b: v.sum(axis=0).astype(np.float64) for b, v in per_slot.items()}
    return totals, per_dev, profile


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    h0=st.integers(H2022 - 400 * 24, H2022 + 3 * 365 * 24),
    hours=st.integers(1, 80),
    mode=st.sampled_from(["fast", "window", "per_device", "profile"]),
    bases=st.sets(st.sampled_from(BASES), min_size=1),
)
def test_kernels_equal_the_model(
    data: st.DataObject, h0: int, hours: int, mode: str, bases: set[str]
) -> None:
    n = len(NETWORK.devices)
    picked = data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n))
    dev = np.array(sorted(picked), dtype=np.int64)
    window = None
    if mode == "window":
        first = data.draw(st.integers(0, hours * 12 - 1))
        last = data.draw(st.integers(first + 1, hours * 12))
        window = (h0 * 3600 + first * 300, h0 * 3600 + last * 300)
    order = tuple(b for b in BASES if b in bases)
    got = accumulate(NETWORK, dev, h0, hours, window=window, profile=mode == "profile",
                     bases=order, per_device=mode == "per_device")  # fmt: skip
    totals, per_dev, profile = model(NETWORK, dev, h0, hours, window)
    for base in order:
        assert np.array_equal(got.totals[base], totals[base]), base
    if mode == "per_device":
        assert np.array_equal(got.per_device, per_dev)
    if mode == "profile":
        assert got.profile is not None
        for base in order:
            assert np.array_equal(got.profile[base], profile[base]), base


def test_the_fast_path_equals_the_detailed_one_over_a_year_of_many_devices() -> None:
    dev = np.arange(len(NETWORK.devices), dtype=np.int64)
    fast = accumulate(NETWORK, dev, H2022, 24 * 365, per_device=False)
    slow = accumulate(NETWORK, dev, H2022, 24 * 365, per_device=True)
    assert all(np.array_equal(fast.totals[b], slow.totals[b]) for b in BASES)
    assert slow.per_device.sum() == slow.totals["U"].sum() + slow.totals["D"].sum()
