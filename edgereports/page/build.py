"""Build the report page of a job file: every report over the last N days, in one HTML file.

The reports are the export job's (the same TOML file), each over the page's range, a relative
period (``7d``, ``4w``, ``24h``) resolved against the service's clock.
"""

from __future__ import annotations

import dataclasses
import html
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .._version import __version__
from ..errors import AuthError, EdgeReportsError, InputError, QueryError, redact
from ..export.job import Job, ReportJob, load_job
from ..query.periods import MAX_PERIODS
from ..query.timegrid import relative_end, resolve_relative
from ..reporting.periods import COMPARE_MODES
from .html import Section, render_document
from .sections import PageContext, SectionMaker, failed_section, report_section

if TYPE_CHECKING:
    import pandas as pd

    from ..reporting import ReportingClient

__all__ = ["Page", "build_page", "check_last", "page_range"]

Notify = Callable[[str], object]


@dataclasses.dataclass
class Page:
    """A built page.

    Attributes:
        html: the document's text.
        sections: the sections, in order (failed ones have ``failed`` set).
        start: the range's start.
        end: the range's end.
        clock: the service's clock as its last answer stated it (None when it never answered).
        frames: the frames on the page, by report name (failed reports have none).
    """

    html: str
    sections: list[Section]
    start: datetime
    end: datetime
    clock: datetime | None
    frames: dict[str, pd.DataFrame] = dataclasses.field(default_factory=dict)

    @property
    def failures(self) -> list[Section]:
        """The sections that failed."""
        return [s for s in self.sections if s.failed]

    def write(self, path: str | Path) -> Path:
        """Write the page atomically (a reader never sees half a page)."""
        from ..export.files import atomic_write_bytes

        target = Path(path)
        atomic_write_bytes(target, self.html.encode("utf-8"))
        return target


def check_last(last: str) -> str:
    """Check a page's period: a relative period such as ``7d``, ``4w`` or ``24h``.

    Raises:
        InputError: anything else, and a period of none (``0d``).

    Example:
        >>> check_last("7d")
        '7d'
    """
    period = last.strip() if isinstance(last, str) else ""
    if relative_end(period) is None or int(period[:-1]) == 0:  # e.g. "7d": 7
        raise InputError(
            "--last must be a number of days, weeks or hours back, at least 1 (7d, 4w, 24h), "
            f"got {last!r}"
        )
    return period


def page_range(last: str, now: datetime) -> tuple[datetime, datetime]:
    """The range ``last`` names at ``now``: ``7d`` is the seven whole UTC days before today,
    ``24h`` the 24 whole hours before the current one.

    Example:
        >>> [t.isoformat() for t in page_range("7d", datetime(2024, 3, 10, 6, 30, tzinfo=UTC))]
        ['2024-03-03T00:00:00+00:00', '2024-03-10T00:00:00+00:00']
    """
    period = check_last(last)
    end_word = relative_end(period)
    assert end_word is not None
    start = resolve_relative(period, UTC, now)
    end = resolve_relative(end_word, UTC, now)
    assert start is not None and end is not None
    return start, end


def build_page(
    job: Job | str | Path,
    *,
    last: str,
    compare: str | Sequence[str] | None = None,
    client: ReportingClient | None = None,
    sections: Sequence[SectionMaker] = (),
    notify: Notify | None = None,
    title: str | None = None,
) -> Page:
    """Fetch every report of a job over the last period and lay them out as one page.

    Args:
        job: the job (or its TOML file), as ``edgereports export`` reads it.
        last: the period: ``7d``, ``4w``, ``24h``, ... (against the service's clock).
        compare: a period to compare with (``"previous_period"``, ``"previous_week"``,
            ``"previous_year"``, ``"previous_year_dow"``), a list of up to 4 of them, or None.
        client: the reporting client; by default one from the job's ``[connection]``
            (closed at the end).
        sections: more section makers, run after the reports (e.g.
            :func:`~edgereports.page.health_sections`).
        notify: called with one line per failed section, as it fails.
        title: the page's title (default: the job's name).

    Returns:
        The page (not yet written: :meth:`Page.write`).

    Raises:
        ConfigError: a bad job file or missing settings; InputError: a bad ``last`` or
            ``compare`` (all before any request).
    """
    spec = job if isinstance(job, Job) else load_job(job)
    check_last(last)
    compare = check_compare(compare)
    own = client is None
    if client is None:
        from ..export.client import make_client

        client = make_client(spec)
    clients = {client.api_version: client}
    try:
        start, end = page_range(last, client.service_now())
        accounts, subscribers = _subjects(spec)
        context = PageContext(client, start, end, compare, accounts, subscribers, job=spec)
        built = _report_sections(spec, context, clients, notify)
        for maker in sections:
            made = _made(maker, context)
            for s in made:
                if s.failed and notify is not None:
                    notify(f"{s.title}: {s.failed}")
            built += made
    finally:
        dates = [c.last_answer_date for c in clients.values()]
        for version, c in clients.items():
            if own or version != client.api_version:
                c.close()
    clock = max((d for d in dates if d is not None), default=None)
    facts = _facts(spec, last, start, end, compare, clock)
    text = render_document(title or f"{spec.name}: last {last}", facts, built)
    return Page(text, built, start, end, clock, context.frames)


def check_compare(compare: object) -> str | list[str] | None:
    """``compare`` of a page: None, a period's name or a list of up to 4 distinct names.

    Raises:
        QueryError: anything else (names the allowed values).
    """
    if compare is None:
        return None
    names = [compare] if isinstance(compare, str) else compare
    if not (
        isinstance(names, Sequence)
        and 1 <= len(names) <= MAX_PERIODS
        and all(isinstance(n, str) and n in COMPARE_MODES for n in names)
        and len(set(names)) == len(names)
    ):
        raise QueryError(
            f"compare must be one of {', '.join(COMPARE_MODES)}, or a list of up to "
            f"{MAX_PERIODS} of them, got {compare!r}",
            field="compare",
        )
    return compare if isinstance(compare, str) else list(names)


def _made(maker: SectionMaker, context: PageContext) -> list[Section]:
    """A maker's sections; a maker that fails is a failed section (the page is still made)."""
    name = getattr(maker, "__name__", type(maker).__name__)
    try:
        return list(maker(context))
    except Exception as exc:  # the rest of the page still goes out; the exit status says
        error = f"{type(exc).__name__}: {redact(exc)}"  # ours are redacted; others may not be
        return [failed_section(f"section-{name}", name.replace("_", " "), error)]


def _report_sections(
    job: Job, context: PageContext, clients: dict[str, ReportingClient], notify: Notify | None
) -> list[Section]:
    built: list[Section] = []
    refused: str | None = None
    for rj in job.reports:
        if rj.ledger is not None:  # an availability table: --availability shows the ledger
            continue
        anchor, title = f"report-{rj.name}", rj.name
        purpose = _purpose(rj)
        if refused is not None:
            section = failed_section(anchor, title, f"not fetched: {refused}", purpose=purpose)
        else:
            try:
                frame = _fetch(rj, context, clients)
            except EdgeReportsError as exc:
                error = f"{type(exc).__name__}: {exc}"
                if isinstance(exc, AuthError):  # every other report would be refused too
                    refused = error
                section = failed_section(anchor, title, error, purpose=purpose)
            else:
                context.frames[rj.name] = frame
                section = report_section(
                    anchor,
                    title,
                    frame,
                    purpose=purpose,
                    error=_partial(frame),
                    extra=_request(rj, context),
                )
        if section.failed and notify is not None:
            notify(f"report {rj.name}: {section.failed}")
        built.append(section)
    return built


def _fetch(
    rj: ReportJob, context: PageContext, clients: dict[str, ReportingClient]
) -> pd.DataFrame:
    report = rj.for_window(context.start, context.end)
    client = clients.get(report.api_version)
    if client is None:
        client = clients[report.api_version] = context.client.for_version(report.api_version)
    compare = None if rj.shape == "sim_count" else context.compare
    return client.fetch(report, on_error="collect", compare=compare)


def _partial(frame: pd.DataFrame) -> str | None:
    """What failed of a frame that came back in part (its period, or the compared one)."""
    compared = frame.attrs.get("compare") or {}
    for label, failures in (
        ("", frame.attrs.get("failures")),
        (" of the compared period", compared.get("failures")),
    ):
        if failures:
            first = failures[0]
            what = f"{first.get('error')}: {first.get('message')}"
            return f"{len(failures)} part(s){label} failed, first: {what}"
    return None


def _purpose(rj: ReportJob) -> str:
    request = rj.definition()
    metrics = ", ".join(
        f"{m.get('name')} {m.get('aggregation_type') or ''}".strip()
        for m in request.get("metrics", [])
    )
    parts = [metrics or "report", rj.granularity or "daily SIM counts"]
    if request.get("dimensions"):
        parts.append("by " + ", ".join(request["dimensions"]))
    if rj.shape == "sim_count":
        parts.append("no comparison for SIM counts")
    return " · ".join(parts)


def _request(rj: ReportJob, context: PageContext) -> str:
    body = html.escape(json.dumps(rj.for_window(context.start, context.end).to_request(), indent=2))
    return f"<details><summary>Request</summary><pre>{body}</pre></details>"


def _subjects(job: Job) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """The accounts the job's reports filter on, and per account the MSISDNs they name."""
    found: dict[str, dict[str, None]] = {}
    for rj in job.reports:
        msisdns = [str(m) for m in rj.report.filter_values("msisdn")]
        for value in rj.report.filter_values("account_id"):
            found.setdefault(str(value), {}).update(dict.fromkeys(msisdns))
    return tuple(found), {account: tuple(m) for account, m in found.items()}


def _facts(
    job: Job,
    last: str,
    start: datetime,
    end: datetime,
    compare: str | list[str] | None,
    clock: datetime | None,
) -> list[str]:
    from ..plotting import period_title, request_range_text

    grain = "HOUR" if last.strip().lower().endswith("h") else "DAY"
    shown = request_range_text(
        {
            "start_date_time": start.isoformat(),
            "end_date_time": end.isoformat(),
            "granularity": grain,
        },
        UTC,
    )
    facts = [
        f"Range: the last {last}, {shown}: from {start:%Y-%m-%d %H:%M} up to "
        f"{end:%Y-%m-%d %H:%M} UTC",
    ]
    if compare is not None:
        names = [compare] if isinstance(compare, str) else compare
        facts.append(f"Compared with the {'; the '.join(period_title(n) for n in names)}")
    stated = f"{clock:%Y-%m-%d %H:%M:%S} UTC" if clock is not None else "unknown (no answer)"
    facts.append(f"Service clock (the Date of its last answer): {stated}")
    where = f" · job {job.source.name}" if job.source is not None else ""
    facts.append(f"edgereports {__version__}{where} · {len(job.reports)} reports")
    return facts
