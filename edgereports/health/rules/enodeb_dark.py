"""``enodeb_dark``: every device of one eNodeB offline at once, for longer than it ever is."""

from __future__ import annotations

from ..context import Flag, Site
from . import Rule
from ._common import dark_flags


def detect(site: Site) -> list[Flag]:
    """Each eNodeB's dark runs, judged from its devices (at least two active), outside the
    hours a dark site already explains."""
    flags = []
    for enodeb in sorted({e for e in site.enodebs if e is not None}):
        members = site.members(enodeb)
        if len(members) < 2:
            continue
        open_hours = site.site_open & site.enodeb_open.get(enodeb, site.site_open)
        flags += dark_flags(site, "enodeb_dark", enodeb, members, open_hours, enodeb)
    return flags


RULE = Rule("enodeb_dark", detect, "enodeb")
