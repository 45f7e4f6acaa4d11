"""The run loop of every destination: plan, fetch, cut into days, hand each window over.

For each report the engine opens its table once and reads its state from it (what it
records, its marks, so its watermark), plans the report's windows (and the backfill of added
fan-out values), fetches them (``max_workers`` at once) and, as each arrives, cuts its rows
into UTC days with the time grid (v1 and v2 alike) and has the destination write them with the
marks that say what the write completes. A window that fails is listed and not written; the
watermark moves only over what is written without a gap from the report's start. A full
refresh that wrote every window then removes the days outside its range.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime

from .days import split_days
from .destination import Destination, Table
from .fanout import Churn, Values, fanout_values, shard_values
from .job import Job
from .ledger import Marks, contiguous_key, day_marks, seconds, shard_marks, watermark
from .plan import ExportWindow, ReportPlan, RunScope
from .reports import ReportJob
from .summary import ExportSummary, ReportResult, WindowFailure
from .windows import Fetched, contiguous_end, fetch_windows, plan_report, window_metadata

__all__ = ["run_reports"]


@dataclass
class _Reach:
    """How far a report's table holds contiguous data from its start, as this run knows it
    (the base, extended by the ranges this process wrote whole: every shard of a range)."""

    base: datetime
    done: dict[tuple[datetime, datetime], int] = field(default_factory=dict)

    @property
    def mark(self) -> datetime:
        """The contiguous end: the base, extended over the ranges written whole."""
        return contiguous_end(self.base, (key for key, left in self.done.items() if left == 0))

    def extend(self, window: ExportWindow) -> tuple[bool, datetime | None]:
        """Count ``window`` in: whether its range is whole now, and the new contiguous end if
        it moved (else ``None``)."""
        before = self.mark
        key = (window.start, window.end)
        self.done[key] = self.done.get(key, window.shards) - 1
        after = self.mark
        return self.done[key] == 0, after if after > before else None

    def retract(self, window: ExportWindow) -> None:
        """Count ``window`` out again (its write failed)."""
        key = (window.start, window.end)
        self.done[key] = self.done.get(key, 0) + 1


@dataclass
class _Report:
    """One report in this run: its table, plan, result and fan-out values."""

    report: ReportJob
    table: Table | None
    plan: ReportPlan
    result: ReportResult
    change: Churn
    narrowed: ReportJob
    backfilled: int = 0


@dataclass
class _Task:
    run: _Report
    report: ReportJob
    window: ExportWindow
    reach: _Reach | None  # None: a backfill or a shard unit (the watermark is not theirs)
    values: Values | None  # write only the rows of these fan-out values
    backfill: bool = False


def run_reports(
    destination: Destination, job: Job, reports: list[ReportJob], scope: RunScope
) -> ExportSummary:
    """Run (or plan: a dry run) the reports of ``job`` into ``destination``.

    Every table is opened and checked before anything is locked or fetched; the destination's
    lock is then held while the windows are fetched and written.
    """
    summary = ExportSummary(job=job.name, output=job.uri or job.output, dry_run=scope.dry_run)
    secrets = job.storage.secrets()
    if scope.dry_run:
        for r in reports:
            summary.reports.append(_open(destination, job, r, scope, secrets, create=False).result)
        return summary
    for r in reports:  # every table is checked before the lock is taken or a file written
        _open(destination, job, r, scope, secrets, create=False)
    days = None
    if scope.unit is not None:  # a unit locks its days: units of other days run beside it
        days = {}
        for r in reports:
            plan = scope.plan(r, None)
            days[r.name] = [d for w in plan.windows for d in w.days()]
    with destination.lock(job, reports, days):
        runs = [_open(destination, job, r, scope, secrets, create=True) for r in reports]
        summary.reports += [run.result for run in runs]
        tasks = [t for run in runs for t in _tasks(run, scope)]
        if tasks:
            assert scope.client is not None

            def done(got: Fetched) -> None:
                _write(destination, tasks[got.index], got, scope, secrets)

            windows = [(id(t.run), t.report, t.window) for t in tasks]
            fetch_windows(windows, scope.client, job.max_workers, scope.progress, done)
        for run in runs:
            _finish(destination, job, run, scope, secrets)
    return summary


def _open(
    destination: Destination,
    job: Job,
    r: ReportJob,
    scope: RunScope,
    secrets: list[str],
    *,
    create: bool,
) -> _Report:
    """Open the report's table, read its state and plan the report."""
    location = job.location(r.name)
    with destination.guard(location, secrets):
        table = destination.open(
            job, r, create=create, full_refresh=scope.full_refresh, now=scope.now
        )
        recorded = table.recorded() if table is not None else None
        mark = watermark(table, r)
        # a run fetches the damaged days again too; a unit gets exactly its days (and does not
        # look: that would read every day of the table)
        again = table is not None and not scope.full_refresh and scope.unit is None
        damaged = table.damaged() if again and table is not None else []
    held = recorded.held if recorded is not None else None
    retired = (recorded.retired if recorded is not None else None) or {}
    plan, change, narrowed = plan_report(r, scope, mark, held, retired, damaged)
    result = ReportResult(name=r.name, plan=plan, watermark_after=mark)
    return _Report(r, table, plan, result, change, narrowed)


def _tasks(run: _Report, scope: RunScope) -> list[_Task]:
    """The windows of a report in this run, and what each may record."""
    r, plan, change = run.report, run.plan, run.change
    keep = fanout_values(r) if change.keeps_others and not scope.full_refresh else None
    reach = None
    if scope.shard is None:  # a shard unit's days are whole only once every shard is in
        base = plan.begin if scope.full_refresh else (plan.watermark or r.start)
        reach = _Reach(base)
    tasks = [_Task(run, r, w, reach, keep) for w in plan.windows]
    tasks += [_Task(run, run.narrowed, w, None, change.added, True) for w in plan.backfill]
    return tasks


def _write(
    destination: Destination, task: _Task, got: Fetched, scope: RunScope, secrets: list[str]
) -> None:
    """Write one window's frame (one write at a time in this process)."""
    r, window, result = task.report, task.window, task.run.result
    result.fetch_seconds += got.seconds
    if got.frame is None:
        result.failures.append(got.failure(r.name, window, secrets))
        return
    frame = got.frame
    result.largest_frame_bytes = max(
        result.largest_frame_bytes, int(frame.memory_usage(deep=True).sum())
    )
    table = task.run.table
    assert table is not None
    started = time.monotonic()
    counted = False
    try:
        rows = split_days(
            frame,
            r.shape,
            window.days(),
            window.start,
            window.end,
            stamps_at_end=r.report.stamps_at_end,
        )
        del frame
        got.frame = None  # the window's rows are held by ``rows`` alone now
        whole, contiguous = (False, None) if task.reach is None else task.reach.extend(window)
        counted = task.reach is not None
        marks = Marks(exact=scope.full_refresh)
        if whole:  # the last shard of a range records its days
            marks |= Marks(day_marks(r, window.days(), window.end))
        if contiguous is not None:
            marks |= Marks({contiguous_key(r): seconds(contiguous)})
        if scope.shard is not None:
            marks |= Marks(shard_marks(r, window.start, window.end, window.shard, window.shards))
        if scope.checkpoint is not None:
            scope.checkpoint("before-commit")
        wrote = table.write(
            rows,
            values=shard_values(r, window) or task.values,
            marks=marks,
            metadata=window_metadata(r, window),
        )
    except destination.write_errors as exc:
        if counted and task.reach is not None:  # the range is not whole after all
            task.reach.retract(window)
        result.failures.append(WindowFailure.of(r.name, window, exc, secrets))
        return
    finally:
        result.write_seconds += time.monotonic() - started
    if scope.checkpoint is not None:
        scope.checkpoint("after-commit")
    result.add(wrote)
    if task.backfill:
        task.run.backfilled += 1


def _finish(
    destination: Destination, job: Job, run: _Report, scope: RunScope, secrets: list[str]
) -> None:
    """After the windows: remove outside a full refresh's range, record the values held, and
    read the watermark the table holds now."""
    r, result, table = run.report, run.result, run.table
    assert table is not None
    plan = result.plan
    if scope.full_refresh and result.ok and plan.windows:
        span = [plan.begin.isoformat(), plan.end.isoformat()]
        metadata = {"report": r.name, "removed_outside": span}
        try:
            result.removed += table.remove_outside(plan.begin, plan.end, metadata=metadata)
        except destination.write_errors as exc:
            window = ExportWindow(plan.begin, plan.end)
            result.failures.append(WindowFailure.of(r.name, window, exc, secrets))
    with destination.guard(table.location, secrets):
        complete = run.backfilled == len(plan.backfill)
        held, retired = run.change.after(backfilled=complete)
        if scope.full_refresh:  # the table holds exactly the job's values
            held, retired = fanout_values(r), {}
        recorded = table.recorded()
        changed = (held, retired) != (recorded.held, recorded.retired or {})
        if changed and scope.unit is None and (result.ok or not scope.full_refresh):
            try:
                table.record_values(held, retired)
            except destination.write_errors as exc:
                window = plan.backfill[-1] if plan.backfill else ExportWindow(plan.begin, plan.end)
                result.failures.append(WindowFailure.of(r.name, window, exc, secrets))
        table.refresh()
        result.watermark_after = watermark(table, r)
