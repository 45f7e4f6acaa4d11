"""Ranges, buckets and clocks against the sandbox (clock fixed at 2022-07-08T10:00+05:30):
partial buckets named and droppable, the provisional bucket marked, empties after the present
explained, v1 and v2 daily frames joined on the bucket each row covers."""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg", force=True)

import matplotlib.dates as mdates
import pandas as pd
import pytest

import edgereports as er
from edgereports.page.summary import summary_table
from edgereports.sandbox import SandboxHandle
from tests.cli.test_report import env, run_cli  # noqa: F401  (fixture)

IST = "+05:30"


def _client(sb: SandboxHandle, version: str = "v1") -> er.ReportingClient:
    return er.ReportingClient(sb.api_key, sb.reporting_url, progress=False, api_version=version)


def _usage(sb: SandboxHandle, start: str, end: str, grain: str, tz: str = IST) -> er.Report:
    return (
        er.Report(account_id=sb.account_id, tz=tz)
        .between(start, end)
        .granularity(grain)
        .metric("uplink_bytes", "COUNT")
    )


def test_a_local_day_at_hour_names_its_two_partial_hours(sandbox: SandboxHandle) -> None:
    report = _usage(sandbox, "2022-07-06", "2022-07-07", "HOUR")
    with _client(sandbox) as client:
        with pytest.warns(er.PartialBucketWarning, match="2 HOUR buckets only in part"):
            kept = client.fetch(report)
        dropped = client.fetch(report, partial="drop")
    assert len(kept) == 25  # 18:00Z the day before .. 18:00Z: both ends straddle the range
    assert kept.attrs["partial_buckets"] == [
        {"start": "2022-07-05T18:00:00+00:00", "share": 0.5},
        {"start": "2022-07-06T18:00:00+00:00", "share": 0.5},
    ]
    assert len(dropped) == 23 and dropped.attrs["dropped_partial"] == 2
    inside = kept[
        (kept["time_stamp"] > "2022-07-05T18:00Z") & (kept["time_stamp"] < "2022-07-06T18:00Z")
    ]
    assert dropped["value"].sum() == inside["value"].sum()
    assert dropped.attrs["provisional_from"] is None  # the range ends before the present


def test_seven_local_days_at_day_overlap_eight_utc_days(sandbox: SandboxHandle) -> None:
    report = _usage(sandbox, "2022-06-30", "2022-07-07", "DAY")
    with _client(sandbox) as client, warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        frame = client.fetch(report)
        whole = client.fetch(report, partial="drop")
    assert len(frame) == 8 and len(whole) == 6
    shares = [p["share"] for p in frame.attrs["partial_buckets"]]
    assert shares == pytest.approx([5.5 / 24, 18.5 / 24], abs=1e-6)
    assert sum(issubclass(w.category, er.PartialBucketWarning) for w in seen) == 1  # not drop
    assert list(whole["time_stamp"].dt.day) == [30, 1, 2, 3, 4, 5]  # UTC days inside


def test_the_bucket_holding_the_present_is_provisional(sandbox: SandboxHandle) -> None:
    report = _usage(sandbox, "2022-07-05", "2022-07-09", "DAY", tz="UTC")
    with _client(sandbox) as client:
        frame = client.fetch(report)
        before = client.fetch(_usage(sandbox, "2022-07-05", "2022-07-08", "DAY", tz="UTC"))
    assert frame.attrs["provisional_from"] == "2022-07-08T00:00:00+00:00"
    assert frame.attrs["clock"]["source"] == "service"
    assert before.attrs["provisional_from"] is None
    assert summary_table(frame)["to"].iloc[0] == "2022-07-08 00:00Z (so far)"
    assert "so far" not in summary_table(before)["to"].iloc[0]
    ax = er.plot(frame)
    assert "8 Jul so far (provisional)" in ax.get_title()
    assert "5–8 Jul 2022 (UTC)" in ax.get_title()  # [5 Jul, 9 Jul): its last day included


def test_sim_count_charts_mark_partial_and_provisional_days(sandbox: SandboxHandle) -> None:
    sims = er.presets.active_sim_count(
        account_id=sandbox.account_id, start="2022-07-01T00:00:00+05:30", end="2022-07-09T06:00Z"
    )
    with _client(sandbox) as client, pytest.warns(er.PartialBucketWarning):
        frame = client.fetch(sims)
    assert frame.attrs["provisional_from"] == "2022-07-08T00:00:00+00:00"
    ax = er.plot(frame)
    assert "hatched: partial buckets 30 Jun (23% in range), 9 Jul (25% in range)" in ax.get_title()
    assert "dotted: 8 Jul so far (provisional)" in ax.get_title()
    hatched = {
        (mdates.num2date(p.get_x()).date().isoformat(), p.get_hatch())
        for p in ax.patches
        if p.get_hatch()
    }
    assert hatched == {
        ("2022-06-30", "////"),
        ("2022-07-08", "...."),
        ("2022-07-09", "////"),  # after the present: no bar, and nothing to revise
    }


def test_an_empty_answer_after_the_present_says_so(sandbox: SandboxHandle) -> None:
    report = _usage(sandbox, "2022-07-10", "2022-07-12", "DAY", tz="UTC")
    after = "starts after the service's present"
    with _client(sandbox) as client, pytest.warns(er.EmptyResultWarning, match=after):
        frame = client.fetch(report)
    assert frame.empty and "2022-07-08T04:30" in er.reporting.results.describe_empty(frame)


def test_v1_and_v2_daily_frames_join_on_the_bucket_each_row_covers(sandbox: SandboxHandle) -> None:
    start, end = "2022-06-01", "2022-07-01"
    v1 = _usage(sandbox, start, end, "DAY", tz="UTC")
    v2 = (
        er.Report(account_id=sandbox.account_id, api_version="v2")
        .between(start, end)
        .granularity("DAY")
        .metric("ue_session_uplink_bytes", "COUNT")
    )
    with _client(sandbox) as c1, _client(sandbox, "v2") as c2:
        one, two = c1.fetch(v1), c2.fetch(v2)
    assert len(one) == len(two) == 30
    assert two["time_stamp"].iloc[0] == pd.Timestamp("2022-06-02", tz="UTC")  # a piece's end
    by_stamp = one.merge(two, on="time_stamp", suffixes=("_1", "_2"))
    assert (by_stamp["value_1"] != by_stamp["value_2"]).any()  # stamps alone misalign days
    joined = one.assign(bucket=er.bucket_start(one)).merge(
        two.assign(bucket=er.bucket_start(two)), on="bucket", suffixes=("_1", "_2")
    )
    assert len(joined) == 30
    assert (joined["value_1"] == joined["value_2"]).all()
    assert er.wide(two)["bucket_start"].iloc[0] == pd.Timestamp("2022-06-01", tz="UTC")
    ax = er.plot(two)  # drawn on 1 June, as the v1 frame is
    assert "1–30 Jun 2022" in ax.get_title()


def test_cli_partial_drop(
    env: SandboxHandle,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["report", "--account-id", env.account_id, "--start", "2022-07-06", "--end",
            "2022-07-07", "--tz", IST, "--granularity", "HOUR", "--metric",
            "uplink_bytes:COUNT", "--json"]  # fmt: skip
    assert run_cli(args) == 0
    out = capsys.readouterr()
    assert out.out.count("time_stamp") == 25
    assert "PartialBucketWarning: the range covers 2 HOUR buckets only in part" in out.err
    assert run_cli([*args, "--partial", "drop"]) == 0
    out = capsys.readouterr()
    assert out.out.count("time_stamp") == 23 and "PartialBucketWarning" not in out.err
