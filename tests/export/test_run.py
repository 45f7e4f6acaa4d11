"""Export runs against the sandbox: first run, lookback, full refresh, faults, lock, read-back."""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from edgereports.errors import ConfigError, ExportLocked
from edgereports.export import load_job, read_export, run_export
from edgereports.export.parquet.lock import LOCK_FILE
from edgereports.export.parquet.state import load_state
from edgereports.sandbox import serve
from tests.export.conftest import NOW, assert_complete, canonical, client_for, write_job


@pytest.fixture
def sb() -> Iterator[Any]:
    """A sandbox of its own per test: the tests move its clock and queue faults."""
    with serve(seed=0, devices=8, clock=NOW) as handle:
        yield handle


def ends(now: datetime) -> dict[str, datetime]:
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return {"usage": day, "sims": day, "bytes": now.replace(minute=0, second=0, microsecond=0)}


@pytest.mark.slow
def test_first_run_lookback_run_and_full_refresh_equal_one_whole_fetch(
    tmp_path: Path, sb: Any
) -> None:
    job = write_job(tmp_path, sb)
    client = client_for(sb)
    first = run_export(job, client=client, now=NOW)
    assert first.ok and first.exit_code == 0, str(first)
    assert [r.plan.reason for r in first.reports] == ["first run"] * 3
    assert_complete(job, client, ends(NOW))
    bytes_state = load_state(job.output / "bytes")
    assert bytes_state.watermark == datetime(2024, 3, 10, 6, tzinfo=UTC)
    assert load_state(job.output / "usage").watermark == datetime(2024, 3, 10, tzinfo=UTC)

    later = sb.clock.advance(timedelta(days=1, hours=5))
    second = run_export(job, client=client, now=later)
    assert second.ok, str(second)
    plans = {r.name: r.plan for r in second.reports}
    assert plans["usage"].begin == datetime(2024, 3, 8, tzinfo=UTC)  # 2 days before the mark
    assert plans["bytes"].begin == datetime(2024, 3, 8, tzinfo=UTC)  # 06:00 on the 8th, rounded
    assert plans["bytes"].windows[-1].end == datetime(2024, 3, 11, 11, tzinfo=UTC)
    assert_complete(job, client, ends(later))

    requests_before = sb.request_count()
    third = run_export(job, client=client, now=later, full_refresh=True)
    assert third.ok and [r.plan.reason for r in third.reports] == ["full refresh"] * 3
    assert sb.request_count() > requests_before
    assert_complete(job, client, ends(later))


def test_faults_fail_some_windows_the_others_are_written_and_a_clean_run_completes(
    tmp_path: Path, sb: Any
) -> None:
    job = write_job(tmp_path, sb, subscribers=1, max_workers=1)  # windows one after the other
    sims_only = job.report("sims")
    client = client_for(sb, retries=0, max_workers=1)
    until = datetime(2024, 3, 8, tzinfo=UTC)
    # one request per SIM-count window, in order with one worker: the second window fails
    sb.enqueue_faults("none", "503", "none", "none")
    failed = run_export(job, client=client, only="sims", now=NOW, until=until)
    result = failed.reports[0]
    assert not failed.ok and failed.exit_code == 1
    assert [f.window for f in failed.failures] == [result.plan.windows[1]]
    assert failed.failures[0].kind == "ApiError" and "503" in failed.failures[0].message
    assert result.windows_written == len(result.plan.windows) - 1
    # the watermark stops before the first failure; the later windows are on disk all the same
    assert load_state(job.output / "sims").watermark == result.plan.windows[0].end
    days = set(read_export(job.output, "sims").date.dt.date)
    assert result.plan.windows[-1].days()[0] in days
    assert not days & set(result.plan.windows[1].days())
    assert "failures (the next run retries them)" in str(failed) and "503" in str(failed)

    clean = run_export(job, client=client, only="sims", now=NOW, until=until)
    # the next run starts at the watermark minus the lookback: before the failed window
    retry = clean.reports[0].plan
    assert clean.ok and retry.begin == result.plan.windows[0].end - sims_only.lookback
    assert retry.begin <= result.plan.windows[1].start
    assert_complete_one(job, client, "sims", until)


def assert_complete_one(job: Any, client: Any, name: str, end: datetime) -> None:
    from tests.export.conftest import whole_fetch

    report = job.report(name)
    got = canonical(read_export(job.output, name), report.time_column)
    pd.testing.assert_frame_equal(got, whole_fetch(client, report, report.start, end))


def test_an_auth_error_stops_the_run(tmp_path: Path, sb: Any) -> None:
    from edgereports.reporting import ReportingClient

    job = write_job(tmp_path, sb, subscribers=1)
    wrong = ReportingClient("not-the-key", sb.reporting_url, progress=False, max_workers=1)
    summary = run_export(job, client=wrong, now=NOW)
    kinds = {f.kind for f in summary.failures}
    assert "AuthError" in kinds and "Skipped" in kinds and summary.rows == 0
    assert "not-the-key" not in str(summary)
    assert all(load_state(job.output / r.name).watermark is None for r in job.reports)


def test_the_run_fails_fast_when_another_holds_the_lock(tmp_path: Path, sb: Any) -> None:
    job = write_job(tmp_path, sb)
    lock_dir = job.output / "bytes"
    lock_dir.mkdir(parents=True)
    fd = os.open(lock_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, json.dumps({"pid": 99999, "host": "elsewhere", "started": "then"}).encode())
        started = time.monotonic()
        with pytest.raises(ExportLocked) as info:
            run_export(job, client=client_for(sb), now=NOW)
        assert time.monotonic() - started < 5
        assert info.value.holder == "pid 99999 on elsewhere since then"
        assert sb.request_count() == 0
        assert not list(job.output.glob("*/day=*"))
    finally:
        os.close(fd)
    assert run_export(job, client=client_for(sb), now=NOW).ok


def test_a_changed_report_asks_for_a_full_refresh(tmp_path: Path, sb: Any) -> None:
    job = write_job(tmp_path, sb, subscribers=2)
    client = client_for(sb)
    assert run_export(job, client=client, only=["usage"], now=NOW).ok
    path = tmp_path / "job.toml"  # the same name, another metric: another report
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("time_usage_subscriber", "byte_usage_subscriber", 1))
    changed = load_job(path)
    with pytest.raises(ConfigError, match=r"'usage' asks for other data .* --full-refresh"):
        run_export(changed, client=client, only="usage", now=NOW)
    assert run_export(changed, client=client, only="usage", now=NOW, full_refresh=True).ok
    assert set(read_export(changed.output, "usage").metric) == {"uplink_bytes", "downlink_bytes"}


def test_full_refresh_drops_days_outside_the_new_range(tmp_path: Path, sb: Any) -> None:
    job = write_job(tmp_path, sb, subscribers=1)
    client = client_for(sb)
    assert run_export(job, client=client, only="usage", now=NOW).ok
    narrower = write_job(tmp_path, sb, subscribers=1, start="2024-03-01")
    summary = run_export(narrower, client=client, only="usage", now=NOW, full_refresh=True)
    assert summary.ok and summary.reports[0].removed == 4  # Feb 26 to 29
    got = read_export(job.output, "usage")
    assert got.time_stamp.min() == pd.Timestamp("2024-03-01", tz="UTC")


def test_dry_run_plans_without_writing_or_fetching(tmp_path: Path, sb: Any) -> None:
    job = write_job(tmp_path, sb)
    summary = run_export(job, client=client_for(sb), now=NOW, dry_run=True)
    text = str(summary)
    assert "usage: first run, watermark none, 4 window(s) 2024-02-26 → 2024-03-10" in text
    assert "  2024-03-09 → 2024-03-10T06:00Z  (2 day(s))" in text
    assert sb.request_count() == 0 and not job.output.exists()


def test_progress_bars_name_each_report(
    tmp_path: Path, sb: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    job = write_job(tmp_path, sb, subscribers=1)
    assert run_export(job, client=client_for(sb), now=NOW, progress=True).ok
    err = capsys.readouterr().err
    assert all(name in err for name in ("usage", "bytes", "sims")) and "window" in err


def test_the_shipped_example_job_runs_against_the_sandbox(tmp_path: Path) -> None:
    import dataclasses

    from edgereports.export import load_job
    from tests.export.conftest import EXAMPLE

    example = load_job(EXAMPLE)
    late = datetime(2024, 5, 27, tzinfo=UTC)  # a short range keeps the test quick
    reports = tuple(dataclasses.replace(r, start=max(r.start, late)) for r in example.reports)
    job = dataclasses.replace(example, output=tmp_path / "out", reports=reports)
    with serve(seed=0, clock="2024-06-05T00:00:00Z") as handle:
        summary = run_export(
            job, client=client_for(handle), now=handle.clock.now(), until="2024-06-03"
        )
    assert summary.ok, str(summary)
    for report in job.reports:
        frame = read_export(job.output, report.name)
        assert len(frame) > 0, report.name
        assert frame[report.time_column].max() < pd.Timestamp("2024-06-03", tz="UTC").tz_convert(
            None if report.time_column == "date" else "UTC"
        )


def test_one_clock_the_export_plans_no_day_past_the_service_present(
    tmp_path: Path, sb: Any
) -> None:
    """Without ``now=``, the export takes "now" from the service's Date header (its clock),
    not from this machine's clock (years later): nothing is planned past the sandbox's present.
    """
    client = client_for(sb)
    seen = client.service_now()  # no answer yet: one cheap request learns the clock
    assert abs((seen - NOW).total_seconds()) < 60, seen
    job = write_job(tmp_path, sb)
    summary = run_export(job, client=client, only="bytes")
    assert summary.ok, summary
    (result,) = summary.reports
    assert result.plan.end == datetime(2024, 3, 10, 6, tzinfo=UTC)  # the last complete hour
    assert result.watermark_after == datetime(2024, 3, 10, 6, tzinfo=UTC)
    assert read_export(job.output, "bytes").time_stamp.max() == pd.Timestamp(
        "2024-03-10T05:00", tz="UTC"
    )


def test_read_export_keeps_the_bucket_holding_a_mid_bucket_start_like_fetch(
    tmp_path: Path, sb: Any
) -> None:
    """The range rule of read_export is fetch's: the bucket holding the start belongs to the
    range though it begins before it; nothing at or after the end."""
    client = client_for(sb)
    job = write_job(tmp_path, sb)
    assert run_export(job, client=client, now=NOW).ok
    start, end = "2024-03-05T05:30:00+00:00", "2024-03-06T00:00:00+00:00"
    hourly = read_export(job.output, "bytes", start=start, end=end)
    assert hourly.time_stamp.min() == pd.Timestamp("2024-03-05T05:00", tz="UTC")
    assert hourly.time_stamp.max() == pd.Timestamp("2024-03-05T23:00", tz="UTC")
    fetched = client.fetch(
        job.report("bytes").for_window(datetime.fromisoformat(start), datetime.fromisoformat(end))
    )
    key = ["time_stamp", "msisdn", "metric"]
    assert len(hourly) == len(fetched)
    pd.testing.assert_series_equal(
        hourly.sort_values(key)["value"].reset_index(drop=True),
        fetched.sort_values(key)["value"].reset_index(drop=True),
    )
    daily = read_export(job.output, "usage", start="2024-03-05T12:00:00+00:00", end=end)
    assert list(daily.time_stamp.unique()) == [pd.Timestamp("2024-03-05", tz="UTC")]


def test_dry_run_prints_requests_rows_and_the_time_at_the_jobs_rate_limit(
    tmp_path: Path, sb: Any
) -> None:
    job = write_job(tmp_path, sb, subscribers=3, rate_limit='"2/s"')
    assert job.rate_limit == 2.0
    summary = run_export(job, only="usage", client=client_for(sb), now=NOW, dry_run=True)
    plan = summary.reports[0].plan
    # 3 subscribers x 4 windows of up to 4 days, one request each; 3 x 13 days x 1 metric rows
    assert (len(plan.windows), plan.requests, plan.rows) == (4, 12, 39)
    text = str(summary)
    assert "usage: first run, watermark none, 4 window(s) 2024-02-26 → 2024-03-10, 12 " in text
    assert text.endswith(
        "in all: 4 window(s) (report x shard x range), 12 request(s), at most 39 rows; "
        "at rate_limit 2/s: 6 s of requests"
    )
    assert sb.request_count() == 0


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_read_export_orders_rows_as_fetch_does(tmp_path: Path, sb: Any, fmt: str) -> None:
    # two subscribers, two metrics, hourly: the files hold them day by day, a fetch series by
    # series (subscriber, then the request's metric order, then time)
    job = write_job(tmp_path, sb, subscribers=2, format=f'"{fmt}"')
    client = client_for(sb)
    until = datetime(2024, 2, 29, tzinfo=UTC)
    assert run_export(job, client=client, only="bytes", now=NOW, until=until).ok
    report = job.report("bytes")
    got = read_export(job.output, "bytes")
    fetched = client.fetch(report.for_window(report.start, until))
    fetched = fetched[fetched["time_stamp"] < pd.Timestamp(until)].reset_index(drop=True)
    fetched.attrs = {}
    got.attrs = {}
    assert got["msisdn"].nunique() == 2 and len(got) == 2 * 2 * 72
    pd.testing.assert_frame_equal(got, fetched)


def test_a_current_value_preset_is_exported_over_days_with_a_granularity(
    tmp_path: Path, sb: Any
) -> None:
    # which site peaked each day: concurrent_online_ues per site, by DAY
    sites = [s.customer_site_id for s in sb.network.sites if s.account_id == sb.account_id]
    listed = ", ".join(f'"{s}"' for s in sites)
    path = tmp_path / "job.toml"
    path.write_text(
        f'output = "{tmp_path / "out"}"\n[defaults]\naccount_id = "{sb.account_id}"\n'
        'start = 2024-02-26\n[[reports]]\nname = "peaks"\npreset = "concurrent_online_ues"\n'
        f'granularity = "DAY"\nparams = {{ customer_site_id = [{listed}] }}\n',
        encoding="utf-8",
    )
    until = datetime(2024, 2, 29, tzinfo=UTC)
    assert run_export(path, client=client_for(sb), now=NOW, until=until).ok
    got = read_export(tmp_path / "out", "peaks")
    assert sorted(got["customer_site_id"].unique()) == sorted(sites)
    assert sorted(got["time_stamp"].dt.day.unique()) == [26, 27, 28]
