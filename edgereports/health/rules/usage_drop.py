"""``usage_drop``: a device's bytes per second online fell, and stayed down."""

from __future__ import annotations

from ..context import Flag, Site
from . import Rule
from ._usage import usage_flags


def detect(site: Site) -> list[Flag]:
    """Sustained drops of each device's rate (``high`` from 48 hours)."""
    return usage_flags(site, "usage_drop", -1)


RULE = Rule("usage_drop", detect, "msisdn")
