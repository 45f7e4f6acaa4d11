"""The Delta export on object storage: moto's S3 server on loopback, the sandbox, real processes.

Covers a full export to ``s3://``, four unit processes on disjoint days (read back in DuckDB
through ``to_pyarrow_dataset()``), a unit run twice, a unit killed with SIGKILL while it writes
and run again, and a provisional day re-fetched after the service completed it.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
from deltalake import DeltaTable

from edgereports.export import Job, load_job, read_export, run_export, run_unit
from edgereports.sandbox import serve
from tests.export.conftest import (
    BUCKET,
    NOW,
    canonical,
    client_for,
    job_text,
    run_cli,
    whole_fetch,
)

pytestmark = pytest.mark.slow

DAY = timedelta(days=1)
MIDNIGHT = NOW.replace(hour=0, minute=0)


@pytest.fixture
def sb() -> Iterator[Any]:
    """A sandbox of its own: one test moves its clock."""
    with serve(seed=0, devices=8, clock=NOW) as handle:
        yield handle


def delta_job(tmp_path: Path, sb: Any, output: str, subscribers: int = 2, **extra: Any) -> Job:
    """The export tests' job (usage per DAY, bytes per HOUR, SIM counts) as Delta at output."""
    msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:subscribers]
    path = tmp_path / "job.toml"
    text = job_text(output, sb.account_id, msisdns, format='"delta"', **extra)  # type: ignore[arg-type]
    path.write_text(text, encoding="utf-8")
    return load_job(path)


def table_frame(job: Job, name: str) -> pd.DataFrame:
    report = job.report(name)
    return canonical(read_export(job.uri or job.output, name), report.time_column)


def assert_equal_to_fetch(job: Job, sb: Any, name: str, start: datetime, end: datetime) -> None:
    report = job.report(name)
    got = table_frame(job, name)
    expected = whole_fetch(client_for(sb), report, start, end)
    assert len(got) > 0
    pd.testing.assert_frame_equal(got, expected)
    keys = [c for c in got.columns if c not in ("value", "physical", "esim")]
    assert not got.duplicated(keys).any(), name


def test_full_export_to_s3_equals_one_whole_fetch_and_a_rerun_changes_nothing(
    tmp_path: Path, sb: Any, s3: str
) -> None:
    job = delta_job(tmp_path, sb, s3)
    assert job.format == "delta" and job.uri == s3
    summary = run_export(job, client=client_for(sb), now=NOW)
    assert summary.ok, str(summary)
    assert str(summary.output) == s3 and "testing-secret" not in str(summary)
    hour = NOW.replace(minute=0)
    ends = {"usage": MIDNIGHT, "sims": MIDNIGHT, "bytes": hour}
    for report in job.reports:
        assert_equal_to_fetch(job, sb, report.name, report.start, ends[report.name])
    marks = {r.name: r.watermark_after for r in summary.reports}
    assert marks == ends  # the tables themselves say how far they are complete
    again = run_export(job, client=client_for(sb), now=NOW)
    assert again.ok and [r.plan.reason for r in again.reports] == ["incremental"] * 3
    for report in job.reports:
        assert_equal_to_fetch(job, sb, report.name, report.start, ends[report.name])


def test_four_unit_processes_on_disjoint_days_give_the_complete_table_read_by_duckdb(
    tmp_path: Path, sb: Any, s3: str
) -> None:
    job = delta_job(tmp_path, sb, s3, start="2024-03-02")
    days = [datetime(2024, 3, 2, tzinfo=UTC) + i * DAY for i in range(4)]

    def unit(day: datetime) -> subprocess.CompletedProcess[str]:
        span = ("--from", day.date().isoformat(), "--until", (day + DAY).date().isoformat())
        return run_cli(job.source, "--only", "bytes", *span, sb=sb)  # type: ignore[arg-type]

    # no table yet: the four race to create it, then each commits its own day
    with ThreadPoolExecutor(4) as pool:
        done = list(pool.map(unit, days))
    for proc in done:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "testing-secret" not in proc.stdout + proc.stderr
    assert_equal_to_fetch(job, sb, "bytes", days[0], days[-1] + DAY)
    connection = duckdb.connect()
    connection.register("bytes", DeltaTable(job.location("bytes")).to_pyarrow_dataset())
    seen = (
        connection.sql("SELECT * EXCLUDE (day) FROM bytes ORDER BY ALL")
        .to_arrow_table()
        .to_pandas()
    )
    expected = whole_fetch(client_for(sb), job.report("bytes"), days[0], days[-1] + DAY)
    got = canonical(seen, "time_stamp")
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    assert len(got) == len(expected) > 0


def test_the_same_unit_twice_changes_nothing(tmp_path: Path, sb: Any, s3: str) -> None:
    job = delta_job(tmp_path, sb, s3)
    first = run_unit(job, "usage", "2024-03-04", "2024-03-06", client=client_for(sb), now=NOW)
    assert first.ok and first.reports[0].plan.reason == "unit", str(first)
    before = table_frame(job, "usage")
    second = run_unit(job, "usage", "2024-03-04", "2024-03-06", client=client_for(sb), now=NOW)
    assert second.ok
    pd.testing.assert_frame_equal(table_frame(job, "usage"), before)
    assert sorted(before["time_stamp"].dt.date.unique().tolist()) == [
        datetime(2024, 3, 4).date(),
        datetime(2024, 3, 5).date(),
    ]
    # a unit past a gap does not make the table look complete from the start
    assert second.reports[0].watermark_after is None


_KILL_WHILE_WRITING = """
import os, signal, sys, threading
from unittest import mock
import edgereports.export.run as run
from edgereports.cli.export import main
def checkpoint(name):
    if name == "before-commit":  # die a moment later, inside write_deltalake
        threading.Timer(0.03, os.kill, (os.getpid(), signal.SIGKILL)).start()
real = run.run_export
patched = lambda *a, **k: real(*a, checkpoint=checkpoint, **k)
with mock.patch("edgereports.export.run_export", patched):
    sys.exit(main(sys.argv[1:]))
"""


def test_a_unit_killed_while_it_writes_leaves_a_readable_table_and_a_rerun_completes_it(
    tmp_path: Path, sb: Any, s3: str
) -> None:
    job = delta_job(tmp_path, sb, s3, start="2024-03-01")
    span = ["--only", "bytes", "--from", "2024-03-01", "--until", "2024-03-07"]
    good = run_export(
        job, only="bytes", start="2024-03-01", until="2024-03-04", client=client_for(sb), now=NOW
    )
    assert good.ok
    before = table_frame(job, "bytes")
    killed = subprocess.run(
        [sys.executable, "-c", _KILL_WHILE_WRITING, str(job.source), "--no-progress", *span],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=_cli_env(sb),
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    # readable, and the days written before are whole
    after_kill = table_frame(job, "bytes")
    assert len(after_kill) >= len(before)
    keys = ["time_stamp", "msisdn", "metric", "aggregation"]
    assert not after_kill.duplicated(keys).any()
    again = run_cli(job.source, *span, sb=sb)  # type: ignore[arg-type]
    assert again.returncode == 0, again.stderr
    assert_equal_to_fetch(
        job, sb, "bytes", datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 3, 7, tzinfo=UTC)
    )


def _cli_env(sb: Any) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGEREPORTS_")}
    env.update(EDGEREPORTS_REPORTING_URL=sb.reporting_url, EDGEREPORTS_API_KEY=sb.api_key)
    return env


def test_a_rerun_after_the_service_completed_a_provisional_day_replaces_its_rows(
    tmp_path: Path, sb: Any, s3: str
) -> None:
    job = delta_job(tmp_path, sb, s3)
    today = MIDNIGHT
    first = run_unit(job, "bytes", today, client=client_for(sb), now=NOW)
    assert first.ok, str(first)
    partial = table_frame(job, "bytes")
    assert partial["time_stamp"].dt.hour.max() == NOW.hour - 1  # up to the last whole hour
    assert first.reports[0].watermark_after is None  # the days before were never written
    later = sb.clock.advance(DAY)
    second = run_unit(job, "bytes", today, client=client_for(sb), now=later)
    assert second.ok, str(second)
    assert_equal_to_fetch(job, sb, "bytes", today, today + DAY)
    assert len(table_frame(job, "bytes")) > len(partial)


def test_a_job_naming_its_store_and_credential_variables_writes_there(
    tmp_path: Path, sb: Any, s3_server: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in s3_server:  # nothing from the usual variables: the job file says it all
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TEAM_S3_KEY_ID", s3_server["AWS_ACCESS_KEY_ID"])
    monkeypatch.setenv("TEAM_S3_SECRET", s3_server["AWS_SECRET_ACCESS_KEY"])
    storage = f"""
[storage]
timeout = 20

[storage.options]
aws_endpoint_url = "{s3_server["AWS_ENDPOINT_URL"]}"
aws_region = "us-east-1"
aws_allow_http = true

[storage.options_from_env]
aws_access_key_id = "TEAM_S3_KEY_ID"
aws_secret_access_key = "TEAM_S3_SECRET"
"""
    uri = f"s3://{BUCKET}/{tmp_path.name}"
    job = delta_job(tmp_path, sb, uri)
    assert job.source is not None
    text = job.source.read_text(encoding="utf-8").replace("[defaults]", f"{storage}\n[defaults]")
    job.source.write_text(text, encoding="utf-8")
    done = run_cli(job.source, "--only", "sims", sb=sb)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "testing-secret" not in done.stdout + done.stderr + text
    got = canonical(read_export(job.source, "sims"), "date")  # the job's settings again
    report = job.report("sims")
    expected = whole_fetch(client_for(sb), report, report.start, MIDNIGHT)
    pd.testing.assert_frame_equal(got, expected)


def test_maintain_on_s3_keeps_the_rows_and_a_reader_of_an_older_snapshot(
    tmp_path: Path, sb: Any, s3: str
) -> None:
    from edgereports.export import maintain

    job = delta_job(tmp_path, sb, s3, subscribers=2)
    client = client_for(sb)
    for day in ("2024-03-01", "2024-03-02"):  # one day twice: a file the table dropped
        assert run_unit(job, "usage", day, client=client, now=NOW).ok
    assert run_unit(job, "usage", "2024-03-01", client=client, now=NOW).ok
    before = table_frame(job, "usage")
    old = DeltaTable(job.location("usage"))
    [done] = maintain(job, only="usage")
    assert done.rows == len(before) and done.files_after == 2  # one file a day
    pd.testing.assert_frame_equal(table_frame(job, "usage"), before)
    assert old.to_pyarrow_table().num_rows == len(before)  # within the retention (7 days)
