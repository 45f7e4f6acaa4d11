"""Per-device activity of the synthetic network, generated on demand and summed over devices.

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

The arithmetic of every device-hour is in ``kernel.py``, and ``accumulate.py`` sums it over a
set of devices and a run of hours; this module holds the model's constants, which both use.
"""

from __future__ import annotations

from .quality import QUALITY_BASES

__all__ = ["ACTIVITY_BASES", "BASES", "FULL_HOUR_CUT", "SLOT", "SLOTS_PER_HOUR"]

ACTIVITY_BASES = ("T", "U", "D", "C")
BASES = ACTIVITY_BASES + QUALITY_BASES
SLOT = 300  # seconds in a 5-minute slot
SLOTS_PER_HOUR = 12
FULL_HOUR_CUT = 328  # a full-hour device has a shorter session with chance 328/4096
