"""The engine of a run into Delta tables (``format = "delta"``), whole or as a unit of work.

Each report's table is created first; the watermark comes from the table; the windows are
fetched concurrently and each is committed as it arrives, one commit at a time in a process
(other processes, running other units, commit beside it).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from .._version import __version__
from ..errors import EdgeReportsError, redact
from ..progress import open_progress
from .client import Fetcher, make_client, window_weight
from .delta import (
    check_definition,
    create_table,
    is_delta,
    remove_outside,
    table_errors,
    table_watermark,
    write_days,
)
from .job import Job
from .plan import ExportWindow, RunScope
from .reports import ReportJob
from .summary import ExportSummary, ReportResult, WindowFailure

__all__ = ["DELTA_CHECKPOINTS", "run_delta"]

#: The points of the Delta write path a ``checkpoint`` callback is called at.
DELTA_CHECKPOINTS = ("before-commit", "after-commit")


@dataclass
class _Task:
    report: ReportJob
    location: str
    result: ReportResult
    window: ExportWindow
    options: dict[str, str]
    secrets: list[str]


def run_delta(job: Job, reports: list[ReportJob], scope: RunScope) -> ExportSummary:
    """Run a job (or units of it) into Delta tables: the engine of ``run_export`` for Delta.

    Each report's table is created first; the watermark comes from the table; each window is
    fetched (``max_workers`` at once) and committed as it arrives, one commit at a time in this
    process (other processes commit beside it). A full refresh that wrote every window then
    removes the days outside its range (the table holds exactly the refreshed range).
    """
    dry_run, full_refresh, client = scope.dry_run, scope.full_refresh, scope.client
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
        plan = scope.plan(r, mark)
        result = ReportResult(name=r.name, plan=plan, watermark_after=mark)
        summary.reports.append(result)
        tasks += [_Task(r, location, result, w, options, secrets) for w in plan.windows]
    if tasks and not dry_run:
        if client is not None:
            _run_tasks(tasks, client, job.max_workers, scope.progress, scope.checkpoint)
        else:
            with make_client(job) as own:
                _run_tasks(tasks, own, job.max_workers, scope.progress, scope.checkpoint)
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
    commit = threading.Lock()  # commits of one process one at a time: no race among them
    bar = open_progress(progress, len(tasks), "export", unit="window", min_items=1)
    weight = max(window_weight(t.report, workers) for t in tasks)

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
        result.bytes_written += wrote.bytes
        result.removed += wrote.empty


def _failed(task: _Task, error: BaseException) -> None:
    text = redact(str(error), task.secrets)
    failure = WindowFailure(task.report.name, task.window, type(error).__name__, text, error)
    task.result.failures.append(failure)
