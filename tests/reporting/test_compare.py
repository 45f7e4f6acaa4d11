"""Period over period: each row meets the row the calendar's shift earlier, with the value a
separate fetch of that period gives, for v1 and v2, in every output (the sandbox over loopback).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pandas as pd
import pytest

import edgereports as er
from edgereports.normalize.output import as_pandas
from edgereports.sandbox import SandboxHandle
from edgereports.schema import COMPARE_COLUMNS, validate_frame

KEYS = ["account_id", "metric", "aggregation", "percentile"]
# A week over the start of summer time in Berlin (Sunday 27 March 2022: no 02:00 that day),
# and the same weekdays 364 days earlier (Sunday 28 March 2021 skipped its 02:00 too).
WEEK = ("2022-03-21", "2022-03-28")
OTHER = {
    "previous_week": ("2022-03-14", "2022-03-21"),
    "previous_year_dow": ("2021-03-22", "2021-03-29"),
}
DAYS_BACK = {"previous_week": 7, "previous_year_dow": 364}
ZONES = ["+05:30", "Europe/Berlin", "UTC"]


def client_of(sb: SandboxHandle, version: str) -> er.ReportingClient:
    return er.ReportingClient(sb.api_key, sb.reporting_url, api_version=version, progress=False)


def subscribers(sb: SandboxHandle, version: str, grain: str) -> er.Report:
    """Three subscribers (v1) or three UE IPs (v2), fanned out: one series each."""
    if version == "v1":
        msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:3]
        return er.presets.byte_usage_subscriber(
            account_id=sb.account_id, msisdn=msisdns, start=WEEK[0], end=WEEK[1]
        ).granularity(grain)
    ips = [d.ue_ip for d in sb.network.devices if d.account_id == sb.account_id][:3]
    return (
        er.Report(account_id=sb.account_id, api_version="v2")
        .between(*WEEK)
        .granularity(grain)
        .by("ue_ip")
        .where(ue_ip=ips)
        .metric("ue_session_uplink_bytes", "COUNT")
        .metric("ue_session_downlink_bytes", "COUNT")
    )


def covered(stamps: pd.Series, version: str, grain: str) -> pd.Series:
    """The start of the bucket each stamp stands for (a v2 row is stamped at its piece's end)."""
    step = pd.Timedelta(hours=1) if grain == "HOUR" else pd.Timedelta(days=1)
    if version == "v1":
        return stamps
    return (stamps - pd.Timedelta(microseconds=1)).dt.floor(step)


def range_share(starts: pd.Series, grain: str, low: str, high: str, zone: str) -> pd.Series:
    """The part of each bucket that the range ``[low, high)`` (dates in ``zone``) covers."""
    step = pd.Timedelta(hours=1) if grain == "HOUR" else pd.Timedelta(days=1)
    tz = "UTC" if zone == "UTC" else ("Asia/Kolkata" if zone == "+05:30" else zone)
    begin, end = pd.Timestamp(low, tz=tz), pd.Timestamp(high, tz=tz)
    inside = (starts + step).clip(upper=end) - starts.clip(lower=begin)
    return inside.clip(lower=pd.Timedelta(0)) / step


def wall(stamps: pd.Series, zone: str, grain: str) -> pd.Series:
    """Stamps on the clock a row's offset is counted on: UTC days, or the zone's wall clock."""
    if grain == "DAY":
        return stamps.dt.tz_localize(None)
    tz = "UTC" if zone == "UTC" else ("Asia/Kolkata" if zone == "+05:30" else zone)
    return stamps.dt.tz_convert(tz).dt.tz_localize(None)


@pytest.mark.filterwarnings("ignore::edgereports.PartialBucketWarning")
@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("grain", ["DAY", "HOUR"])
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_each_row_meets_the_row_the_calendar_shift_earlier_as_a_separate_fetch_has_it(
    sandbox: SandboxHandle, version: str, grain: str, zone: str
) -> None:
    report = subscribers(sandbox, version, grain).timezone(zone).between(*WEEK)
    with client_of(sandbox, version) as client:
        df = client.fetch(report, compare=list(OTHER))
        table = client.fetch(report, compare=list(OTHER), output="arrow")
        polar = client.fetch(report, compare=list(OTHER), output="polars")
    with client_of(sandbox, version) as client:  # a client of its own: nothing shared
        alone = client.fetch(report)
        apart = {name: client.fetch(report.between(*dates)) for name, dates in OTHER.items()}
    dims = [c for c in alone.columns if c in ("msisdn", "ue_ip")]
    assert len(dims) == 1 and alone[dims[0]].nunique() == 3
    assert list(df.columns) == [*alone.columns, "period", *COMPARE_COLUMNS]
    assert list(df["period"].drop_duplicates()) == list(OTHER)
    facts = df.attrs["compare"]
    for i, (name, block) in enumerate(df.groupby("period", sort=False)):
        block = block.reset_index(drop=True)
        # this period's columns are the plain fetch's, untouched, in each block
        pd.testing.assert_frame_equal(block[list(alone.columns)], alone, check_like=False)
        mine = covered(block["time_stamp"], version, grain)
        theirs = covered(block["compare_time_stamp"], version, grain)
        assert theirs.notna().all()  # every row of the week has its counterpart
        days = pd.Timedelta(days=DAYS_BACK[str(name)])
        assert (wall(mine, zone, grain) - wall(theirs, zone, grain) == days).all()
        if name == "previous_year_dow":  # the same weekday, every row
            weekday = wall(mine, zone, grain).dt.day_of_week
            assert (weekday == wall(theirs, zone, grain).dt.day_of_week).all()
        # the values are those of a separate fetch of the other period, row for row
        other = apart[str(name)]
        keyed = other.set_index(["time_stamp", *dims, *KEYS])["value"]
        wanted = keyed.loc[list(zip(block["compare_time_stamp"], *(block[c] for c in dims),
                                    *(block[c] for c in KEYS), strict=True))]  # fmt: skip
        assert (block["compare_value"].to_numpy() == wanted.to_numpy()).all()
        said = facts["others"][i]
        assert (said["name"], said["start"][:10]) == (name, OTHER[str(name)][0])
        assert said["unmatched"] == 0 and said["unmatched_other"] == len(other) - len(block)
        # like with like: the change where the two rows hold the same share of their time
        share = range_share(mine, grain, *WEEK, zone)
        share_o = range_share(theirs, grain, *OTHER[str(name)], zone)
        alike = (share - share_o).abs() < 1e-9 if version == "v2" else pd.Series(True, block.index)
        assert (block["change"].notna() == alike).all()
        assert (
            block.loc[alike, "change"] == (block["value"] - block["compare_value"])[alike]
        ).all()
        assert (block["compare_partial"] == ((share < 1) | (share_o < 1))).all()
    assert (df["value"] != df["compare_value"]).any()  # other periods, not this one again
    pd.testing.assert_frame_equal(validate_frame(df), df)  # the schema keeps the comparison
    # Arrow and polars: the same columns and values, and what the pull recorded
    assert table.column_names == list(df.columns) == list(polar.columns)
    pd.testing.assert_frame_equal(as_pandas(table), df)
    pd.testing.assert_frame_equal(as_pandas(polar), df)
    assert er.provenance(table)["compare"]["others"][1]["name"] == "previous_year_dow"


def test_a_week_in_an_offset_zone_meets_the_week_seven_local_days_before(
    sandbox: SandboxHandle,
) -> None:
    # seven +05:30 days overlap eight UTC days; the week before overlaps eight too, day by day
    report = subscribers(sandbox, "v1", "DAY").between(
        "2022-07-01T00:00+05:30", "2022-07-08T00:00+05:30"
    )
    with client_of(sandbox, "v1") as client, pytest.warns(er.PartialBucketWarning):
        df = client.fetch(report, compare="previous_period")
    assert list(df.columns) == [*df.columns[: -len(COMPARE_COLUMNS)], *COMPARE_COLUMNS]
    assert "period" not in df.columns  # one period: the columns as they always were
    assert (df["time_stamp"] - df["compare_time_stamp"] == pd.Timedelta(days=7)).all()
    assert (df["time_stamp"].dt.day_of_week == df["compare_time_stamp"].dt.day_of_week).all()
    facts = df.attrs["compare"]
    assert (facts["mode"], facts["start"], facts["end"]) == (
        "previous_period",
        "2022-06-24T00:00:00+05:30",
        "2022-07-01T00:00:00+05:30",
    )
    assert facts["range"] == {"start": "2022-07-01T00:00+05:30", "end": "2022-07-08T00:00+05:30"}
    assert facts["shift"] == {"days": 7, "years": 0, "seconds": 0.0}
    # the first and last UTC days are partial on both sides, and equally so: compared, marked
    edge = df["time_stamp"].isin(pd.to_datetime(["2022-06-30", "2022-07-07"], utc=True))
    assert (df["compare_partial"] == edge).all() and df["change"].notna().all()


def test_a_local_day_at_hour_meets_the_24_hours_before_it(sandbox: SandboxHandle) -> None:
    # 09:50+05:30 is 04:20Z: the range overlaps 25 UTC hours, and the day before as many
    report = subscribers(sandbox, "v1", "HOUR").between(
        "2022-07-06T09:50+05:30", "2022-07-07T09:50+05:30"
    )
    with client_of(sandbox, "v1") as client, pytest.warns(er.PartialBucketWarning):
        df = client.fetch(report, compare="previous_period")
        other = client.fetch(report.between("2022-07-05T09:50+05:30", "2022-07-06T09:50+05:30"))
    assert (df["time_stamp"] - df["compare_time_stamp"] == pd.Timedelta(hours=24)).all()
    assert df.groupby(["msisdn", "metric"]).size().eq(25).all() and len(other) == len(df)
    assert df.attrs["compare"]["unmatched_other"] == 0


def test_previous_year_takes_the_same_dates_and_its_dow_form_the_same_weekdays(
    sandbox: SandboxHandle,
) -> None:
    report = subscribers(sandbox, "v1", "DAY").between("2022-07-04", "2022-07-07")  # Mon-Wed
    with client_of(sandbox, "v1") as client:
        dates = client.fetch(report, compare="previous_year")
        days = client.fetch(report, compare="previous_year_dow")
        other = client.fetch(report.between("2021-07-04", "2021-07-07"))
    assert set(dates["compare_time_stamp"].dt.strftime("%Y-%m-%d %a")) == {
        "2021-07-04 Sun",
        "2021-07-05 Mon",
        "2021-07-06 Tue",
    }
    assert set(days["compare_time_stamp"].dt.strftime("%Y-%m-%d %a")) == {
        "2021-07-05 Mon",
        "2021-07-06 Tue",
        "2021-07-07 Wed",
    }
    keyed = other.set_index(["time_stamp", "msisdn", "metric"])["value"]
    for row in dates.itertuples():
        assert row.compare_value == keyed[(row.compare_time_stamp, row.msisdn, row.metric)]
    assert days.attrs["compare"]["rule"] == "364 days earlier (the same weekdays)"


def test_rows_without_a_counterpart_keep_nulls_and_are_counted(sandbox: SandboxHandle) -> None:
    report = subscribers(sandbox, "v1", "DAY").between("2022-07-01", "2022-07-05")
    with client_of(sandbox, "v1") as client:  # a shorter other period: 2 days against 4
        df = client.fetch(report, compare=("2022-06-01", "2022-06-03"))
    series = df.groupby(["msisdn", "metric"]).ngroups
    late = df["time_stamp"] >= pd.Timestamp("2022-07-03", tz="UTC")
    assert df.loc[late, ["compare_time_stamp", *COMPARE_COLUMNS[1:4]]].isna().all().all()
    assert df.loc[~late, "compare_value"].notna().all()
    assert (
        (df.loc[~late, "time_stamp"] - df.loc[~late, "compare_time_stamp"])
        .eq(pd.Timedelta(days=30))
        .all()
    )
    facts = df.attrs["compare"]
    assert (facts["mode"], facts["name"]) == ("range", "2022-06-01..2022-06-03")
    assert facts["unmatched"] == 2 * series == int(late.sum())
    assert facts["unmatched_other"] == 0


def test_er_fetch_compares_too(sandbox: SandboxHandle) -> None:
    with client_of(sandbox, "v1") as client:
        df = er.fetch(
            "time_usage_enterprise",
            start="2022-07-01",
            end="2022-07-08",
            account_id=sandbox.account_id,
            client=client,
            compare="previous_week",
        )
    assert df["compare_value"].notna().all() and len(df) == 7


def test_partial_and_provisional_buckets_are_named_for_both_periods(
    sandbox: SandboxHandle,
) -> None:
    from edgereports.page import period_notes

    # 09:50+05:30 is 04:20Z: both periods start and end inside an hour; this one reaches the
    # sandbox's present (10:00+05:30, 04:30Z), so its last hour is still provisional
    report = er.presets.time_usage_enterprise(
        account_id=sandbox.account_id, start="2022-07-06T09:50+05:30", end="2022-07-08T09:50+05:30"
    ).granularity("HOUR")
    with client_of(sandbox, "v1") as client, pytest.warns(er.PartialBucketWarning):
        df = client.fetch(report, compare="previous_period")
    facts = df.attrs["compare"]
    assert [b["start"] for b in df.attrs["partial_buckets"]] == [
        "2022-07-06T04:00:00+00:00",
        "2022-07-08T04:00:00+00:00",
    ]
    assert [b["start"] for b in facts["partial_buckets"]] == [  # two local days earlier
        "2022-07-04T04:00:00+00:00",
        "2022-07-06T04:00:00+00:00",
    ]
    assert df.attrs["provisional_from"] == "2022-07-08T04:00:00+00:00"
    assert "provisional_from" not in facts  # the period before is over
    # the last hour so far (04:00-04:30Z) meets a whole hour: marked, and no change
    last = df["time_stamp"] == pd.Timestamp("2022-07-08T04:00Z")
    assert df.loc[last, "compare_partial"].all() and df.loc[last, "change"].isna().all()
    assert df.loc[~last, "change"].notna().all() and facts["not_alike"] == int(last.sum())
    notes = period_notes(df)
    part = "Buckets covered only in part (this period): 2022-07-06 04:00 UTC (67%)"
    assert any(n.startswith(part) for n in notes)
    assert "Provisional from 2022-07-08 04:00 UTC (this period): figures so far." in notes
    assert any(n.startswith("Buckets covered only in part (the other period)") for n in notes)
    assert any("their change is blank" in n for n in notes)


def test_a_failed_other_period_is_collected_or_raised(make_sandbox: Any) -> None:
    sb = make_sandbox()
    report = er.presets.time_usage_enterprise(
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
    report = subscribers(sandbox, "v1", "DAY").between(
        "2022-07-01T00:00+05:30", "2022-07-08T00:00+05:30"
    )
    with client_of(sandbox, "v1") as client, pytest.warns(er.PartialBucketWarning) as seen:
        client.fetch(report, compare=["previous_week", "previous_year"])
    assert seen and {w.filename for w in seen} == {__file__}


def test_a_compared_frame_goes_to_arrow_and_back_with_its_columns(sandbox: SandboxHandle) -> None:
    report = subscribers(sandbox, "v1", "DAY").between("2022-07-01", "2022-07-03")
    with client_of(sandbox, "v1") as client:
        df = client.fetch(report, compare="previous_week")
        table = client.fetch(report, compare="previous_week", output="arrow")
    schema = {f.name: str(f.type) for f in table.schema}
    assert schema["compare_time_stamp"] == "timestamp[us, tz=UTC]"
    assert schema["compare_partial"] == "bool" and schema["change_pct"] == "double"
    back = as_pandas(table)
    pd.testing.assert_frame_equal(back, df)
    assert back.attrs["compare"]["name"] == "previous_week"
    assert timedelta(days=7) == (back["time_stamp"] - back["compare_time_stamp"]).iloc[0]
