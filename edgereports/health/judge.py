"""The flags loop: every site's hours through every rule, then its episodes.

Sites are judged one at a time (a site's devices, its eNodeBs and its own report together);
devices whose site is unknown are judged on their own. Maintenance windows take their hours
out of judgement; what they suppressed (the flags the same rules raise when the windows are
ignored, overlapping a window) is listed, not flagged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..inventory.model import Inventory
from .context import Flag, Site
from .episodes import episodes_of
from .grid import Grid
from .lifecycle import MIN_HISTORY_HOURS, Lives
from .pull import Pulled
from .rules import Rule

__all__ = ["Judged", "judge"]

B2 = npt.NDArray[np.bool_]


@dataclass
class Judged:
    """What the loop found: flags (with the site they were judged in), episodes, suppressed
    flags, the maintenance windows that touch the hours judged, and each site's basis."""

    flags: list[tuple[Flag, Site]] = field(default_factory=list)
    episodes: list[dict[str, Any]] = field(default_factory=list)
    suppressed: list[dict[str, str]] = field(default_factory=list)
    windows: list[dict[str, str]] = field(default_factory=list)
    bases: dict[str, str] = field(default_factory=dict)


def _run(rules: tuple[Rule, ...], site: Site) -> list[Flag]:
    return [flag for rule in rules for flag in rule.detect(site)]


def _sites(inventory: Inventory) -> list[tuple[str | None, npt.NDArray[np.int64]]]:
    """The inventory's rows per customer site (sorted; devices of unknown site last)."""
    by_site: dict[str | None, list[int]] = {}
    for i, number in enumerate(inventory.msisdns):
        by_site.setdefault(inventory.site_of(number), []).append(i)
    order = sorted(by_site, key=lambda p: (p is None, p or ""))
    return [(p, np.asarray(by_site[p], dtype=np.int64)) for p in order]


def judge(
    inventory: Inventory,
    pulled: Pulled,
    lives: Lives,
    grid: Grid,
    reports: Mapping[str, npt.NDArray[np.float64]],
    rules: tuple[Rule, ...],
) -> Judged:
    """Run ``rules`` over every site of ``inventory`` (rows in its order, places known as far
    as they go) and collect flags, episodes and what maintenance suppressed."""
    first_judged = grid.hours[min(grid.i0, len(grid) - 1)] if len(grid) else None
    windows = [
        w
        for w in inventory.windows()
        if first_judged is not None and w.end > first_judged and w.start < grid.stop
    ]
    out = Judged(windows=[w.to_dict() for w in windows])
    maintenance = inventory.maintenance_mask(grid.hours)
    judged = lives.active & ~maintenance
    unjudged = {u["msisdn"] for u in lives.unjudged}
    enough = judged[:, : grid.i0].sum(axis=1) >= MIN_HISTORY_HOURS
    enough &= np.array([m not in unjudged for m in inventory.msisdns], dtype=bool)
    for place, rows in _sites(inventory):
        numbers = tuple(inventory.msisdns[r] for r in rows.tolist())
        cells = tuple(inventory.enodeb_of(m) for m in numbers)
        site = Site(
            grid=grid,
            site=place,
            msisdns=numbers,
            enodebs=cells,
            devices=tuple(inventory.device_of(m) for m in numbers),
            seconds=pulled.seconds[rows],
            octets=pulled.octets[rows],
            active=lives.active[rows],
            judged=judged[rows],
            history_ok=enough[rows],
            end_known=lives.end_known[rows],
            since=tuple(lives.since[r] for r in rows.tolist()),
            complete=inventory.complete,
            report=reports.get(place) if place is not None else None,
            site_open=_open(inventory, "site", place, grid),
            enodeb_open={e: _open(inventory, "enodeb", e, grid) for e in set(cells) if e},
        )
        if place is not None:
            out.bases[place] = _basis(site)
        flags = _run(rules, site)
        out.episodes += [e.to_dict(site) for e in episodes_of(site, flags)]
        out.flags += [(f, site) for f in flags]
        later = slice(grid.i0, None)
        if maintenance[rows, later].any() or not all(
            v[later].all() for v in (site.site_open, *site.enodeb_open.values())
        ):
            out.suppressed += _suppressed(site, flags, rules)
    return out


def _open(inventory: Inventory, scope: str, subject: str | None, grid: Grid) -> B2:
    """Per hour, whether no maintenance window covers ``subject`` itself."""
    if subject is None:
        return np.ones(len(grid), dtype=bool)
    out: B2 = ~inventory.scope_maintenance(scope, subject, grid.hours)
    return out


def _basis(site: Site) -> str:
    """What the site is judged dark from."""
    if site.report is not None:
        return "its own report"
    if site.complete:
        return "all its active devices (the inventory is complete)"
    return f"its {len(site.msisdns)} known devices (the inventory is partial)"


def _suppressed(site: Site, kept: list[Flag], rules: tuple[Rule, ...]) -> list[dict[str, str]]:
    """The flags the rules raise when the site's maintenance windows are ignored and that
    overlap one, less those raised anyway."""
    everything = np.ones(len(site.grid), dtype=bool)
    free = dataclasses.replace(
        site,
        judged=site.active.copy(),
        site_open=everything,
        enodeb_open=dict.fromkeys(site.enodeb_open, everything),
    )
    seen = {(f.kind, f.subject, f.a) for f in kept}
    hours = site.grid.hours
    out = []
    for f in _run(rules, free):
        if (f.kind, f.subject, f.a) in seen or f.b <= site.grid.i0:
            continue
        span = slice(f.a, f.b)
        covered = not site.site_open[span].all()
        if f.enodeb is not None and f.enodeb in site.enodeb_open:
            covered = covered or not site.enodeb_open[f.enodeb][span].all()
        rows = list(f.devices)
        if rows:
            covered = covered or bool((site.active[rows, span] & ~site.judged[rows, span]).any())
        if covered:
            end = hours[f.b - 1] + (hours[1] - hours[0])
            out.append({"kind": f.kind, "subject": f.subject, "start": hours[f.a].isoformat(),
                        "end": end.isoformat()})  # fmt: skip
    return out
