"""Parquet as a destination: day files under a lock, the table's marks in ``_state.json``.

``OUTPUT/<report>/day=YYYY-MM-DD/part.parquet`` per UTC day (:mod:`.writer`), the state beside
them (:mod:`.state`: definition, values, marks, and the watermark as ``watermark``), and
``_lock`` (:mod:`.lock`): a run locks its reports, a unit its days. A day's file is replaced
atomically; the marks are saved after the files they describe, merged into the state on
disk under a short lock (units of other days save theirs at the same time).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from ..._dependencies import lazy_import
from ...errors import ConfigError
from ..days import DayRows
from ..destination import ReadBack, Recorded
from ..files import atomic_write
from ..formats import FORMATS
from ..job import Job
from ..ledger import (
    Marks,
    contiguous_key,
    instant,
    kept_marks,
    removal_marks,
    seconds,
    shard_marks,
    watermark,
)
from ..plan import midnight
from ..reports import ReportJob
from ..summary import Maintenance, Written
from ..values import Values
from .lock import ExportLock, state_lock
from .read import read_parquet
from .state import (
    HELD_KEY,
    MARKS_KEY,
    RETIRED_KEY,
    SHARDS_KEY,
    ReportState,
    held_values,
    load_state,
    report_state,
    retired_values,
    save_state,
)
from .writer import damaged_days, partitions, remove_partition, sweep_temporaries, write_days

pq = lazy_import("pyarrow.parquet")

__all__ = ["ParquetDestination", "ParquetTable"]


class ParquetTable:
    """One report's day files and state (see the module's description)."""

    def __init__(
        self,
        report: ReportJob,
        report_dir: Path,
        state: ReportState,
        checkpoint: Callable[[str], None] | None,
    ) -> None:
        self.report = report
        self.report_dir = report_dir
        self.location = str(report_dir)
        self.state = state
        self._checkpoint = checkpoint

    def mark(self, key: str) -> int | None:
        """The mark ``key``: the contiguous end is the state's ``watermark``."""
        if key == contiguous_key(self.report):
            mark = self.state.watermark
            return None if mark is None else seconds(mark)
        value = _marks(self.state, self.report).get(key)
        return None if value is None else int(value)

    def recorded(self) -> Recorded:
        """The definition and values the state records."""
        return Recorded(self.state.definition, held_values(self.state), retired_values(self.state))

    def damaged(self) -> list[date]:
        """The days whose file does not read as Parquet."""
        return damaged_days(self.report_dir)

    def write(
        self,
        rows: DayRows,
        *,
        values: Mapping[str, Sequence[str]] | None,
        marks: Marks,
        metadata: Mapping[str, Any],
    ) -> Written:
        """Replace each day's file (atomically), then save the marks with the state."""
        wrote = write_days(
            rows, self.report_dir, metadata=metadata, checkpoint=self._checkpoint, values=values
        )
        if self._checkpoint is not None:
            self._checkpoint("after-move-before-state")
        columns = wrote.dimensions if wrote.dimensions or not self.state.columns else None
        self._save(marks, columns=columns)
        return wrote

    def remove_outside(self, begin: datetime, end: datetime, *, metadata: Mapping[str, Any]) -> int:
        """Delete the day files outside ``[begin, end)``."""
        del metadata  # the files are gone; nothing records it but the state
        removed = [
            day for day in partitions(self.report_dir) if day < begin.date() or midnight(day) >= end
        ]
        count = sum(remove_partition(self.report_dir, day) for day in removed)
        self._save(removal_marks(self.report, removed, end))
        return count

    def record_values(self, held: Values, retired: Values) -> None:
        """Save the values held and retired in the state."""
        extra = {HELD_KEY: _listed(held), RETIRED_KEY: _listed(retired)}
        self._save(Marks(), extra=extra)

    def refresh(self) -> None:
        """Read the state again."""
        self.state = load_state(self.report_dir)

    def _save(
        self,
        marks: Marks,
        *,
        columns: tuple[str, ...] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        """Merge ``marks`` (and ``extra``) into the state on disk and save it (OSError: the
        old state stays)."""
        with state_lock(self.report_dir):  # units of other days may save theirs meanwhile
            disk = _disk_state(self.report_dir)
            merged = _marks(disk, self.report)
            if disk.watermark is not None:
                merged[contiguous_key(self.report)] = seconds(disk.watermark)
            for key, value in marks.values.items():
                old = merged.get(key)
                merged[key] = value if marks.exact or old is None else max(old, value)
            reach = watermark(_Ledger(merged), self.report)  # as far as the days chain
            if reach is not None:
                merged[contiguous_key(self.report)] = seconds(reach)
            kept = kept_marks(self.report, merged)
            mark = kept.pop(contiguous_key(self.report), None)
            own = {k: v for k, v in self.state.extra.items() if k in (HELD_KEY, RETIRED_KEY)}
            rest = {k: v for k, v in disk.extra.items() if k not in (MARKS_KEY, SHARDS_KEY)}
            state = ReportState(
                watermark=None if mark is None else instant(mark),
                definition=self.report.definition(),
                shape=self.report.shape,
                columns=disk.columns if columns is None else columns,
                updated_at=datetime.now(UTC),
                extra={**own, **rest, **(extra or {}), MARKS_KEY: kept},
            )
            save_state(self.report_dir, state)
        self.state = state


def _marks(state: ReportState, report: ReportJob) -> dict[str, int]:
    """The marks a state records (and, of an older state, the shard units its
    ``shard_units`` lists: ``"START/END/COUNT": [shards written]``)."""
    raw = state.extra.get(MARKS_KEY)
    marks = {str(k): int(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
    legacy = state.extra.get(SHARDS_KEY)
    for key, shards in legacy.items() if isinstance(legacy, dict) else ():
        with contextlib.suppress(ValueError, TypeError):
            first, last, count = str(key).split("/")
            lo, hi = datetime.fromisoformat(first), datetime.fromisoformat(last)
            for k in shards:
                marks.update(shard_marks(report, lo, hi, int(k), int(count)))
    return marks


class _Ledger:
    """Marks held in a dict."""

    def __init__(self, marks: Mapping[str, int]) -> None:
        self._marks = marks

    def mark(self, key: str) -> int | None:
        return self._marks.get(key)


def _disk_state(report_dir: Path) -> ReportState:
    """The state on disk; a damaged one (refused by the checks, so only met by a full
    refresh, which replaces it) counts as none."""
    try:
        return load_state(report_dir)
    except ConfigError:
        return ReportState()


def _listed(values: Values) -> dict[str, list[str]]:
    return {d: list(v) for d, v in values.items()}


class ParquetDestination:
    """Hive-partitioned Parquet day files on a local disk (the default format)."""

    format = FORMATS["parquet"]
    write_errors: tuple[type[BaseException], ...] = (OSError, ValueError)  # OSError: the disk

    def __init__(self, checkpoint: Callable[[str], None] | None = None) -> None:
        self._checkpoint = checkpoint

    def open(
        self,
        job: Job,
        report: ReportJob,
        *,
        create: bool,
        full_refresh: bool = False,
        now: datetime | None = None,
    ) -> ParquetTable:
        """The report's directory and state, checked (:func:`.state.report_state`)."""
        del create  # the directory is made by the first write
        report_dir = job.output / report.name
        state = report_state(
            job, report, report_dir, now=now or datetime.now(UTC), full_refresh=full_refresh
        )
        if full_refresh:  # the saved values and marks no longer say anything
            state = dataclasses.replace(state, extra={})
        return ParquetTable(report, report_dir, state, self._checkpoint)

    @contextlib.contextmanager
    def lock(
        self, job: Job, reports: Sequence[ReportJob], days: Mapping[str, list[date]] | None
    ) -> Iterator[None]:
        """Lock the reports' directories (a unit: its days), then sweep what killed runs left."""
        dirs = {r.name: job.output / r.name for r in reports}
        by_dir = None if days is None else {dirs[n]: d for n, d in days.items()}
        with ExportLock(dirs.values(), job=str(job.source or job.name), days=by_dir):
            for name, directory in dirs.items():
                sweep_temporaries(directory, None if days is None else days.get(name, []))
            yield

    @contextlib.contextmanager
    def guard(self, location: str, secrets: Sequence[str]) -> Iterator[None]:
        """Errors of a local disk are the caller's to report as they are."""
        del location, secrets
        yield

    def read(
        self,
        job: Job | None,
        location: str,
        start: datetime | None,
        end: datetime | None,
        options: Mapping[str, str] | None,
    ) -> ReadBack:
        """Read the day files of ``[start, end)``."""
        del job, options
        return read_parquet(Path(location), start, end)

    def holds(self, location: str) -> bool:
        """True when ``location`` has day files or a state."""
        path = Path(location)
        return (path / "_state.json").is_file() or bool(partitions(path))

    def maintain(self, job: Job, report: ReportJob) -> Maintenance:
        """Lock the report like a run, remove temporaries, rewrite days of several row groups
        as one file each (atomically)."""
        started = time.monotonic()
        report_dir = job.output / report.name
        with ExportLock([report_dir], job="maintenance"):
            removed = sweep_temporaries(report_dir)
            parts = partitions(report_dir)
            rows = 0
            for path in parts.values():
                meta = pq.read_metadata(path)
                rows += meta.num_rows
                if meta.num_row_groups > 1:
                    _rewrite(path)
        files = len(parts)
        return Maintenance(report.name, files, files, removed, rows, time.monotonic() - started)


def _rewrite(path: Path) -> None:
    """Rewrite one day file as a single row group (atomically; its metadata kept)."""
    table = pq.read_table(path, partitioning=None)
    atomic_write(path, lambda fh: pq.write_table(table, fh, compression="snappy"))
