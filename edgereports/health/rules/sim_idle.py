"""``sim_idle``: a SIM online but passing no byte, for a day or more."""

from __future__ import annotations

from ..context import Flag, Site
from ..detect import idle_runs
from . import Rule
from ._common import learnt


def detect(site: Site) -> list[Flag]:
    """Runs of at least 24 judged hours without a byte whose online hours are unlikely to pass
    nothing by the device's history (``low``: it costs, it breaks nothing)."""
    grid = site.grid
    flags = []
    online = site.online
    traffic = site.octets > 0
    for i, number in enumerate(site.msisdns):
        if not site.history_ok[i]:
            continue
        found, base = idle_runs(online[i], traffic[i], site.judged[i], grid.cls, grid.i0)
        for run in found:
            a, b = run.a, run.b
            idle = int((online[i, a:b] & ~traffic[i, a:b]).sum())
            silent, hours_online = int(base.hits.sum()), int(base.counts.sum())
            usual = (f"{silent} of its {hours_online} online hours over {learnt(site, i)} passed "
                     "no byte" if hours_online else
                     f"it had no hour online over {learnt(site, i)} to compare")  # fmt: skip
            flags.append(Flag("sim_idle", number, a, b, "low",
                              f"no bytes for {b - a} h though online in {idle} of those hours; "
                              f"{usual}", (i,), enodeb=site.enodebs[i]))  # fmt: skip
    return flags


RULE = Rule("sim_idle", detect, "msisdn")
