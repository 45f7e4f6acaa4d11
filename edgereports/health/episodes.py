"""Episodes: simultaneous outages rolled up along the topology, one per eNodeB or site.

Outage flags (a dark site, a dark eNodeB, an offline device) of one site that overlap in time
are one episode: of an eNodeB when they all concern one eNodeB and no flag is the whole site's,
else of the site. An episode says how many devices it hit of how many were active there when it
began, and how many subscribers; each of its flags carries its id. A lone device flag is no
episode.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .context import Flag, Site

__all__ = ["Episode", "episodes_of"]

_RANK = {"high": 3, "medium": 2, "low": 1}


@dataclass(frozen=True)
class Episode:
    """One outage of an eNodeB or a site (hours as indexes of the grid)."""

    episode: str
    scope: str
    subject: str
    site: str
    a: int
    b: int
    devices: int
    of: int
    subscribers: int
    flags: int
    kinds: tuple[str, ...]
    severity: str
    complete: bool

    def to_dict(self, site: Site) -> dict[str, Any]:
        """JSON-ready, with its times (UTC ISO 8601) and one line that says it."""
        hours = site.grid.hours
        start = hours[self.a]
        end = hours[self.b - 1] + (
            hours[1] - hours[0] if len(hours) > 1 else np.timedelta64(1, "h")
        )
        known = "" if self.complete else " known"
        where = "eNodeB" if self.scope == "enodeb" else "site"
        at = f" at site {self.site}" if self.scope == "enodeb" else ""
        summary = (
            f"{where} {self.subject}{at}: {self.devices} of {self.of}{known} active devices "
            f"offline ({self.subscribers} subscriber{'s' if self.subscribers != 1 else ''}) for "
            f"{self.b - self.a} h"
        )
        return {
            "episode": self.episode,
            "scope": self.scope,
            "subject": self.subject,
            "site": self.site,
            "start": start.isoformat(),
            "end": end.isoformat(),
            "devices": self.devices,
            "of": self.of,
            "subscribers": self.subscribers,
            "flags": self.flags,
            "kinds": list(self.kinds),
            "severity": self.severity,
            "summary": summary,
        }


def _groups(flags: list[Flag]) -> list[list[Flag]]:
    """Outage flags joined when they overlap in time (transitively)."""
    out: list[list[Flag]] = []
    for flag in sorted(flags, key=lambda f: (f.a, f.b)):
        if out and flag.a < max(f.b for f in out[-1]):
            out[-1].append(flag)
        else:
            out.append([flag])
    return out


def episodes_of(site: Site, flags: list[Flag]) -> list[Episode]:
    """Build the site's episodes and set ``episode`` on their flags."""
    if site.site is None:
        return []
    found = []
    for group in _groups([f for f in flags if f.gap]):
        kinds = {f.kind for f in group}
        if len(group) < 2 and kinds == {"device_offline"}:
            continue
        cells = {f.enodeb for f in group}
        whole = "site_dark" in kinds or len(cells) > 1 or None in cells
        subject = site.site if whole else str(next(iter(cells)))
        a, b = min(f.a for f in group), max(f.b for f in group)
        positions = sorted({d for f in group for d in f.devices})
        members = site.members(None if whole else subject)
        at = site.active[members, a] | site.judged[members, a:b].any(axis=1)
        hit = {site.devices[p] for p in positions}
        episode = Episode(
            episode=f"{subject}@{site.grid.hours[a].strftime('%Y-%m-%dT%H:%MZ')}",
            scope="site" if whole else "enodeb",
            subject=subject,
            site=site.site,
            a=a,
            b=b,
            devices=len(hit),
            of=len({site.devices[int(p)] for p in members[at]} | hit),
            subscribers=len({site.msisdns[p] for p in positions}),
            flags=len(group),
            kinds=tuple(sorted(kinds)),
            severity=max((f.severity for f in group), key=_RANK.__getitem__),
            complete=site.complete,
        )
        for f in group:
            f.episode = episode.episode
        found.append(episode)
    return found
