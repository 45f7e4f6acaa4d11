"""Link quality of the synthetic network: latency, jitter and packet loss of each device.

A device that is connected in a 5-minute slot (``activity.py``'s ``C``) gives one *sample* of
each quality measure in that slot; a device that is offline gives none. A sample is the device's
value for its UTC hour, so all the samples of one device in one hour are equal. Values are
counted in eighths (of a millisecond, of a percent), so sums of samples are exact:

- latency (base ``L``): the device's own level (set by its profile, e.g. ``sensor`` devices are
  slow, ``gateway`` devices fast) times a load factor of the local hour class (busier on
  weekdays 08:00-20:00 +05:30, quieter at night), plus an exponential excess (mean 30 % of the
  level). Milliseconds.
- jitter (base ``J``): 4 % to 25 % of the latency of the same hour. Milliseconds.
- packet loss (base ``P``): in about 29 % of busy hours, 12 % of night hours and 20 % of
  weekend day hours, an exponential loss of mean 0.5 % (at least 0.125 %, at most 100 %);
  otherwise 0. Percent of packets.

Like the activity, every value is a pure function of (seed, device, hour): the MurmurHash3
finaliser of the device's quality key (``network.py``'s ``qkey``) and the hour, cut into 12-bit
uniforms. Nothing here changes the activity's numbers.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .hashing import fmix64

__all__ = ["LATENCY_LEVELS", "QUALITY_BASES", "QUALITY_UNIT", "level_of", "samples"]

QUALITY_BASES = ("L", "J", "P")
#: One unit of a quality base, in milliseconds (L, J) or percent (P).
QUALITY_UNIT = 0.125
#: Latency level range per usage profile, in milliseconds.
LATENCY_LEVELS = {
    "handset": (28.0, 45.0),
    "camera": (20.0, 32.0),
    "sensor": (45.0, 90.0),
    "gateway": (14.0, 24.0),
}
_FACTORS = -np.log((np.arange(4096) + 0.5) / 4096.0)  # exponential, mean about 1
# per hour class (0: weekday 08-20 local, 1: night, 2: weekend 08-20 local)
_LOAD = np.array([1.25, 0.9, 1.1])
_LOSS_CUT = np.array([1200, 500, 800], dtype=np.uint32)  # chance of a lossy hour, /4096
_MAX_LOSS = 800  # 100 % in eighths
_MASK12 = np.uint32(0xFFF)

I32 = npt.NDArray[np.int32]
F64 = npt.NDArray[np.float64]


def level_of(profiles: list[str], qkey: npt.NDArray[np.uint64]) -> F64:
    """Return each device's latency level, in eighths of a millisecond.

    Args:
        profiles: the devices' usage profiles.
        qkey: the devices' quality keys.

    Returns:
        The levels (float64).
    """
    lo = np.array([LATENCY_LEVELS[p][0] for p in profiles], dtype=np.float64)
    hi = np.array([LATENCY_LEVELS[p][1] for p in profiles], dtype=np.float64)
    u = (qkey >> np.uint64(52)).astype(np.float64) / 4096.0
    out: F64 = 8.0 * (lo + (hi - lo) * u)
    return out


def samples(
    qkey: npt.NDArray[np.uint64],
    level: F64,
    hour_key: npt.NDArray[np.uint64],
    cls: npt.NDArray[np.int64],
) -> tuple[I32, I32, I32]:
    """Return the latency, jitter and loss samples of devices x hours, in eighths (int32).

    Args:
        qkey: the devices' quality keys.
        level: the devices' latency levels (eighths of a millisecond).
        hour_key: the hours' keys (``activity.py``).
        cls: the hours' classes (0 busy, 1 night, 2 weekend day).

    Returns:
        ``(latency, jitter, loss)``, each of shape ``(devices, hours)``.
    """
    with np.errstate(over="ignore"):
        bits = fmix64(qkey[:, None] ^ hour_key[None, :])
    lo = bits.astype(np.uint32)
    hi = (bits >> np.uint64(32)).astype(np.uint32)
    excess = _FACTORS[hi >> np.uint32(20)]
    excess *= 0.3
    excess += _LOAD[cls][None, :]
    excess *= level[:, None]
    latency = excess.astype(np.int32)
    share = ((hi >> np.uint32(8)) & _MASK12).astype(np.float64)
    share *= 0.21 / 4096.0
    share += 0.04
    share *= latency
    jitter = share.astype(np.int32)
    size = _FACTORS[(lo >> np.uint32(4)) & _MASK12] * 3.0 + 1.0
    loss = np.minimum(size, _MAX_LOSS).astype(np.int32)
    loss *= ((lo >> np.uint32(16)) & _MASK12) < _LOSS_CUT[cls][None, :]
    return latency, jitter, loss
