"""Fleets that change: fan-out values (subscribers) added and removed between runs.

A report's identity is its metrics, dimensions, granularity and the filters it does not fan
out over; its subscribers are rows. Adding one backfills only it from the report's start;
removing one keeps its history; changing the metric is still refused. Long ranges of many
subscribers are fetched in shards, and shard units count their range written once every
shard is in.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from edgereports.errors import ConfigError
from edgereports.export import Job, load_job, read_export, run_export, run_unit, split_units
from tests.export.conftest import NOW, canonical, client_for, whole_fetch
from tests.export.destinations.conftest import Where, table_bytes

START = NOW.replace(hour=0, minute=0) - timedelta(days=6)
END = NOW.replace(hour=0, minute=0)


def usage_job(
    tmp_path: Path, output: str, fmt: str, account: str, msisdns: list[str], metric: str = ""
) -> Job:
    """One DAY report of subscribers' usage (``window_days = 2``: several windows)."""
    listed = ", ".join(f'"{m}"' for m in msisdns)
    preset = metric or "time_usage_subscriber"
    path = tmp_path / "job.toml"
    path.write_text(
        f"""
output = "{output}"
format = "{fmt}"
[defaults]
account_id = "{account}"
start = {START.date().isoformat()}
lookback = "2d"
[[reports]]
name = "usage"
preset = "{preset}"
params = {{ msisdn = [{listed}] }}
window_days = 2
""",
        encoding="utf-8",
    )
    return load_job(path)


def rows(job: Job) -> pd.DataFrame:
    assert job.source is not None  # through the job file: its catalog and store
    return canonical(read_export(job.source, "usage"), "time_stamp")


def fetched(sb: Any, job: Job, msisdns: list[str]) -> pd.DataFrame:
    """One whole-range fetch of these subscribers (what the table should hold of them)."""
    report = job.report("usage")
    narrowed = dataclasses.replace(report, report=report.report.where(msisdn=msisdns))
    return whole_fetch(client_for(sb), narrowed, START, END)


def test_added_subscribers_are_backfilled_alone_removed_ones_keep_their_history(
    tmp_path: Path, sb: Any, where: Where
) -> None:
    fmt, output = where
    a, b, c = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:3]
    client = client_for(sb)
    first = usage_job(tmp_path, output, fmt, sb.account_id, [a, b])
    assert run_export(first, client=client, now=NOW).ok
    before = rows(first)
    assert set(before.msisdn) == {a, b}

    grown = usage_job(tmp_path, output, fmt, sb.account_id, [a, b, c])
    plan = run_export(grown, client=client, now=NOW, dry_run=True).reports[0].plan
    # the run re-fetches its lookback for all three; c alone from the start up to there
    assert plan.added == 1 and plan.backfill[0].start == START
    assert plan.backfill[-1].end == plan.begin == END - timedelta(days=2)
    assert "backfill of 1 added fan-out value(s)" in "\n".join(plan.lines())
    sent = sb.request_count()
    summary = run_export(grown, client=client, now=NOW)
    assert summary.ok, str(summary)
    # one request per backfill window (c only), one per subscriber per own window
    assert sb.request_count() - sent == len(plan.backfill) + 3 * len(plan.windows)
    got = rows(grown)
    pd.testing.assert_frame_equal(got, fetched(sb, grown, [a, b, c]))
    held = run_export(grown, client=client, now=NOW, dry_run=True).reports[0].plan
    assert not held.backfill  # c is held now

    shrunk = usage_job(tmp_path, output, fmt, sb.account_id, [a, c])
    summary = run_export(shrunk, client=client, now=NOW)
    assert summary.ok and summary.reports[0].plan.windows  # the lookback was re-fetched
    after = rows(shrunk)
    pd.testing.assert_frame_equal(after, got)  # b's rows stay, a's and c's were rewritten
    assert len(after[after.msisdn == b]) == len(before[before.msisdn == b])

    # b back: it was not fetched while it was gone, so it is backfilled from the start again
    again = run_export(grown, client=client, now=NOW, dry_run=True).reports[0].plan
    assert again.added == 1 and again.backfill[0].start == START
    assert run_export(grown, client=client, now=NOW).ok
    pd.testing.assert_frame_equal(rows(grown), fetched(sb, grown, [a, b, c]))


def test_changing_anything_but_the_fan_out_values_is_refused(
    tmp_path: Path, sb: Any, where: Where
) -> None:
    fmt, output = where
    a = sb.network.sims_of(sb.account_id)[0].msisdn
    client = client_for(sb)
    assert run_export(
        usage_job(tmp_path, output, fmt, sb.account_id, [a]), client=client, now=NOW
    ).ok
    other = usage_job(tmp_path, output, fmt, sb.account_id, [a], metric="byte_usage_subscriber")
    with pytest.raises(ConfigError, match=r"'usage' asks for other data than") as info:
        run_export(other, client=client, now=NOW)
    assert "\n" not in str(info.value)


def test_a_long_range_of_many_subscribers_is_fetched_in_shards_one_request_each(
    tmp_path: Path, sb: Any, where: Where
) -> None:
    fmt, output = where
    msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:4]
    path = tmp_path / "job.toml"
    job = usage_job(tmp_path, output, fmt, sb.account_id, msisdns)
    # two subscribers a shard: one window over the whole range per shard, not 2-day windows
    path.write_text(path.read_text(encoding="utf-8") + "shard_size = 2\n", encoding="utf-8")
    job = load_job(path)
    plan = run_export(job, client=client_for(sb), now=NOW, dry_run=True).reports[0].plan
    assert [(w.start, w.end, w.shard, w.shards) for w in plan.windows] == [
        (START, END, 0, 2),
        (START, END, 1, 2),
    ]
    assert str(plan.windows[1]).endswith("shard 2/2")
    sent = sb.request_count()
    summary = run_export(job, client=client_for(sb), now=NOW)
    assert summary.ok, str(summary)
    assert sb.request_count() - sent == 4  # one per subscriber
    assert summary.reports[0].watermark_after == END  # both shards of the range are in
    if fmt != "parquet":  # each shard's commit counts the files it added, not its days' files
        assert summary.bytes_written == table_bytes(job, "usage") > 0
    pd.testing.assert_frame_equal(rows(job), fetched(sb, job, msisdns))
    again = run_export(job, client=client_for(sb), now=NOW, dry_run=True).reports[0].plan
    assert again.reason == "incremental" and again.begin == END - timedelta(days=2)


def test_shard_units_count_their_range_written_once_every_shard_is_in(
    tmp_path: Path, sb: Any, where: Where
) -> None:
    fmt, output = where
    msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:4]
    path = tmp_path / "job.toml"
    usage_job(tmp_path, output, fmt, sb.account_id, msisdns)
    path.write_text(path.read_text(encoding="utf-8") + "shard_size = 2\n", encoding="utf-8")
    job = load_job(path)
    units = split_units(job, START, END, days=6, shards=True)
    assert [str(u) for u in units] == [
        f"usage {START.date()} → {END.date()} shard 1/2",
        f"usage {START.date()} → {END.date()} shard 2/2",
    ]
    client = client_for(sb)
    sent = sb.request_count()
    first = run_unit(job, "usage", START, END, client=client, now=NOW, shard=units[0].shard_arg)
    assert first.ok, str(first)
    plan = run_export(job, client=client, now=NOW, dry_run=True).reports[0].plan
    assert plan.watermark is None  # one shard of two: the days are not whole yet
    second = run_unit(job, "usage", START, END, client=client, now=NOW, shard=(1, 2))
    assert second.ok, str(second)
    assert sb.request_count() - sent == 4  # one request per subscriber
    plan = run_export(job, client=client, now=NOW, dry_run=True).reports[0].plan
    assert plan.watermark == END and plan.reason == "incremental"
    pd.testing.assert_frame_equal(rows(job), fetched(sb, job, msisdns))
    with pytest.raises(ConfigError, match=r"fans out over 4 value\(s\); --shard 1/5 needs"):
        run_unit(job, "usage", START, END, client=client, now=NOW, shard="1/5")
