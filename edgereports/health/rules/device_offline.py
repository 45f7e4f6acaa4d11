"""``device_offline``: a device without a second online for longer than it ever is."""

from __future__ import annotations

from ..context import Flag, Site
from ..detect import GAP_SCORE, chance, gaps
from . import Rule
from ._common import device_baseline, learnt, unexplained_score

#: From this many hours a device offline is ``high`` (else ``medium``).
HIGH_HOURS = 24


def detect(site: Site) -> list[Flag]:
    """Each judged device's unlikely gaps, less the hours a dark site or eNodeB explains."""
    grid = site.grid
    flags = []
    online = site.online
    for i, number in enumerate(site.msisdns):
        if not site.history_ok[i]:
            continue
        base = device_baseline(site, i)
        found, _ = gaps(~online[i], site.judged[i], grid.cls, grid.i0, base)
        for run in found:
            a, b = run.a, run.b
            score = unexplained_score(base, grid.cls, site.explained[i], a, b)
            if score < GAP_SCORE:
                continue  # a dark site or eNodeB says it
            off, seen = base.seen(grid.cls[a:b])
            hours = b - a
            severity = "high" if hours >= HIGH_HOURS else "medium"
            note = ""
            if b == len(grid) and not site.end_known[i]:
                severity = "medium"
                note = ("; silent to the end of the data, and the inventory does not say the "
                        "SIM is still active: a deactivation would look the same")  # fmt: skip
            flags.append(Flag("device_offline", number, a, b, severity,
                              f"no time online for {hours} h; online in {seen - off} of {seen} "
                              f"hours at these hours of day over {learnt(site, i)}; "
                              f"{chance(score)}{note}", (i,), gap=True,
                              enodeb=site.enodebs[i]))  # fmt: skip
    return flags


RULE = Rule("device_offline", detect, "msisdn")
