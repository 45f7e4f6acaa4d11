"""One judgement: pull, learn the lives and places, run the rules, and build the frame."""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any

from ..query.timegrid import BUCKETS, ceil, floor
from .frame import flags_frame
from .grid import make_grid
from .judge import judge
from .lifecycle import lives_of
from .pull import pull_devices, pull_sim_counts, pull_sites
from .rules import load_rules

if TYPE_CHECKING:
    import pandas as pd

    from ..inventory.model import Inventory
    from ..reporting import ReportingClient

__all__ = ["run"]

_HOUR = BUCKETS["HOUR"]


def run(
    client: ReportingClient,
    inventory: Inventory,
    whole: Inventory,
    account_id: str,
    span: tuple[datetime, datetime, datetime],
    zone: tzinfo,
    site_reports: bool,
    shard: str | None,
) -> pd.DataFrame:
    """Judge ``inventory`` (a shard of ``whole``, perhaps) over ``span`` (the history's first
    hour, the range's start and end): the flags frame."""
    first, start, end = span
    asked = make_grid(first, start, ceil(end, _HOUR), end, zone)
    pulled = pull_devices(client, account_id, inventory.msisdns, asked)
    present = floor(client.service_now(probe=False), _HOUR)
    grid = make_grid(first, start, min(ceil(end, _HOUR), present), end, zone)
    h = len(grid)
    pulled.seconds, pulled.octets = pulled.seconds[:, :h], pulled.octets[:, :h]
    placed = inventory.with_topology(pulled.sites, pulled.enodebs)
    counts, told = pull_sim_counts(client, account_id, grid)
    lives = lives_of(placed, pulled.seconds, pulled.answered, grid, counts, everyone=whole)
    reports: dict[str, Any] = {}
    provenance = [*pulled.reports, told]
    if site_reports and placed.sites:
        reports, sites_told = pull_sites(client, account_id, placed.sites, grid)
        reports = {k: v[:h] for k, v in reports.items()}
        provenance.append(sites_told)
    judged = judge(placed, pulled, lives, grid, reports, load_rules())
    attrs = {
        "range": [start.isoformat(), end.isoformat()],
        "zone": _zone_name(zone, start),
        "history_start": first.isoformat(),
        "history": grid.learnt(0),
        "judged_until": grid.stop.isoformat(),
        "inventory": {
            "source": whole.source,
            "complete": whole.complete,
            "subscribers": len(whole),
            "lives": "the inventory" if whole.lifecycle_known else "the service's evidence",
        },
        "subjects": len(placed),
        "sites": list(placed.sites),
        "bases": judged.bases,
        "episodes": sorted(judged.episodes, key=lambda e: (e["start"], e["subject"])),
        "deactivated": lives.deactivated,
        "unjudged": lives.unjudged,
        "maintenance": judged.windows,
        "suppressed": judged.suppressed,
        "shard": shard,
        "reports": provenance,
    }
    return flags_frame(judged.flags, attrs)


def _zone_name(zone: tzinfo, at: datetime) -> str:
    """A zone as evidence and tables print it: its name, else its offset at ``at``."""
    name = getattr(zone, "key", None)
    if isinstance(name, str):
        return name
    offset = at.astimezone(zone).strftime("%z")
    return "UTC" if offset in ("+0000", "") else f"{offset[:3]}:{offset[3:]}"
