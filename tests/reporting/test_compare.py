"""Period over period: ``fetch(report, compare=...)`` against the sandbox over loopback."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd
import pytest

import edgereports as er
from edgereports import presets
from edgereports.reporting.periods import bucket_count, previous_range, year_earlier
from edgereports.sandbox import SandboxHandle
from edgereports.schema import COMPARE_COLUMNS, validate_frame

KEYS = ["account_id", "metric", "aggregation", "percentile"]
HOUR = timedelta(hours=1)


def _client(sb: SandboxHandle, version: str) -> er.ReportingClient:
    return er.ReportingClient(sb.api_key, sb.reporting_url, api_version=version, progress=False)


def _v1(sb: SandboxHandle, grain: str, start: str, end: str) -> er.Report:
    msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:3]
    return presets.byte_usage_subscriber(
        account_id=sb.account_id, msisdn=msisdns, start=start, end=end
    ).granularity(grain)


def _v2(sb: SandboxHandle, grain: str, start: str, end: str) -> er.Report:
    ips = [d.ue_ip for d in sb.network.devices if d.account_id == sb.account_id][:3]
    return (
        er.Report(account_id=sb.account_id, api_version="v2")
        .between(start, end)
        .granularity(grain)
        .by("ue_ip")
        .where(ue_ip=ips)
        .metric("ue_session_uplink_bytes", "COUNT")
        .metric("ue_session_downlink_bytes", "COUNT")
    )


CASES = [
    # version, builder, grain, start, end, the shift to the previous period
    ("v1", _v1, "DAY", "2022-07-01", "2022-07-08", timedelta(days=7)),
    # 09:50+05:30 is 04:20Z: the range overlaps 25 UTC hours, so the period before is 25 hours
    ("v1", _v1, "HOUR", "2022-07-06T09:50+05:30", "2022-07-07T09:50+05:30", timedelta(hours=25)),
    ("v2", _v2, "DAY", "2022-07-01", "2022-07-08", timedelta(days=7)),
    # v2 stamps each piece at its end: 19:19:19-04:00 to 03:19:19-04:00 covers 9 UTC hours
    ("v2", _v2, "HOUR", "2022-07-06T19:19:19-04:00", "2022-07-07T03:19:19-04:00", 9 * HOUR),
]  # fmt: skip


def _expected(other: pd.DataFrame, shift: timedelta, dims: list[str]) -> pd.DataFrame:
    """The other period's rows keyed by where they land in this period (time + shift)."""
    out = other[["time_stamp", *dims, *KEYS, "value"]].copy()
    out["landing"] = out["time_stamp"] + shift
    return out.rename(columns={"time_stamp": "expected_stamp", "value": "expected_value"})


@pytest.mark.parametrize(("version", "build", "grain", "start", "end", "shift"), CASES)
def test_compare_values_equal_a_separate_fetch_of_the_previous_period(
    sandbox: SandboxHandle,
    version: str,
    build: Any,
    grain: str,
    start: str,
    end: str,
    shift: timedelta,
) -> None:
    report = build(sandbox, grain, start, end)
    with _client(sandbox, version) as client:
        df = client.fetch(report, compare="previous_period")
    span = report.time_range()
    with _client(sandbox, version) as client:  # a client of its own: nothing shared
        alone = client.fetch(report)
        other = client.fetch(report.between(span[0] - shift, span[1] - shift))
    dims = [c for c in alone.columns if c in ("msisdn", "ue_ip")]
    assert len(dims) == 1 and alone[dims[0]].nunique() == 3  # fanned out over three values
    # the pinned columns are the plain fetch's, untouched; the comparison follows them
    pd.testing.assert_frame_equal(df[list(alone.columns)], alone, check_like=False)
    assert list(df.columns) == [*alone.columns, *COMPARE_COLUMNS]
    assert str(df["compare_time_stamp"].dtype) == "datetime64[us, UTC]"
    assert len(other) == len(alone) > 0
    joined = df.merge(
        _expected(other, shift, dims),
        left_on=["time_stamp", *dims, *KEYS],
        right_on=["landing", *dims, *KEYS],
        how="left",
        validate="one_to_one",
    )
    assert joined["expected_value"].notna().all()  # every row has its counterpart
    assert (joined["compare_time_stamp"] == joined["expected_stamp"]).all()
    assert (joined["compare_value"] == joined["expected_value"]).all()
    assert (df["change"] == df["value"] - df["compare_value"]).all()
    base = df["compare_value"].abs()
    pct = df.loc[base > 0, "change"] / base[base > 0] * 100
    assert (df.loc[base > 0, "change_pct"] - pct).abs().max() < 1e-9
    assert df.loc[base == 0, "change_pct"].isna().all()
    facts = df.attrs["compare"]
    assert facts["mode"] == "previous_period"
    assert (facts["unmatched"], facts["unmatched_other"]) == (0, 0)
    assert datetime.fromisoformat(facts["start"]) == span[0] - shift
    assert (df["value"] != df["compare_value"]).any()  # two periods, not one pulled twice
    pd.testing.assert_frame_equal(validate_frame(df), df)  # the schema keeps the comparison


def test_previous_year_takes_the_same_dates_a_year_earlier(sandbox: SandboxHandle) -> None:
    report = _v1(sandbox, "DAY", "2022-07-01", "2022-07-04")
    with _client(sandbox, "v1") as client:
        df = client.fetch(report, compare="previous_year")
        other = client.fetch(report.between("2021-07-01", "2021-07-04"))
    assert df.attrs["compare"]["start"].startswith("2021-07-01")
    assert set(df["compare_time_stamp"].dt.strftime("%Y-%m-%d")) == {
        "2021-07-01",
        "2021-07-02",
        "2021-07-03",
    }
    keyed = other.set_index(["time_stamp", "msisdn", "metric"])["value"]
    for row in df.itertuples():
        assert row.compare_value == keyed[(row.compare_time_stamp, row.msisdn, row.metric)]


def test_rows_without_a_counterpart_keep_nulls_and_are_counted(sandbox: SandboxHandle) -> None:
    report = _v1(sandbox, "DAY", "2022-07-01", "2022-07-05")
    with _client(sandbox, "v1") as client:  # a shorter other period: 2 days against 4
        df = client.fetch(report, compare=("2022-06-01", "2022-06-03"))
    series = df.groupby(["msisdn", "metric"]).ngroups
    late = df["time_stamp"] >= pd.Timestamp("2022-07-03", tz="UTC")
    assert (
        df.loc[late, ["compare_time_stamp", "compare_value", "change", "change_pct"]]
        .isna()
        .all()
        .all()
    )
    assert df.loc[~late, "compare_value"].notna().all()
    assert df.attrs["compare"]["mode"] == "range"
    assert df.attrs["compare"]["unmatched"] == 2 * series == int(late.sum())
    assert df.attrs["compare"]["unmatched_other"] == 0


def test_er_fetch_compares_too(sandbox: SandboxHandle) -> None:
    with _client(sandbox, "v1") as client:
        df = er.fetch(
            "time_usage_enterprise",
            start="2022-07-01",
            end="2022-07-08",
            account_id=sandbox.account_id,
            client=client,
            compare="previous_period",
        )
    assert df["compare_value"].notna().all() and len(df) == 7


@pytest.mark.parametrize(
    ("compare", "message"),
    [
        ("last_week", "compare must be 'previous_period', 'previous_year' or a (start, end) pair"),
        (("2022-06-01",), "compare must be 'previous_period', 'previous_year' or a (start, end)"),
        (7, "compare must be 'previous_period', 'previous_year' or a (start, end) pair, got 7"),
        (("2022-06-03", "2022-06-01"), "compare: "),
        (("LAST DAY", "NOW"), "compare takes dates, not time keywords"),
    ],
)
def test_a_bad_compare_is_refused_before_any_request(compare: object, message: str) -> None:
    report = er.Report(account_id="A").between("2022-07-01", "2022-07-08").granularity("DAY")
    report = report.metric("time_usage_seconds", "COUNT")
    client = er.ReportingClient("k" * 12, "http://127.0.0.1:9", progress=False, retries=0)
    with client, pytest.raises(er.QueryError, match=re.escape(message)) as info:
        client.fetch(report, compare=compare)  # nothing listens there: no request was sent
    assert info.value.field == "compare"


def test_keyword_ranges_sim_counts_and_other_outputs_are_refused() -> None:
    with er.ReportingClient("k" * 12, "http://127.0.0.1:9", progress=False, retries=0) as client:
        last = er.Report(account_id="A").last("DAY").metric("time_usage_seconds", "COUNT")
        with pytest.raises(er.QueryError, match="not one written with time keywords"):
            client.fetch(last, compare="previous_period")
        sims = presets.active_sim_count(account_id="A", start="2022-07-01", end="2022-07-08")
        with pytest.raises(er.QueryError, match="not on SIM counts"):
            client.fetch(sims, compare="previous_period")
        days = _plain_days()
        with pytest.raises(er.InputError, match="output must be 'pandas'"):
            client.fetch(days, compare="previous_period", output="arrow")


def _plain_days() -> er.Report:
    report = er.Report(account_id="A").between("2022-07-01", "2022-07-08").granularity("DAY")
    return report.metric("time_usage_seconds", "COUNT")


def test_period_arithmetic() -> None:
    day, hour = timedelta(days=1), timedelta(hours=1)
    t = datetime(2024, 3, 8, tzinfo=UTC)
    assert bucket_count(t, t + 7 * day, day) == 7
    assert bucket_count(t + 12 * hour, t + 7 * day + 12 * hour, day) == 8
    assert bucket_count(t, t + 30 * timedelta(minutes=1), hour) == 1
    assert previous_range("previous_period", t, t + 7 * day, day) == (t - 7 * day, t)
    assert previous_range("previous_period", t, t + 90 * timedelta(minutes=1), None) == (
        t - 90 * timedelta(minutes=1),
        t,
    )
    assert year_earlier(datetime(2024, 2, 29, 5, tzinfo=UTC)) == datetime(
        2023, 2, 28, 5, tzinfo=UTC
    )
    assert previous_range("previous_year", t, t + day, day)[0] == datetime(2023, 3, 8, tzinfo=UTC)


def test_partial_and_provisional_buckets_are_named_for_both_periods(
    sandbox: SandboxHandle,
) -> None:
    from edgereports.page import period_notes

    # 09:50+05:30 is 04:20Z: both periods start and end inside an hour; this one reaches the
    # sandbox's present (10:00+05:30, 04:30Z), so its last hour is still provisional
    report = presets.time_usage_enterprise(
        account_id=sandbox.account_id, start="2022-07-06T09:50+05:30", end="2022-07-08T09:50+05:30"
    ).granularity("HOUR")
    with _client(sandbox, "v1") as client, pytest.warns(er.PartialBucketWarning):
        df = client.fetch(report, compare="previous_period")
    facts = df.attrs["compare"]
    assert [b["start"] for b in df.attrs["partial_buckets"]] == [
        "2022-07-06T04:00:00+00:00",
        "2022-07-08T04:00:00+00:00",
    ]
    assert [b["start"] for b in facts["partial_buckets"]] == [  # 49 hours earlier
        "2022-07-04T03:00:00+00:00",
        "2022-07-06T03:00:00+00:00",
    ]
    assert df.attrs["provisional_from"] == "2022-07-08T04:00:00+00:00"
    assert "provisional_from" not in facts  # the period before is over
    notes = period_notes(df)
    assert "Buckets covered only in part (this period): 2022-07-06 04:00 UTC (67%)" in notes[1]
    assert "Provisional from 2022-07-08 04:00 UTC (this period): figures so far." in notes
    assert any(n.startswith("Buckets covered only in part (the other period)") for n in notes)


def test_a_failed_other_period_is_collected_or_raised(
    make_sandbox: Any,
) -> None:
    sb = make_sandbox()
    report = presets.time_usage_enterprise(
        account_id=sb.account_id, start="2022-07-01", end="2022-07-08"
    )
    with er.ReportingClient(
        sb.api_key, sb.reporting_url, progress=False, max_workers=1, retries=0
    ) as client:
        # one lane: this period's request goes first, the other period's second (refused)
        sb.enqueue_faults("latency=0", "400")
        df = client.fetch(report, compare="previous_period", on_error="collect")
        assert len(df) == 7 and df["value"].notna().all()
        assert df["compare_value"].isna().all()
        facts = df.attrs["compare"]
        assert facts["unmatched"] == 7 and facts["unmatched_other"] == 0
        assert [f["status_code"] for f in facts["failures"]] == [400]
        assert facts["failures"][0]["request"]["start_date_time"].startswith("2022-06-24")
        sb.enqueue_faults("latency=0", "400")
        with pytest.raises(er.ApiError) as info:
            client.fetch(report, compare="previous_period")
    assert any("compared period (previous_period" in note for note in info.value.__notes__)


def test_the_warnings_of_a_compared_pull_point_at_the_caller(sandbox: SandboxHandle) -> None:
    report = _v1(sandbox, "DAY", "2022-07-01T00:00+05:30", "2022-07-08T00:00+05:30")
    with _client(sandbox, "v1") as client, pytest.warns(er.PartialBucketWarning) as seen:
        client.fetch(report, compare="previous_period")
    assert seen and {w.filename for w in seen} == {__file__}
