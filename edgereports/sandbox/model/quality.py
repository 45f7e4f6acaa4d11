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

Like the activity, every value is a pure function of (seed, device, hour), drawn with the
device's quality key (``network.py``'s ``qkey``; ``kernel.py`` does the arithmetic), so nothing
here changes the activity's numbers.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = [
    "JITTER_SPAN",
    "LATENCY_LEVELS",
    "LOAD",
    "LOSS_CUT",
    "MAX_LOSS",
    "QUALITY_BASES",
    "QUALITY_UNIT",
    "level_of",
]

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
#: Latency load factor per hour class (0: weekday 08-20 local, 1: night, 2: weekend 08-20).
LOAD = np.array([1.25, 0.9, 1.1])
#: Chance of a lossy hour per hour class, out of 4096.
LOSS_CUT = np.array([1200, 500, 800], dtype=np.int64)
MAX_LOSS = 800.0  # 100 % in eighths
#: Jitter is (0.04 + JITTER_SPAN * a 12-bit uniform) times the latency.
JITTER_SPAN = 0.21 / 4096.0

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
