"""What ``usage_drop`` and ``usage_spike`` share: each device's rate shifts in one direction."""

from __future__ import annotations

import numpy as np

from ..context import Flag, Site
from ..detect import Rates, rate_scores, shifts

__all__ = ["usage_flags"]


def usage_flags(site: Site, kind: str, sign: int) -> list[Flag]:
    """Each judged device's sustained shifts of its bytes per second online in direction
    ``sign``; severity by :func:`_severity`."""
    grid = site.grid
    flags = []
    for i, number in enumerate(site.msisdns):
        if not site.history_ok[i]:
            continue
        scores = _scores(site, i)
        if scores is None:
            continue
        for s in shifts(scores, sign, grid.i0):
            hours = s.b - s.a
            severity = _severity(sign, hours, s.ratio)
            first = int(scores.idx[0])
            flags.append(Flag(kind, number, s.a, s.b, severity,
                              f"{s.ratio:.2g}x its usual bytes per second online over "
                              f"{s.samples} online hours in {hours} h (median against the same "
                              f"hours of day over {grid.learnt(first)})",
                              (i,), enodeb=site.enodebs[i]))  # fmt: skip
    return flags


def _scores(site: Site, i: int) -> Rates | None:
    """Device ``i``'s rates as normal scores, computed once for both directions."""
    key = ("rates", i)
    if key not in site.memo:
        seconds = site.seconds[i].astype(np.float64)
        octets = site.octets[i].astype(np.float64)
        sampled = site.judged[i] & (seconds >= 60) & (octets > 0)
        rate = np.where(sampled, octets / np.maximum(seconds, 1.0), 0.0)
        site.memo[key] = rate_scores(rate, sampled, site.grid.cls, site.grid.i0)
    found: Rates | None = site.memo[key]
    return found


def _severity(sign: int, hours: int, ratio: float) -> str:
    """A drop is ``high`` from 48 hours, a spike from ten times normal; else ``medium``."""
    if sign < 0:
        return "high" if hours >= 48 else "medium"
    return "high" if ratio >= 10 else "medium"
