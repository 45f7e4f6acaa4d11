"""A Dagster partitioned asset: one partition = one UTC day = one unit of the export.

It only calls :func:`edgereports.export.run_unit`; the suite materializes one of its partitions
in a process of its own against the sandbox and an S3-compatible server (``pip install
dagster``). Each partition replaces exactly its day of the report's Delta table, so Dagster may
run any number of partitions at once, on any number of machines, and re-run or backfill any of
them. The partitions share the service's request budget through the pool ``edgereports-api``:
limit it to the runs the key allows at once, e.g. ``dagster instance concurrency set
edgereports-api 4`` (on one machine, the key's ``rate_limit`` is shared by its processes
anyway).

No ``from __future__ import annotations`` here: Dagster reads the ``context`` annotation at
definition time and refuses a string.

The job file (``JOB`` below) sets ``format = "delta"`` and an ``output`` such as
``s3://reports/edge``; the API key, the reporting URL and the object store's settings come from
the environment of the run (``EDGEREPORTS_API_KEY``, ``EDGEREPORTS_REPORTING_URL``,
``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ...).

Run with ``dagster dev -f examples/dagster_units.py``.
"""

from datetime import date, timedelta

from dagster import (  # type: ignore[import-not-found]
    AssetExecutionContext,
    DailyPartitionsDefinition,
    Definitions,
    asset,
)

from edgereports.export import run_unit

JOB = "/etc/edgereports/nightly.toml"
REPORT = "usage_daily"


@asset(
    partitions_def=DailyPartitionsDefinition(start_date="2024-01-01", timezone="UTC"),
    pool="edgereports-api",
)
def usage_daily(context: AssetExecutionContext) -> None:
    """One UTC day of the ``usage_daily`` report in its Delta table."""
    day = date.fromisoformat(context.partition_key)
    summary = run_unit(JOB, REPORT, day, day + timedelta(days=1))
    context.log.info(str(summary))
    if not summary.ok:  # the unit is idempotent: Dagster's retry runs it again
        raise RuntimeError(f"{REPORT} {day}: {len(summary.failures)} window(s) failed")


defs = Definitions(assets=[usage_daily])
