"""The engine of a run into Delta tables (``format = "delta"``), whole or as a unit of work."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..._dependencies import lazy_import
from ...errors import redact
from ..fanout import Churn, Values, fanout_values, shard_values
from ..job import Job
from ..plan import ExportWindow, RunScope
from ..reports import ReportJob
from ..summary import ExportSummary, ReportResult, WindowFailure
from ..windows import Fetched, contiguous_end, fetch_windows, plan_report, window_metadata
from .table import (
    held_values,
    open_table,
    record_values,
    remove_outside,
    retired_values,
    shard_marks,
    table_errors,
    table_watermark,
    write_days,
)

deltalake = lazy_import("deltalake", pip="edgereports[delta]")


__all__ = ["run_delta"]


@dataclass
class _Reach:
    """How far a report's table holds contiguous data from its start, as this run knows it
    (the watermark read before, extended by the ranges this process wrote whole: every
    shard of a sharded range)."""

    base: datetime
    done: dict[tuple[datetime, datetime], int] = dataclasses.field(default_factory=dict)

    @property
    def mark(self) -> datetime:
        """The contiguous end: the base, extended over the ranges written whole."""
        return contiguous_end(self.base, (key for key, left in self.done.items() if left == 0))

    def extend(self, window: ExportWindow) -> tuple[bool, datetime | None]:
        """Count ``window`` in: whether its range is whole now, and the new contiguous end
        if it moved (else ``None``)."""
        before = self.mark
        key = (window.start, window.end)
        self.done[key] = self.done.get(key, window.shards) - 1
        after = self.mark
        return self.done[key] == 0, after if after > before else None

    def retract(self, window: ExportWindow) -> None:
        """Count ``window`` out again (its commit failed)."""
        key = (window.start, window.end)
        self.done[key] = self.done.get(key, 0) + 1


@dataclass
class _Task:
    report: ReportJob
    result: ReportResult
    window: ExportWindow
    table: Any
    reach: _Reach | None  # None: a backfill or a shard unit (the watermark is not theirs)
    values: Values | None  # write only the rows of these fan-out values


@dataclass
class _Table:
    report: ReportJob
    location: str
    table: Any
    result: ReportResult
    change: Churn


def run_delta(job: Job, reports: list[ReportJob], scope: RunScope) -> ExportSummary:
    """Run a job (or units of it) into Delta tables: the engine of ``run_export`` for Delta.

    Each report's table is opened once (created first when missing) and its state read from
    that snapshot: identity, fan-out values held, watermark. Each window is fetched
    (``max_workers`` at once) and committed as it arrives, one commit at a time in this
    process (other processes commit beside it). Values the job added since the table was
    written are backfilled alone from the report's start; the rows of values it removed stay.
    A full refresh that wrote every window then removes the days outside its range (the table
    holds exactly the refreshed range).
    """
    dry_run, full_refresh = scope.dry_run, scope.full_refresh
    options = job.storage_options()  # the variables it names are read before any request
    secrets = job.storage.secrets()
    summary = ExportSummary(job=job.name, output=job.uri or job.output, dry_run=dry_run)
    tasks: list[_Task] = []
    tables: list[_Table] = []
    for r in reports:
        location = job.location(r.name)
        with table_errors(location, secrets):
            # created before any unit of it writes
            table = open_table(location, r, options, create=not dry_run)
            mark = table_watermark(table, r)
            held = held_values(table) if table is not None else None
            retired = retired_values(table) if table is not None else {}
        plan, change, narrowed = plan_report(r, scope, mark, held, retired)
        result = ReportResult(name=r.name, plan=plan, watermark_after=mark)
        summary.reports.append(result)
        tables.append(_Table(r, location, table, result, change))
        keep = fanout_values(r) if change.keeps_others and not full_refresh else None
        # a shard unit's days are whole only once every shard is in: it records its shard
        reach = None if scope.shard is not None else _Reach(mark or r.start)
        tasks += [_Task(r, result, w, table, reach, keep) for w in plan.windows]
        tasks += [_Task(narrowed, result, w, table, None, change.added) for w in plan.backfill]
    if dry_run:
        return summary
    if tasks:
        assert scope.client is not None
        windows = [(id(t.result), t.report, t.window) for t in tasks]

        def done(got: Fetched) -> None:
            _write(tasks[got.index], got, scope, secrets)

        workers = job.max_workers
        fetch_windows(windows, scope.client, workers, scope.progress, done, any_version=False)
    for t in tables:
        result = t.result
        if full_refresh and result.ok and result.plan.windows:
            _remove_outside(t, options, secrets)
        with table_errors(t.location, secrets):
            held, retired = t.change.after(backfilled=True)
            if full_refresh:  # the table holds exactly the job's values
                held, retired = fanout_values(t.report), {}
            changed = (held, retired) != (t.change.held, t.change.retired)
            if result.ok and changed and scope.unit is None:
                record_values(t.table, t.report, held, retired)
            t.table.update_incremental()
            result.watermark_after = table_watermark(t.table, t.report)
    return summary


def _remove_outside(t: _Table, options: dict[str, str], secrets: list[str]) -> None:
    """After a full refresh: remove the days outside its range (a failure is listed)."""
    r, result = t.report, t.result
    plan = result.plan
    metadata = {
        "report": r.name,
        "removed_outside": [plan.begin.isoformat(), plan.end.isoformat()],
    }
    try:
        result.removed += remove_outside(t.table, r, plan.begin, plan.end, metadata=metadata)
    except (OSError, ValueError, deltalake.exceptions.DeltaError) as exc:
        window = ExportWindow(plan.begin, plan.end)
        text = redact(str(exc), secrets)
        result.failures.append(WindowFailure(r.name, window, type(exc).__name__, text, None))


def _write(task: _Task, got: Fetched, scope: RunScope, secrets: list[str]) -> None:
    """Commit one window's frame to the table (one commit at a time in this process)."""
    r, window, result, checkpoint = task.report, task.window, task.result, scope.checkpoint
    result.fetch_seconds += got.seconds
    if got.frame is None:
        result.failures.append(got.failure(r.name, window, secrets))
        return
    frame = got.frame
    metadata = window_metadata(r, window)
    size = int(frame.memory_usage(deep=True).sum())
    result.largest_frame_bytes = max(result.largest_frame_bytes, size)
    started = time.monotonic()
    counted = False
    try:
        if checkpoint is not None:
            checkpoint("before-commit")
        whole, contiguous = (False, None) if task.reach is None else task.reach.extend(window)
        counted = task.reach is not None
        marks = []
        if scope.shard is not None:
            marks = shard_marks(r, window.start, window.end, window.shard, window.shards)
        wrote = write_days(
            task.table,
            frame,
            r,
            window.start,
            window.end,
            metadata=metadata,
            contiguous=contiguous,
            values=shard_values(r, window) or task.values,
            record_days=whole,  # the last shard of a range records its days
            marks=marks,
        )
    except (OSError, ValueError, deltalake.exceptions.DeltaError) as exc:
        if counted and task.reach is not None:  # the range is not whole after all
            task.reach.retract(window)
        result.failures.append(WindowFailure.of(r.name, window, exc, secrets))
        return
    finally:
        result.write_seconds += time.monotonic() - started
    if checkpoint is not None:
        checkpoint("after-commit")
    result.add(wrote)
