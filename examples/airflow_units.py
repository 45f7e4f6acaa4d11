"""An Airflow DAG with dynamic task mapping: one mapped task per unit of the export.

It only calls :func:`edgereports.export.split_units` and :func:`edgereports.export.run_unit`;
written for Airflow 3 (``airflow.sdk``), and the suite runs it with ``airflow dags test`` in
Airflow's own environment (``make airflow``). Every night it lists the units of the last three
UTC days (report x day) and maps one task over them; each task replaces exactly its day of its
report's Delta table, so the tasks run in parallel on any workers, and a retried or re-run task
changes nothing it should not.

The job file (``JOB`` below) sets ``format = "delta"`` and an ``output`` such as
``s3://reports/edge``; the API key, the reporting URL and the object store's settings come from
the workers' environment (``EDGEREPORTS_API_KEY``, ``EDGEREPORTS_REPORTING_URL``,
``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ...). Copy it into the DAGs folder. The units
share the service's request budget through the Airflow pool ``edgereports_api``: create it
with as many slots as the key allows requests at once (``airflow pools set edgereports_api 4
"edgereports API key"``); on one worker, the key's ``rate_limit`` is shared by its processes
anyway.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from airflow.sdk import dag, task  # type: ignore[import-not-found]

JOB = "/etc/edgereports/nightly.toml"


@dag(
    schedule="15 2 * * *",
    start_date=datetime(2024, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_tasks=4,
)
def edgereports_units() -> None:
    """List the units of the last three days, then run one mapped task per unit."""

    @task
    def units(data_interval_end: datetime | None = None) -> list[dict[str, str]]:
        from edgereports.export import split_units

        end = (data_interval_end or datetime.now(UTC)).date()
        listed = split_units(JOB, end - timedelta(days=3), end)
        return [
            {"report": u.report, "start": u.start.isoformat(), "end": u.end.isoformat()}
            for u in listed
        ]

    @task(retries=3, retry_delay=timedelta(minutes=5), pool="edgereports_api")
    def run(unit: dict[str, str]) -> int:
        from edgereports.export import run_unit

        start, end = date.fromisoformat(unit["start"]), date.fromisoformat(unit["end"])
        summary = run_unit(JOB, unit["report"], start, end)
        print(summary)
        if not summary.ok:
            raise RuntimeError(f"{unit}: {len(summary.failures)} window(s) failed")
        return summary.rows

    run.expand(unit=units())


edgereports_units()
