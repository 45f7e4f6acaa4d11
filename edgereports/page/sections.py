"""The sections of a report page: one per report, then the pluggable makers' (health flags)."""

from __future__ import annotations

import html
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..errors import ConfigError, EdgeReportsError, InputError
from ..plotting import period_title
from .compared import comparison_table
from .html import Section, chart_img, table_html
from .summary import summary_table

if TYPE_CHECKING:
    import pandas as pd

    from ..export.job import Job
    from ..inventory.model import Inventory
    from ..reporting import ReportingClient

__all__ = [
    "HEAD_ROWS",
    "PageContext",
    "SectionMaker",
    "failed_section",
    "health_sections",
    "job_inventory",
    "load_health",
    "period_notes",
    "report_section",
]

#: The rows of each report shown as they are (the first ones).
HEAD_ROWS = 8


@dataclass
class PageContext:
    """What a section maker may use.

    Attributes:
        client: the reporting client of the page (its API version is the job's first).
        start: the page's range start (tz-aware).
        end: the page's range end.
        compare: the comparison asked for (``previous_period``, ..., or a list of them), or
            None.
        accounts: the accounts the job's reports filter on, in order.
        subscribers: per account, the MSISDNs the job's reports filter on.
        frames: the report frames fetched so far, by report name.
        job: the job the page is made of (its ``inventory`` feeds the health flags).
    """

    client: ReportingClient
    start: datetime
    end: datetime
    compare: str | list[str] | None = None
    accounts: tuple[str, ...] = ()
    subscribers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    job: Job | None = None


#: A pluggable section: the context in, sections out (failures as sections with ``failed``).
SectionMaker = Callable[[PageContext], Sequence[Section]]


def report_section(
    id: str,
    title: str,
    frame: pd.DataFrame | None,
    *,
    purpose: str = "",
    error: str | None = None,
    chart: str | None = None,
    extra: str = "",
) -> Section:
    """A report's section: its chart, notes, summary, comparison and first rows.

    Args:
        id: the anchor.
        title: the heading.
        frame: the report's frame, or None when it failed.
        purpose: one line under the heading (plain text).
        error: what failed (plain text): the section is marked failed.
        chart: the chart's ``<img>`` when the caller drew it; by default it is drawn here
            from the frame (a frame that cannot be drawn gets a note instead).
        extra: an HTML fragment at the end (links, the request).

    Returns:
        The section.
    """
    parts = [f'<p class="purpose">{html.escape(purpose)}</p>'] if purpose else []
    if frame is not None:
        parts.append(chart if chart is not None else _chart(frame, title))
        parts += [f'<p class="note">{html.escape(n)}</p>' for n in period_notes(frame)]
        summary = summary_table(frame)
        parts.append(f"<h3>Summary</h3>{table_html(summary)}")
        compared = comparison_table(frame, summary=summary)
        if not compared.empty:  # like with like: totals with totals, means with means
            parts.append(f"<h3>Compared</h3>{table_html(compared)}")
        shown = min(HEAD_ROWS, len(frame))
        parts.append(
            f"<details><summary>First {shown} of {len(frame)} rows</summary>"
            f"{table_html(frame.head(HEAD_ROWS))}</details>"
        )
    parts.append(extra)
    return Section(id, title, "".join(parts), failed=error)


def failed_section(id: str, title: str, error: str, *, purpose: str = "") -> Section:
    """The section of a report that gave no frame: it names the report and the error."""
    return report_section(id, title, None, purpose=purpose, error=error)


def _chart(frame: pd.DataFrame, title: str) -> str:
    from ..plotting import plot

    if frame.empty:
        return '<p class="note">No rows: no chart.</p>'
    try:
        ax = plot(frame)
    except InputError as exc:
        return f'<p class="note">No chart: {html.escape(str(exc))}</p>'
    return chart_img(ax, f"chart of {title}")


def period_notes(frame: pd.DataFrame) -> list[str]:
    """What a reader must know about the frame's periods (plain text lines).

    The comparison (which period, rows without a counterpart), buckets covered only in part
    and provisional buckets (the service's present, "so far") of both periods, buckets the
    service added after the range, and parts that failed.
    """
    notes = []
    facts = frame.attrs.get("compare")
    periods: list[tuple[str, Any]] = [("this period", frame.attrs)]
    if isinstance(facts, dict):
        others = [o for o in facts.get("others") or [facts] if isinstance(o, dict)]
        for other in others:
            label = "the other period" if len(others) == 1 else period_title(str(other["name"]))
            notes += _compared_notes(other, label)
            periods.append((label, other))
    for label, attrs in periods:
        partial = attrs.get("partial_buckets")
        if partial:
            notes.append(f"Buckets covered only in part ({label}): {_listed(partial)}.")
        provisional = attrs.get("provisional_from")
        if provisional:
            notes.append(f"Provisional from {_when(provisional)} ({label}): figures so far.")
    for label, attrs in periods:
        failures = attrs.get("failures")
        if failures:
            notes.append(f"{len(failures)} part(s) of {label} failed; the figures lack them.")
    return notes


def _compared_notes(other: dict[str, Any], label: str) -> list[str]:
    """What a reader must know of one other period: which range, by which rule, the rows
    without a counterpart and those not compared like for like."""
    title = period_title(str(other.get("name") or other.get("mode") or "another period"))
    rule = f"{other['rule']}, " if other.get("rule") else ""
    notes = [
        f"Compared with {_shown(other.get('request'))} ({title}: {rule}from "
        f"{_when(other.get('start'))} up to {_when(other.get('end'))})."
    ]
    if other.get("unmatched") or other.get("unmatched_other"):
        notes.append(
            f"Rows without a counterpart: {other.get('unmatched', 0)} here (their comparison "
            f"is blank), {other.get('unmatched_other', 0)} in {label}."
        )
    if other.get("not_alike"):
        notes.append(
            f"{other['not_alike']} row(s) meet a row of {label} that holds a different share of "
            "its bucket's time (a partial or provisional bucket): their change is blank."
        )
    if other.get("prorated"):
        notes.append(
            f"{other['prorated']} total(s) of {label} scaled to the share of time of the row "
            "they meet (prorated)."
        )
    return notes


def _shown(request: object) -> str:
    """A request's range as titles print it (its last bucket included), in UTC."""
    from ..plotting import request_range_text

    return request_range_text(request, UTC) or "another period"


def _when(text: object) -> str:
    """An ISO timestamp as ``2024-03-03 00:00 UTC`` (other text as it is)."""
    try:
        moment = datetime.fromisoformat(str(text))
    except ValueError:
        return str(text)
    if moment.tzinfo is None:
        return str(text)
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def _listed(value: object) -> str:
    """Partial buckets (``{"start": ISO, "share": 0.68}`` each) as ``2024-03-03 00:00 UTC
    (68%)``."""
    items = value if isinstance(value, list | tuple) else [value]
    shown = []
    for item in items:
        if isinstance(item, dict) and "start" in item:
            share = item.get("share")
            part = f" ({float(share):.0%})" if isinstance(share, int | float) else ""
            shown.append(f"{_when(item['start'])}{part}")
        else:
            shown.append(str(item))
    return ", ".join(shown)


# -- health flags ---------------------------------------------------------------------------

_HEALTH = "edgereports.health"


def load_health() -> Any:
    """The health flags package, imported now (it is optional).

    Raises:
        ConfigError: the package is not installed with this edgereports (one line).
    """
    try:
        # By name: the package is optional, and a page without --health never loads it.
        return importlib.import_module(_HEALTH)
    except ModuleNotFoundError as exc:
        if exc.name not in (_HEALTH, "edgereports"):
            raise
        raise ConfigError(
            f"--health needs the health flags ({_HEALTH}), which edgereports {__version__} "
            "does not have; build the page without --health"
        ) from None


def job_inventory(job: Job | None) -> Inventory | None:
    """The inventory a job file's ``[inventory]`` names (None: none), read now.

    Raises:
        InputError: the table or the files it names are bad (before any request).
    """
    if job is None or job.inventory is None:
        return None
    from ..inventory.model import Inventory

    base = job.source.resolve().parent if job.source is not None else None
    where = str(job.source) if job.source is not None else f"job {job.name!r}"
    return Inventory.from_table(job.inventory, base=base, where=where)


def health_sections(context: PageContext) -> list[Section]:
    """One section of health flags per account of the page's reports: episodes first.

    With the job's ``[inventory]``, calls ``edgereports.health.health(client, inventory=...,
    start=..., end=...)`` for its account; else for the subscribers the job's reports name (a
    partial list, which the section says), and renders the flags with ``flags_html``.
    """
    module = load_health()

    def section(anchor: str, title: str, given: dict[str, Any]) -> Section:
        flags = module.health(context.client, **given, start=context.start, end=context.end)
        body = module.flags_html(flags, title=None)
        episodes = len(flags.attrs.get("episodes") or [])
        note = (
            f"{episodes} episode(s) and {len(flags)} flag(s) for {flags.attrs.get('subjects', 0)} "
            f"subscriber(s)."
        )
        return Section(anchor, title, f'<p class="purpose">{note}</p>{body}')

    inventory = job_inventory(context.job)
    return account_sections(context, inventory, ("health", "Health flags", "check"), section)


def account_sections(
    context: PageContext,
    inventory: Inventory | None,
    naming: tuple[str, str, str],
    section: Callable[[str, str, dict[str, Any]], Section],
) -> list[Section]:
    """One section per account of the page's reports (and of ``inventory``, the job's, read
    by the caller before any request): ``section(anchor, title, given)``, ``given`` being
    ``inventory=`` (for its account) or ``msisdn=`` (the subscribers the reports name: a
    partial list), with ``account_id=``. ``naming`` is the anchors' prefix, the titles'
    heading and the verb of what the section does with the subscribers. An account with
    neither, or whose section raised an :class:`EdgeReportsError`, gets a failed section
    saying why.
    """
    prefix, heading, verb = naming
    accounts = list(context.accounts)
    if inventory is not None and inventory.account_id and inventory.account_id not in accounts:
        accounts.append(inventory.account_id)
    sections = []
    for account in accounts:
        anchor, title = f"{prefix}-{account}", f"{heading} · account {account}"
        msisdns = context.subscribers.get(account, ())
        mine = inventory is not None and inventory.account_id in (None, account)
        if not mine and not msisdns:
            why = (
                "the job has no [inventory] of this account and its reports name no "
                f"subscriber (msisdn) of it to {verb}"
            )
            sections.append(failed_section(anchor, title, why))
            continue
        given: dict[str, Any] = {"inventory": inventory} if mine else {"msisdn": list(msisdns)}
        try:
            sections.append(section(anchor, title, {**given, "account_id": account}))
        except EdgeReportsError as exc:
            sections.append(failed_section(anchor, title, f"{type(exc).__name__}: {exc}"))
    return sections
