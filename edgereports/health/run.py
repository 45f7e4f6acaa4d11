"""One judgement: pull, learn the lives and places, run the rules (:func:`assess`), and build
the frame (:func:`run`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any

from ..inventory.model import Inventory
from ..query.timegrid import BUCKETS, ceil, floor
from .frame import flags_frame
from .grid import Grid, make_grid
from .judge import Judged, judge
from .lifecycle import Lives, lives_of
from .pull import Pulled, pull_devices, pull_sim_counts, pull_sites
from .rules import Rule, load_rules

if TYPE_CHECKING:
    import pandas as pd

    from ..reporting import ReportingClient

__all__ = ["Assessed", "assess", "judged_facts", "run"]

_HOUR = BUCKETS["HOUR"]


@dataclass
class Assessed:
    """What one judgement pulled, learnt and found, before it becomes a frame.

    Attributes:
        grid: the hours (history and judged), up to the service's present.
        placed: the subscribers judged, with the sites and eNodeBs the service told.
        pulled: their hourly reports on the grid.
        lives: their known active hours.
        judged: the flags (with the site each was judged in), episodes and windows.
        reports: each site's own hourly time online, when pulled.
        provenance: the provenance of each report pulled.
    """

    grid: Grid
    placed: Inventory
    pulled: Pulled
    lives: Lives
    judged: Judged
    reports: dict[str, Any]
    provenance: list[dict[str, Any]]


def assess(
    client: ReportingClient,
    inventory: Inventory,
    whole: Inventory,
    account_id: str,
    span: tuple[datetime, datetime, datetime],
    zone: tzinfo,
    site_reports: bool,
    rules: tuple[Rule, ...] | None = None,
) -> Assessed:
    """Pull, learn the lives and places, and run ``rules`` (default: every rule) over
    ``inventory`` (a shard of ``whole``, perhaps) and ``span`` (the history's first hour, the
    range's start and end)."""
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
    judged = judge(placed, pulled, lives, grid, reports, load_rules() if rules is None else rules)
    return Assessed(grid, placed, pulled, lives, judged, reports, provenance)


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
    done = assess(client, inventory, whole, account_id, span, zone, site_reports)
    placed, lives, judged = done.placed, done.lives, done.judged
    provenance = done.provenance
    attrs = {
        **judged_facts(done.grid, whole, zone, (start, end)),
        "history_start": first.isoformat(),
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


def judged_facts(
    grid: Grid, whole: Inventory, zone: tzinfo, span: tuple[datetime, datetime]
) -> dict[str, Any]:
    """What a judgement over ``grid`` records of itself: its range and zone, the history it
    learnt from, how far it judged, and the inventory (``whole``) it judged from."""
    start, end = span
    return {
        "range": [start.isoformat(), end.isoformat()],
        "zone": _zone_name(zone, start),
        "history": grid.learnt(0),
        "judged_until": grid.stop.isoformat(),
        "inventory": {
            "source": whole.source,
            "complete": whole.complete,
            "subscribers": len(whole),
            "lives": "the inventory" if whole.lifecycle_known else "the service's evidence",
        },
    }


def _zone_name(zone: tzinfo, at: datetime) -> str:
    """A zone as evidence and tables print it: its name, else its offset at ``at``."""
    name = getattr(zone, "key", None)
    if isinstance(name, str):
        return name
    offset = at.astimezone(zone).strftime("%z")
    return "UTC" if offset in ("+0000", "") else f"{offset[:3]}:{offset[3:]}"
