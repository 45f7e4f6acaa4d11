"""Scheduled export: a TOML job file → an incremental, idempotent, partitioned Parquet dataset
(or, with ``format = "delta"``, a Delta table per report, written in units of work).

Layout: ``OUTPUT/<report>/day=YYYY-MM-DD/part.parquet`` (Hive partitioning on the UTC day of the
bucket), plus ``_state.json`` (the watermark) and ``_lock`` per report directory; readers such as
pyarrow, DuckDB, Spark and Trino skip names starting with ``_`` or ``.``.

The entry points (``run``, ``read``, ``maintain``, ``units``) hand each format to its folder,
``parquet/`` or ``delta/``; both build on the modules here (the job file, the plan, the fetch
loop, the summary, atomic files).

Example:
    >>> from edgereports.export import read_export, run_export
    >>> run_export("nightly.toml").ok  # the job's output is "exports"
    True
    >>> df = read_export("exports", "usage")
    >>> df["time_stamp"].min().isoformat(), df["msisdn"].nunique()
    ('2022-06-01T00:00:00+00:00', 3)
"""

from __future__ import annotations

from .files import save_parquet
from .job import Job, load_job
from .maintain import Maintenance, maintain
from .read import list_reports, read_export
from .run import run_export
from .summary import ExportSummary
from .units import Unit, run_unit, split_units

__all__ = [
    "ExportSummary",
    "Job",
    "Maintenance",
    "Unit",
    "list_reports",
    "load_job",
    "maintain",
    "read_export",
    "run_export",
    "run_unit",
    "save_parquet",
    "split_units",
]
