"""``site_dark``: a customer site with no time online at all, for longer than it ever is."""

from __future__ import annotations

from ..context import Flag, Site
from . import Rule
from ._common import dark_flags


def detect(site: Site) -> list[Flag]:
    """The site's dark runs: from its own report when pulled, else from its devices."""
    if site.site is None:
        return []
    return dark_flags(site, "site_dark", site.site, site.members(), site.site_open, None)


RULE = Rule("site_dark", detect, "site")
