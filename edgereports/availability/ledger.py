"""One ledger: judge the hours as health does (its outage rules only), count them, say from what."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..health.api import Asked
from ..health.rules import load_rules
from ..health.run import assess, judged_facts
from .frame import ledger_frame
from .hours import OUTAGE_KINDS, RULE, hours_of

if TYPE_CHECKING:
    import pandas as pd

    from ..reporting import ReportingClient

__all__ = ["ledger"]


def ledger(client: ReportingClient, asked: Asked, by: str, granularity: str | None) -> pd.DataFrame:
    """The ledger of ``asked`` (checked arguments) per ``by`` and ``granularity``."""
    rules = tuple(r for r in load_rules() if r.kind in OUTAGE_KINDS)
    done = assess(client, asked.inventory, asked.whole, asked.account, asked.span, asked.zone,
                  asked.site_reports, rules)  # fmt: skip
    found = hours_of(done, by)
    grid = done.grid
    frame = ledger_frame(found, grid.hours[grid.i0 :], by, granularity, asked.account)
    _, start, end = asked.span
    attrs: dict[str, Any] = {
        "shape": "availability",
        "rule": RULE,
        "by": by,
        "granularity": granularity,
        **judged_facts(grid, asked.whole, asked.zone, (start, end)),
        "maintenance": done.judged.windows,
        "outages": found.outages,
        "unjudged": done.lives.unjudged,
        "deactivated": done.lives.deactivated,
        "reports": done.provenance,
    }
    frame.attrs.update(attrs)
    return frame
