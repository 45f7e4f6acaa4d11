"""Maintenance of exported reports (``edgereports export JOB --maintain``): fewer, larger files.

Delta: each table is compacted per ``day``, given a checkpoint (and the export's checkpoint
interval), and vacuumed of files older than ``retention``. Parquet: each report is locked like a
run, its temporary files are removed, and every day file of several row groups is rewritten as
one, atomically. What this means for readers: docs/export.md ("Maintenance").
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from .._dependencies import lazy_import
from .delta.table import CHECKPOINT_INTERVAL, open_table, require_deltalake, table_errors
from .files import atomic_write
from .job import Job, load_job
from .parquet.lock import ExportLock
from .parquet.writer import partitions, sweep_temporaries

pq = lazy_import("pyarrow.parquet")


__all__ = ["DEFAULT_RETENTION", "Maintenance", "maintain"]

#: How long files a Delta table no longer uses are kept, unless the job sets ``retention``.
DEFAULT_RETENTION = timedelta(days=7)


@dataclass(frozen=True)
class Maintenance:
    """What maintaining one report did.

    Attributes:
        report: the report's name.
        files_before: data files of the report before (Delta: in the table's snapshot).
        files_after: data files after.
        removed: files deleted (Delta: vacuumed; Parquet: temporaries left by killed runs).
        rows: rows of the report (unchanged by maintenance).
        seconds: wall time.
    """

    report: str
    files_before: int
    files_after: int
    removed: int
    rows: int
    seconds: float

    def __str__(self) -> str:
        return (
            f"{self.report}: {self.files_before} → {self.files_after} data file(s), "
            f"{self.removed} removed, {self.rows:,} rows, {self.seconds:.1f} s"
        )


def maintain(
    job: str | Path | Job, *, only: str | Sequence[str] | None = None
) -> list[Maintenance]:
    """Compact, checkpoint and vacuum the job's reports (see the module's description).

    Args:
        job: the job file, or a :class:`Job`.
        only: maintain only the report(s) with these names.

    Returns:
        One :class:`Maintenance` per report, in the job's order.

    Raises:
        ConfigError: a bad job or report name, a Delta table of another report.
        ExportLocked: a run of a Parquet report is under way (it fails fast).
        OSError: the store or disk refused.

    Example:
        >>> from edgereports.export import run_export
        >>> run_export("nightly.toml").ok
        True
        >>> for done in maintain("nightly.toml"):
        ...     print(done)
        usage: ...
    """
    spec = job if isinstance(job, Job) else load_job(job)
    names = [only] if isinstance(only, str) else list(only or [r.name for r in spec.reports])
    reports = [spec.report(n) for n in dict.fromkeys(names)]
    if spec.format == "delta":
        return [_maintain_delta(spec, r.name) for r in reports]
    return [_maintain_parquet(spec.output / r.name) for r in reports]


def _maintain_delta(job: Job, name: str) -> Maintenance:
    deltalake = require_deltalake()
    started = time.monotonic()
    location = job.location(name)
    options = job.storage_options()
    with table_errors(location, job.storage.secrets()):
        table = open_table(location, job.report(name), options, create=False)
        if table is None:
            return Maintenance(name, 0, 0, 0, 0, time.monotonic() - started)
        before = len(table.file_uris())
        configuration = table.metadata().configuration
        if "delta.checkpointInterval" not in configuration:
            properties = {"delta.checkpointInterval": str(CHECKPOINT_INTERVAL)}
            table.alter.set_table_properties(properties)
        for attempt in range(3):  # a unit's commit may land meanwhile: compact again
            try:
                table.optimize.compact()
                break
            except deltalake.exceptions.CommitFailedError:
                if attempt == 2:
                    raise
                table.update_incremental()
        table.update_incremental()
        table.create_checkpoint()
        hours = int(job.retention.total_seconds() // 3600)
        removed = table.vacuum(
            retention_hours=hours, dry_run=False, enforce_retention_duration=False, full=True
        )
        table.cleanup_metadata()
        rows = table.count()
        after = len(table.file_uris())
    return Maintenance(name, before, after, len(removed), rows, time.monotonic() - started)


def _maintain_parquet(report_dir: Path) -> Maintenance:
    started = time.monotonic()
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
    return Maintenance(report_dir.name, files, files, removed, rows, time.monotonic() - started)


def _rewrite(path: Path) -> None:
    """Rewrite one day file as a single row group (atomically; its metadata kept)."""
    table = pq.read_table(path, partitioning=None)
    atomic_write(path, lambda fh: pq.write_table(table, fh, compression="snappy"))
