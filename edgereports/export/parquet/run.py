"""A run into Parquet day files: each window is written to its partitions as it arrives.

A window that fails is listed and not written (its days keep their previous complete files);
the others are written; the watermark moves only over the unbroken run of written windows from
the plan's start, so the next run retries from the first failure.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..client import Fetcher
from ..fanout import Churn, Values, fanout_values, shard_values, values_minus, values_plus
from ..job import Job
from ..plan import UNIT, ReportPlan, RunScope, midnight
from ..reports import ReportJob
from ..summary import ExportSummary, ReportResult, WindowFailure
from ..windows import Fetched, contiguous_end, fetch_windows, plan_report, window_metadata
from .lock import ExportLock, state_lock
from .state import (
    HELD_KEY,
    RETIRED_KEY,
    SHARDS_KEY,
    ReportState,
    held_values,
    load_state,
    report_state,
    retired_values,
    save_state,
)
from .writer import (
    damaged_days,
    partitions,
    remove_partition,
    sweep_temporaries,
    write_window,
)

if TYPE_CHECKING:
    import pandas as pd


__all__ = ["run_parquet"]


@dataclass
class _Progress:
    """The per-report state of a run while it goes."""

    report: ReportJob
    plan: ReportPlan
    report_dir: Path
    state: ReportState
    result: ReportResult
    done: set[int] = field(default_factory=set)
    #: the fan-out values the state records as held whole, and those whose rows it keeps
    held: Values = field(default_factory=dict)
    retired: Values = field(default_factory=dict)
    #: write only the rows of these fan-out values (the others' rows stay)
    values: Values | None = None
    #: a backfill of added values: its windows do not move the watermark
    backfill: _Progress | None = None


def run_parquet(spec: Job, chosen: list[ReportJob], scope: RunScope) -> ExportSummary:
    """Run the chosen reports of ``spec`` into their Parquet day files (or plan them: a dry
    run); the states are checked before the lock is taken or a file written."""
    dirs = {r.name: spec.output / r.name for r in chosen}
    summary = ExportSummary(job=spec.name, output=spec.output, dry_run=scope.dry_run)

    def plan(r: ReportJob) -> tuple[ReportState, ReportPlan, Churn, ReportJob]:
        state = report_state(spec, r, dirs[r.name], now=scope.now, full_refresh=scope.full_refresh)
        # a unit gets exactly its days; a run re-fetches the damaged days too
        unit = scope.unit is not None
        damaged = () if scope.full_refresh or unit else damaged_days(dirs[r.name])
        planned = plan_report(
            r, scope, state.watermark, held_values(state), retired_values(state), damaged
        )
        return state, *planned

    if scope.dry_run:
        for r in chosen:
            summary.reports.append(ReportResult(name=r.name, plan=plan(r)[1]))
        return summary
    client = scope.client
    assert client is not None
    days: dict[Path, list[date]] | None = None
    for r in chosen:  # every state is checked before the lock is taken or a file written
        planned = plan(r)[1]
        if scope.unit is not None:  # a unit locks its days: units of other days run beside it
            days = days or {}
            days[dirs[r.name]] = [d for w in planned.windows for d in w.days()]
    with ExportLock(dirs.values(), job=str(spec.source or spec.name), days=days):
        runs: list[_Progress] = []
        for r in chosen:
            state, plan_, change, narrowed = plan(r)
            sweep_temporaries(dirs[r.name], None if days is None else days[dirs[r.name]])
            result = ReportResult(name=r.name, plan=plan_, watermark_after=state.watermark)
            main = _Progress(r, plan_, dirs[r.name], state, result)
            if scope.full_refresh:
                main.held = fanout_values(r)
            else:
                main.held, main.retired = change.after(backfilled=False)
                main.values = fanout_values(r) if change.keeps_others else None
            runs.append(main)
            if plan_.backfill:
                own = dataclasses.replace(
                    plan_, windows=plan_.backfill, backfill=(), reason="backfill"
                )
                back = _Progress(narrowed, own, dirs[r.name], state, result, values=change.added)
                main.backfill = back
                runs.append(back)
            summary.reports.append(result)
        if any(p.plan.windows for p in runs):
            _run_all(runs, client, spec.max_workers, scope)
    return summary


def _run_all(runs: list[_Progress], client: Fetcher, workers: int, scope: RunScope) -> None:
    order = [(n, p, i) for n, p in enumerate(runs) for i in range(len(p.plan.windows))]

    def done(got: Fetched) -> None:
        _, p, i = order[got.index]
        p.result.fetch_seconds += got.seconds
        if got.frame is None:
            p.result.failures.append(got.failure(p.report.name, p.plan.windows[i]))
        else:
            _write(p, i, got.frame, scope.checkpoint)

    windows = [(n, p.report, p.plan.windows[i]) for n, p, i in order]
    fetch_windows(windows, client, workers, scope.progress, done)
    for p in runs:
        if p.backfill is not None and len(p.backfill.done) == len(p.backfill.plan.windows):
            _record_backfill(p)
    if scope.full_refresh:
        for p in runs:
            if p.result.ok and p.plan.windows:
                _prune(p)


def _write(
    p: _Progress, index: int, frame: pd.DataFrame, checkpoint: Callable[[str], None] | None
) -> None:
    window = p.plan.windows[index]
    size = int(frame.memory_usage(deep=True).sum())
    p.result.largest_frame_bytes = max(p.result.largest_frame_bytes, size)
    metadata = window_metadata(p.report, window)
    started = time.monotonic()
    try:
        wrote = write_window(
            frame,
            p.report_dir,
            window.days(),
            shape=p.report.shape,
            start=window.start,
            end=window.end,
            metadata=metadata,
            checkpoint=checkpoint,
            stamps_at_end=p.report.report.stamps_at_end,
            values=shard_values(p.report, window) or p.values,
        )
    except (OSError, ValueError) as exc:
        p.result.write_seconds += time.monotonic() - started
        _fail(p, index, exc)
        return
    p.result.write_seconds += time.monotonic() - started
    p.result.add(wrote)
    p.done.add(index)
    if p.plan.reason == "backfill":
        return  # the watermark is the main windows'; the values are recorded when all are in
    if wrote.dimensions or not p.state.columns:
        p.state = dataclasses.replace(p.state, shape=p.report.shape, columns=wrote.dimensions)
    if checkpoint is not None:
        checkpoint("after-move-before-state")
    try:
        _advance(p)
    except OSError as exc:  # the window is on disk; the next run fetches it again
        p.done.discard(index)
        _fail(p, index, exc)


def _advance(p: _Progress) -> None:
    """Move the watermark over the unbroken run of written windows and save the state."""
    prefix = 0
    while prefix in p.done:
        prefix += 1
    if prefix == 0:
        return
    windows = p.plan.windows
    # over the shards of a range: its days are complete once every shard is written
    pending = windows[prefix] if prefix < len(windows) else None
    end = pending.start if pending is not None and pending.shard else windows[prefix - 1].end
    shard_unit = p.plan.reason == UNIT and windows[0].shards > 1
    with state_lock(p.report_dir):  # units of other days may save theirs at the same time
        if p.plan.reason == UNIT:
            disk = load_state(p.report_dir)
            extra = {**p.state.extra, SHARDS_KEY: disk.extra.get(SHARDS_KEY, {})}
            p.state = dataclasses.replace(p.state, watermark=disk.watermark, extra=extra)
        old = p.state.watermark
        full = p.plan.reason == "full refresh"
        mark: datetime | None = end if full or old is None else max(old, end)
        if p.plan.reason == UNIT and p.plan.begin > (old or p.report.start):
            mark = old  # a unit past a gap: the days between are not written
        ranges = dict(p.state.extra.get(SHARDS_KEY) or {})
        if shard_unit:  # its range is whole once every shard is in
            mark = old
            for w in windows[:prefix]:
                key = f"{w.start.isoformat()}/{w.end.isoformat()}/{w.shards}"
                ranges[key] = sorted({*ranges.get(key, []), w.shard})
        mark = _over_shard_ranges(mark, p.report.start, ranges)
        if ranges != (p.state.extra.get(SHARDS_KEY) or {}):
            p.state = dataclasses.replace(p.state, extra={**p.state.extra, SHARDS_KEY: ranges})
        recorded = (p.state.extra.get(HELD_KEY), p.state.extra.get(RETIRED_KEY))
        now = (_listed(p.held), _listed(p.retired))
        if mark == old and p.state.definition is not None and recorded == now and not shard_unit:
            return
        _save(p, mark)


def _over_shard_ranges(
    mark: datetime | None, start: datetime, ranges: dict[str, list[int]]
) -> datetime | None:
    """``mark`` moved over the ranges whose every shard a shard unit wrote, from where it is
    (or the report's start) on."""
    whole = []
    for key, shards in ranges.items():
        first, last, count = key.split("/")
        if len(shards) == int(count):
            whole.append((datetime.fromisoformat(first), datetime.fromisoformat(last)))
    end = contiguous_end(mark or start, whole)
    return mark if end == (mark or start) else end


def _save(p: _Progress, mark: datetime | None) -> None:
    """Save the state: the watermark ``mark`` and the values held (OSError: the old stays)."""
    state = ReportState(
        watermark=mark,
        definition=p.report.definition(),
        shape=p.report.shape,
        columns=p.state.columns,
        updated_at=datetime.now(UTC),
        extra={**p.state.extra, HELD_KEY: _listed(p.held), RETIRED_KEY: _listed(p.retired)},
    )
    save_state(p.report_dir, state)  # OSError: the old state stays, on disk and here
    p.state = state
    p.result.watermark_after = mark


def _listed(values: Values) -> dict[str, list[str]]:
    return {d: list(v) for d, v in values.items()}


def _record_backfill(p: _Progress) -> None:
    """Every window of the backfill is written: the added values are held whole now."""
    assert p.backfill is not None
    added = p.backfill.values or {}
    p.held = values_plus(p.held, added)
    p.retired = values_minus(p.retired, {d: set(v) for d, v in added.items()})
    try:
        _save(p, p.state.watermark)
    except OSError as exc:  # the next run backfills them again
        window = p.backfill.plan.windows[-1]
        p.result.failures.append(WindowFailure.of(p.report.name, window, exc))


def _fail(p: _Progress, index: int, error: BaseException) -> None:
    p.result.failures.append(WindowFailure.of(p.report.name, p.plan.windows[index], error))


def _prune(p: _Progress) -> None:
    lo, hi = p.plan.begin.date(), p.plan.end
    for day in partitions(p.report_dir):
        if day < lo or midnight(day) >= hi:
            p.result.removed += remove_partition(p.report_dir, day)
