"""Delta Lake as a destination: a transactional table per report, local or on object storage.

No lock: each window is one commit, and commits of other processes (units on other machines)
land beside it. Reading goes through ``deltalake``'s Arrow dataset; maintenance compacts each
day, writes a checkpoint and vacuums the files older than the job's ``retention``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from pathlib import Path

from ..destination import ReadBack
from ..formats import FORMATS
from ..job import Job
from ..reports import ReportJob
from ..summary import Maintenance
from .table import (
    CHECKPOINT_INTERVAL,
    DELTA_LOG,
    DeltaReport,
    deltalake,
    open_table,
    read_delta,
    require_deltalake,
    table_errors,
)

__all__ = ["DeltaDestination"]


class DeltaDestination:
    """A Delta table per report (``format = "delta"``; the ``delta`` extra)."""

    format = FORMATS["delta"]

    @property
    def write_errors(self) -> tuple[type[BaseException], ...]:
        """A store's refusal, bad data, or a commit ``deltalake`` refused."""
        return (OSError, ValueError, require_deltalake().exceptions.DeltaError)

    def open(
        self,
        job: Job,
        report: ReportJob,
        *,
        create: bool,
        full_refresh: bool = False,
        now: datetime | None = None,
    ) -> DeltaReport | None:
        """Open (or create) the report's table; it must hold this report's data."""
        del full_refresh, now
        return open_table(job.location(report.name), report, job.storage_options(), create=create)

    def lock(
        self, job: Job, reports: Sequence[ReportJob], days: Mapping[str, list[date]] | None
    ) -> contextlib.nullcontext[None]:
        """Nothing: commits need no lock."""
        del job, reports, days
        return contextlib.nullcontext()

    def guard(
        self, location: str, secrets: Sequence[str]
    ) -> contextlib.AbstractContextManager[None]:
        """The store's errors as one redacted line (:func:`.table.table_errors`)."""
        return table_errors(location, secrets)

    def read(
        self,
        job: Job | None,
        location: str,
        start: datetime | None,
        end: datetime | None,
        options: Mapping[str, str] | None,
    ) -> ReadBack:
        """Read the rows of ``[start, end)`` of the table."""
        del job
        return read_delta(location, start, end, options)

    def holds(self, location: str) -> bool:
        """True when ``location`` has a Delta log."""
        return (Path(location) / DELTA_LOG).is_dir()

    def maintain(self, job: Job, report: ReportJob) -> Maintenance:
        """Compact each day, checkpoint, vacuum the files older than the retention."""
        started = time.monotonic()
        location = job.location(report.name)
        with table_errors(location, job.storage.secrets()):
            opened = open_table(location, report, job.storage_options(), create=False)
            if opened is None:
                return Maintenance(report.name, 0, 0, 0, 0, time.monotonic() - started)
            table = opened.table
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
        return Maintenance(
            report.name, before, after, len(removed), rows, time.monotonic() - started
        )
