"""The Delta export on object storage: moto's S3 server on loopback, the sandbox, real processes.

Covers a unit run twice, a provisional day re-fetched after the service completed it, and a
job that names its store and credential variables (every destination's shared cases, on S3
too: tests/export/destinations/).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from edgereports.export import Job, load_job, read_export, run_unit
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
