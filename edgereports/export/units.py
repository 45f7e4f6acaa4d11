"""Units of work: one report x a range of UTC days, run alone, idempotently, on any machine.

A unit fetches the days ``[start, end)`` of one report (half-open, like every range here) and
replaces exactly those days: for Delta, one overwrite with a predicate on ``day`` per window;
for Parquet, today's atomic replace of each day's file, under the report's lock, and the
watermark moves only when the unit joins the data already there (never over a gap). Running a
unit twice changes nothing; several processes or machines running Delta units at once, disjoint
or overlapping, give the complete table (no lost commit, no duplicate row).

An orchestrator fans units out (``examples/`` has a Dagster asset, an Airflow DAG and a shell
loop); :func:`split_units` lists them and :func:`run_unit` runs one.

Example:
    >>> for unit in split_units("job.toml", "2024-06-01", "2024-06-08"):  # doctest: +SKIP
    ...     run_unit("job.toml", unit.report, unit.start, unit.end)
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from .._version import __version__
from ..errors import ConfigError, EdgeReportsError, redact
from ..progress import open_progress
from .delta import (
    check_definition,
    create_table,
    is_delta,
    remove_outside,
    table_errors,
    table_watermark,
    write_days,
)
from .job import Job, load_job
from .plan import ExportWindow, ReportPlan, floor_day, plan_export, to_utc
from .reports import ReportJob
from .summary import ExportSummary, ReportResult, WindowFailure

if TYPE_CHECKING:
    from .run import Fetcher

__all__ = [
    "DELTA_CHECKPOINTS",
    "UNIT",
    "Unit",
    "plan_unit",
    "run_delta",
    "run_unit",
    "split_units",
    "unit_start",
]

#: The ``reason`` of a unit's plan.
UNIT = "unit"
#: The points of the Delta write path a ``checkpoint`` callback is called at.
DELTA_CHECKPOINTS = ("before-commit", "after-commit")
_DAY = timedelta(days=1)


@dataclass(frozen=True, order=True)
class Unit:
    """One unit of work: the report ``report`` over the UTC days ``[start, end)``."""

    report: str
    start: date
    end: date

    def __str__(self) -> str:
        return f"{self.report} {self.start.isoformat()} → {self.end.isoformat()}"


def split_units(
    job: str | Path | Job,
    start: datetime | date | str,
    end: datetime | date | str,
    *,
    days: int = 1,
    only: str | Sequence[str] | None = None,
) -> list[Unit]:
    """The units that cover ``[start, end)`` for every report (or ``only`` these), ``days`` each.

    Args:
        job: the job file, or a :class:`Job`.
        start: the first UTC day (rounded down to a UTC midnight).
        end: the end (exclusive; rounded down to a UTC midnight).
        days: UTC days per unit.
        only: the report name(s) to cover; default every report of the job.

    Returns:
        The units, report by report, oldest first; a report starts no earlier than its start.

    Raises:
        ConfigError: a bad job, range, report name or ``days``.

    Example:
        >>> split_units("job.toml", "2024-06-01", "2024-06-03")  # doctest: +SKIP
        [Unit(report='usage_daily', start=datetime.date(2024, 6, 1), ...), ...]
    """
    spec = job if isinstance(job, Job) else load_job(job)
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise ConfigError(f"days must be a whole number of at least 1, got {days!r}")
    lo, hi = floor_day(to_utc(start, "start")), floor_day(to_utc(end, "end"))
    names = [only] if isinstance(only, str) else list(only or [r.name for r in spec.reports])
    out: list[Unit] = []
    for name in dict.fromkeys(names):
        cursor = max(lo, spec.report(name).start)
        while cursor < hi:
            nxt = min(cursor + days * _DAY, hi)
            out.append(Unit(name, cursor.date(), nxt.date()))
            cursor = nxt
    return out


def run_unit(
    job: str | Path | Job,
    report: str,
    start: datetime | date | str,
    end: datetime | date | str | None = None,
    *,
    client: Fetcher | None = None,
    now: datetime | None = None,
) -> ExportSummary:
    """Run one unit of work: fetch the report's UTC days ``[start, end)`` and replace them.

    The same as ``edgereports export JOB --only REPORT --from START --until END``. Days past
    the last complete bucket are not fetched.

    Args:
        job: the job file, or a :class:`Job`.
        report: the report's name.
        start: the first UTC day.
        end: the end (exclusive); default: one day after ``start``.
        client: the client to fetch with (default: one from the job's connection).
        now: the current instant (default: the real time).

    Returns:
        The summary; ``summary.ok`` is False when a window failed (run the unit again).

    Raises:
        ConfigError: a bad job, report or range, or ``deltalake`` missing for Delta.
        ExportLocked: a Parquet unit found the report locked by another run.

    Example:
        >>> run_unit("job.toml", "usage_daily", "2024-06-01").ok  # doctest: +SKIP
        True
    """
    from .run import run_export

    first = to_utc(start, "start")
    return run_export(
        job,
        only=report,
        start=first,
        until=to_utc(end, "end") if end is not None else floor_day(first) + _DAY,
        client=client,
        now=now,
        progress=False,
    )


def unit_start(
    start: datetime | date | str | None, until: datetime | None, full_refresh: bool
) -> datetime | None:
    """Check ``--from`` (with ``--until``) and return it as a UTC midnight (None: not a unit).

    Raises:
        ConfigError: an unreadable date, ``--from`` not before ``--until``, or a full refresh.
    """
    if start is None:
        return None
    begin = floor_day(to_utc(start, "--from"))
    if full_refresh:
        raise ConfigError(
            "--from runs the days [--from, --until) as a unit; it does not combine with "
            "--full-refresh"
        )
    if until is not None and floor_day(until) <= begin:
        raise ConfigError(
            f"--from {begin.date()} must be before --until {floor_day(until).date()} "
            "(the range is half-open: --from D --until D+1 is the one day D)"
        )
    return begin


def plan_unit(
    report: ReportJob,
    watermark: datetime | None,
    *,
    start: datetime,
    now: datetime,
    until: datetime | None,
) -> ReportPlan:
    """The windows of one unit: ``[start, until)`` cut to the report's start and last bucket."""
    first = dataclasses.replace(report, start=max(report.start, floor_day(start)))
    plan = plan_export(first, None, now=now, until=until)
    return dataclasses.replace(plan, watermark=watermark, reason=UNIT)


@dataclass
class _Task:
    report: ReportJob
    location: str
    result: ReportResult
    window: ExportWindow
    options: dict[str, str]
    secrets: list[str]


def run_delta(
    job: Job,
    reports: list[ReportJob],
    *,
    start: datetime | None,
    until: datetime | None,
    now: datetime,
    dry_run: bool,
    full_refresh: bool,
    client: Fetcher | None,
    progress: bool | None,
    checkpoint: Callable[[str], None] | None,
) -> ExportSummary:
    """Run a job (or units of it) into Delta tables: the engine of ``run_export`` for Delta.

    Each report's table is created first; the watermark comes from the table; each window is
    fetched (``max_workers`` at once) and committed as it arrives, one commit at a time in this
    process (other processes commit beside it). A full refresh that wrote every window then
    removes the days outside its range (the table holds exactly the refreshed range).
    """
    from .run import make_client

    started = time.monotonic()
    options = job.storage_options()  # the variables it names are read before any request
    secrets = job.storage.secrets()
    summary = ExportSummary(job=job.name, output=job.uri or job.output, dry_run=dry_run)
    tasks: list[_Task] = []
    for r in reports:
        location = job.location(r.name)
        with table_errors(location, secrets):
            if dry_run:
                if is_delta(location, options):
                    check_definition(location, r, options)
            else:
                create_table(location, r, options)  # before any unit of it writes
            mark = table_watermark(location, r, options)
        if start is not None:
            plan = plan_unit(r, mark, start=start, now=now, until=until)
        else:
            plan = plan_export(r, mark, now=now, until=until, full_refresh=full_refresh)
        result = ReportResult(name=r.name, plan=plan, watermark_after=mark)
        summary.reports.append(result)
        tasks += [_Task(r, location, result, w, options, secrets) for w in plan.windows]
    if tasks and not dry_run:
        if client is not None:
            _run_tasks(tasks, client, job.max_workers, progress, checkpoint)
        else:
            with make_client(job) as own:
                _run_tasks(tasks, own, job.max_workers, progress, checkpoint)
        for result, r in zip(summary.reports, reports, strict=True):
            location = job.location(r.name)
            if full_refresh and result.ok and result.plan.windows:
                _remove_outside(location, r, result, options, secrets)
            with table_errors(location, secrets):
                result.watermark_after = table_watermark(location, r, options)
    summary.seconds = time.monotonic() - started
    return summary


def _remove_outside(
    location: str, r: ReportJob, result: ReportResult, options: dict[str, str], secrets: list[str]
) -> None:
    """After a full refresh: remove the days outside its range (a failure is listed)."""
    import deltalake

    plan = result.plan
    metadata = {
        "report": r.name,
        "removed_outside": [plan.begin.isoformat(), plan.end.isoformat()],
        "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    try:
        result.removed += remove_outside(
            location, r, plan.begin, plan.end, metadata=metadata, storage_options=options
        )
    except (OSError, ValueError, deltalake.exceptions.DeltaError) as exc:
        window = ExportWindow(plan.begin, plan.end)
        text = redact(str(exc), secrets)
        result.failures.append(WindowFailure(r.name, window, type(exc).__name__, text, None))


def _run_tasks(
    tasks: list[_Task],
    client: Fetcher,
    workers: int,
    progress: bool | None,
    checkpoint: Callable[[str], None] | None,
) -> None:
    from .run import _weight

    commit = threading.Lock()  # commits of one process one at a time: no race among them
    bar = open_progress(progress, len(tasks), "export", unit="window", min_items=1)
    weight = max(_weight(t.report, workers) for t in tasks)

    def work(task: _Task) -> None:
        try:
            _unit(task, client, commit, checkpoint)
        finally:
            bar.update(1)

    try:
        with ThreadPoolExecutor(max(1, workers // weight), thread_name_prefix="unit") as pool:
            for done in pool.map(work, tasks):
                del done
    finally:
        bar.close()


def _unit(
    task: _Task,
    client: Fetcher,
    commit: threading.Lock,
    checkpoint: Callable[[str], None] | None,
) -> None:
    import deltalake

    r, window, result = task.report, task.window, task.result
    started = time.monotonic()
    try:
        frame = client.fetch(
            r.for_window(window.start, window.end), window=timedelta(days=r.window_days)
        )
    except EdgeReportsError as exc:
        with commit:
            result.fetch_seconds += time.monotonic() - started
            _failed(task, exc)
        return
    fetched = time.monotonic() - started
    metadata = {
        "report": r.name,
        "request": r.for_window(window.start, window.end).to_request(),
        "window": [window.start.isoformat(), window.end.isoformat()],
        "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "toolkit_version": __version__,
    }
    with commit:  # also guards the result, which every thread of the report updates
        result.fetch_seconds += fetched
        size = int(frame.memory_usage(deep=True).sum())
        result.largest_frame_bytes = max(result.largest_frame_bytes, size)
        started = time.monotonic()
        try:
            if checkpoint is not None:
                checkpoint("before-commit")
            wrote = write_days(
                task.location,
                frame,
                r,
                window.start,
                window.end,
                metadata=metadata,
                storage_options=task.options,
            )
        except (OSError, ValueError, deltalake.exceptions.DeltaError) as exc:
            _failed(task, exc)
            return
        finally:
            result.write_seconds += time.monotonic() - started
        if checkpoint is not None:
            checkpoint("after-commit")
        result.windows_written += 1
        result.rows += wrote.rows
        result.files += wrote.written
        result.removed += wrote.empty


def _failed(task: _Task, error: BaseException) -> None:
    text = redact(str(error), task.secrets)
    failure = WindowFailure(task.report.name, task.window, type(error).__name__, text, error)
    task.result.failures.append(failure)
