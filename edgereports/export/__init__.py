"""Scheduled export: a TOML job file → an incremental, idempotent, partitioned Parquet dataset.

Layout: ``OUTPUT/<report>/day=YYYY-MM-DD/part.parquet`` (Hive partitioning on the UTC day of the
bucket), plus ``_state.json`` (the watermark) and ``_lock`` per report directory; readers such as
pyarrow, DuckDB, Spark and Trino skip names starting with ``_`` or ``.``.

Example:
    >>> from edgereports.export import read_export, run_export
    >>> summary = run_export("nightly.toml")  # doctest: +SKIP
    >>> df = read_export("exports", "usage_daily")  # doctest: +SKIP
"""

from __future__ import annotations

from .job import Connection, Job, ReportJob, load_job, parse_job
from .lock import LOCK_FILE, ExportLock
from .plan import ReportPlan, Window, plan_report
from .read import list_reports, read_export
from .run import make_client, run_export
from .state import STATE_FILE, ReportState, load_state
from .summary import ExportSummary, ReportResult, WindowFailure
from .writer import HOOK_VAR, PART_FILE

__all__ = [
    "HOOK_VAR",
    "LOCK_FILE",
    "PART_FILE",
    "STATE_FILE",
    "Connection",
    "ExportLock",
    "ExportSummary",
    "Job",
    "ReportJob",
    "ReportPlan",
    "ReportResult",
    "ReportState",
    "Window",
    "WindowFailure",
    "list_reports",
    "load_job",
    "load_state",
    "make_client",
    "parse_job",
    "plan_report",
    "read_export",
    "run_export",
]
