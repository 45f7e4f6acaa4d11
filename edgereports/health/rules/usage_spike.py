"""``usage_spike``: a device's bytes per second online rose, and stayed up."""

from __future__ import annotations

from ..context import Flag, Site
from . import Rule
from ._usage import usage_flags


def detect(site: Site) -> list[Flag]:
    """Sustained rises of each device's rate (``high`` from ten times normal)."""
    return usage_flags(site, "usage_spike", 1)


RULE = Rule("usage_spike", detect, "msisdn")
