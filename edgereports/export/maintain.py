"""Maintenance of exported reports (``edgereports export JOB --maintain``): fewer, larger files.

Each destination maintains its own tables (:meth:`~.destination.Destination.maintain`): Delta
compacts each day, checkpoints and vacuums the files older than ``retention``; Iceberg
compacts each day and expires the snapshots older than ``retention``; Parquet locks each
report like a run, removes the temporary files of killed runs and rewrites every day file of
several row groups as one. What this means for readers: docs/export.md ("Maintenance").
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

from .destinations import destination
from .job import Job, load_job
from .summary import Maintenance

__all__ = ["DEFAULT_RETENTION", "Maintenance", "maintain"]

#: How long files a table format no longer uses are kept, unless the job sets ``retention``.
DEFAULT_RETENTION = timedelta(days=7)


def maintain(
    job: str | Path | Job, *, only: str | Sequence[str] | None = None
) -> list[Maintenance]:
    """Compact the job's reports and drop what their tables no longer need.

    Args:
        job: the job file, or a :class:`Job`.
        only: maintain only the report(s) with these names.

    Returns:
        One :class:`Maintenance` per report, in the job's order.

    Raises:
        ConfigError: a bad job or report name, a table of another report.
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
    target = destination(spec.format)
    return [target.maintain(spec, r) for r in reports]
