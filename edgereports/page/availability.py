"""The page's availability section: each site's month to date against the previous month.

A section maker (:func:`availability_sections`) like the health flags': one section per account
of the page's reports, from the job's ``[inventory]`` when it has one, else from the
subscribers the reports name (a partial list, which the section says). Months are UTC calendar
months; this month counts its hours up to the service's present.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..availability import availability
from ..availability.render import pct_text
from .html import Section
from .sections import PageContext, account_sections, job_inventory

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["availability_sections", "month_starts", "months_table"]

_GOOD, _FAIR = 99.9, 99.0
_COLOURS = {"good": "#067647", "fair": "#b54708", "poor": "#b42318"}


def month_starts(now: datetime) -> tuple[datetime, datetime]:
    """The starts of the previous UTC month and of the one holding ``now``.

    Example:
        >>> [t.date().isoformat() for t in month_starts(datetime(2024, 1, 15, tzinfo=UTC))]
        ['2023-12-01', '2024-01-01']
    """
    moment = now.astimezone(UTC)
    this = datetime(moment.year, moment.month, 1, tzinfo=UTC)
    year, month = (moment.year, moment.month - 1) if moment.month > 1 else (moment.year - 1, 12)
    return datetime(year, month, 1, tzinfo=UTC), this


def _cell(pct: object) -> str:
    """A percentage cell, coloured by how far it falls short of 100%."""
    text = pct_text(pct)
    if text == "-":
        return '<td class="avail">-</td>'
    value = float(pct)  # type: ignore[arg-type]
    tone = "good" if value >= _GOOD else "fair" if value >= _FAIR else "poor"
    return (
        f'<td class="avail" style="color:{_COLOURS[tone]};font-weight:600">{html.escape(text)}</td>'
    )


def _change(now: object, before: object) -> str:
    """The change in percentage points, or blank when either side is undecided."""
    try:
        a, b = float(now), float(before)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
    if a != a or b != b:
        return ""
    return f"{a - b:+.2f} pp"


def _summed(rows: pd.DataFrame) -> dict[str, Any]:
    """All sites' hours summed, and their percentage."""
    counted = ("hours", "available_hours", "unavailable_hours", "excluded_hours", "unknown_hours")
    out: dict[str, Any] = {c: int(rows[c].sum()) for c in counted}
    decided = out["available_hours"] + out["unavailable_hours"]
    out["availability_pct"] = 100 * out["available_hours"] / decided if decided else float("nan")
    return out


def months_table(ledger: pd.DataFrame, this: datetime) -> str:
    """The table of a monthly ledger by site: per site this month so far (its hours of each
    state) and the previous month, the change, and a last row of all sites' hours summed."""
    stamps = ledger["time_stamp"]
    current = ledger[stamps == this].set_index("customer_site_id")
    previous = ledger[stamps != this].set_index("customer_site_id")
    head = ("site", "this month", "available h", "unavailable h", "unknown h", "excluded h",
            "previous month", "change")  # fmt: skip
    rows = []
    sites = sorted(set(current.index) | set(previous.index))
    totals = [("all sites (hours summed)", _summed(current), _summed(previous))]
    lines = [(s, current.loc[s] if s in current.index else None,
              previous.loc[s] if s in previous.index else None) for s in sites]  # fmt: skip
    for name, now, before in [*lines, *totals]:
        pct_now = now["availability_pct"] if now is not None else None
        pct_before = before["availability_pct"] if before is not None else None
        cells = [f"<td>{html.escape(str(name))}</td>", _cell(pct_now)]
        for column in ("available_hours", "unavailable_hours", "unknown_hours",
                       "excluded_hours"):  # fmt: skip
            cells.append(f"<td>{'' if now is None else int(now[column])}</td>")
        cells += [_cell(pct_before), f"<td>{html.escape(_change(pct_now, pct_before))}</td>"]
        style = (
            ' style="font-weight:600;border-top:2px solid #9aa5b1"' if name == totals[0][0] else ""
        )
        rows.append(f"<tr{style}>{''.join(cells)}</tr>")
    header = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    return (f'<table class="availability"><thead><tr>{header}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")  # fmt: skip


def _notes(ledger: pd.DataFrame, this: datetime, before: datetime) -> list[str]:
    """What a reader must know: the months, the rule, what the unavailable hours rest on, the
    windows excluded and the basis when partial."""
    attrs = ledger.attrs
    current = ledger[ledger["time_stamp"] == this]
    so_far = int(current["hours"].max()) if len(current) else 0
    until = str(attrs.get("judged_until", ""))[:16].replace("T", " ")
    notes = [
        f"This month: {this:%B %Y} (UTC) so far, {so_far} hours up to {until} UTC; previous "
        f"month: {before:%B %Y}. Availability = available / (available + unavailable) hours; "
        "unknown hours (silent, but idle and down look alike) are left out; excluded hours are "
        "maintenance windows and SIMs not active.",
    ]
    outages = attrs.get("outages") or []
    if outages:
        listed = "; ".join(
            f"{o['kind']} {o['subject']} {o['start'][:16]}–{o['end'][11:16]}" for o in outages[:8]
        )
        more = f" and {len(outages) - 8} more" if len(outages) > 8 else ""
        notes.append(
            f"Outages health found: {listed}{more} (UTC); a site's hour is unavailable when "
            "they cover every active device there."
        )
    windows = attrs.get("maintenance") or []
    if windows:
        listed = "; ".join(f"{w['scope']} {w['subject']} {w['start'][:16]}" for w in windows[:8])
        notes.append(f"{len(windows)} maintenance window(s) excluded: {listed} (UTC).")
    if not (attrs.get("inventory") or {}).get("complete", True):
        notes.append(
            "Judged from a partial list of subscribers (the job has no [inventory] of this "
            "account): each site from its own report."
        )
    return notes


def availability_sections(context: PageContext) -> list[Section]:
    """One availability section per account of the page's reports: each site's month to date
    (UTC, up to the service's present) against the previous month.

    With the job's ``[inventory]``, calls ``er.availability(client, inventory=..., by="site",
    granularity="MONTH")`` for its account; else for the subscribers the job's reports name (a
    partial list, which the section says).
    """
    inventory = job_inventory(context.job)  # read, and checked, before any request
    now = context.client.service_now()
    before, this = month_starts(now)

    def section(anchor: str, title: str, given: dict[str, Any]) -> Section:
        ledger = availability(context.client, **given, start=before, end=now,
                              by="customer_site_id", granularity="MONTH")  # fmt: skip
        purpose = (f"Per site: {this:%B %Y} so far against {before:%B %Y} (UTC months), hours of "
                   "each state and the change in percentage points.")  # fmt: skip
        notes = "".join(
            f'<p class="note">{html.escape(n)}</p>' for n in _notes(ledger, this, before)
        )
        body = f'<p class="purpose">{html.escape(purpose)}</p>{months_table(ledger, this)}{notes}'
        return Section(anchor, title, body)

    naming = ("availability", "Availability", "count")
    return account_sections(context, inventory, naming, section)
