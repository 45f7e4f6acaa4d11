"""Window planning and fan-out of the reporting client (pure: no network)."""

from __future__ import annotations

import dataclasses
import itertools
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgereports import presets
from edgereports.errors import InputError
from edgereports.query import Report
from edgereports.reporting.plan import (
    Window,
    branches,
    bucket_of,
    metric_groups,
    plan_windows,
    window_plan,
)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
HOUR, DAY = timedelta(hours=1), timedelta(days=1)
OFFSETS = [
    timedelta(0),
    timedelta(hours=5, minutes=30),
    timedelta(hours=-4),
    timedelta(hours=5, minutes=45),
    timedelta(hours=-9, minutes=-30),
    timedelta(hours=14),
]


@st.composite
def ranges(draw: st.DrawFn) -> tuple[datetime, datetime, timedelta, timedelta]:
    bucket = draw(st.sampled_from([HOUR, DAY]))
    zone = timezone(draw(st.sampled_from(OFFSETS)))
    minutes = draw(st.integers(0, 60 * 24 * 365 * 3))
    start = (datetime(2021, 1, 1, tzinfo=UTC) + timedelta(minutes=minutes)).astimezone(zone)
    span = timedelta(minutes=draw(st.integers(1, 60 * 24 * 400)))
    end_zone = timezone(draw(st.sampled_from(OFFSETS)))
    size = bucket * draw(st.integers(1, 120))
    return start, (start + span).astimezone(end_zone), bucket, size


@settings(max_examples=300, deadline=None)
@given(ranges())
def test_plan_has_no_gap_no_overlap_and_aligned_boundaries(
    case: tuple[datetime, datetime, timedelta, timedelta],
) -> None:
    start, end, bucket, size = case
    windows = plan_windows(start, end, bucket=bucket, size=size)
    assert windows[0].start is start and windows[-1].end is end
    assert [w.index for w in windows] == list(range(len(windows)))
    assert {w.count for w in windows} == {len(windows)}
    for w in windows:
        assert w.start < w.end
        assert w.end - w.start <= size
    for left, right in itertools.pairwise(windows):
        boundary = left.end
        assert boundary is right.start  # no gap, no overlap
        assert (boundary - EPOCH) % bucket == timedelta(0)  # on a UTC bucket boundary
        assert boundary.utcoffset() == start.utcoffset()  # written in the start's offset
    for w in windows[1:-1]:
        assert w.end - w.start == size
    floor = EPOCH + ((start - EPOCH) // bucket) * bucket
    assert len(windows) == max(1, -(-(end - floor) // size))  # as few windows as possible


def test_plan_example_plus_0530() -> None:
    start = datetime.fromisoformat("2022-07-07T09:50:00+05:30")
    end = datetime.fromisoformat("2022-07-09T09:50:00+05:30")
    windows = plan_windows(start, end, bucket=DAY, size=DAY)
    assert [(w.start.isoformat(), w.end.isoformat()) for w in windows] == [
        ("2022-07-07T09:50:00+05:30", "2022-07-08T05:30:00+05:30"),
        ("2022-07-08T05:30:00+05:30", "2022-07-09T05:30:00+05:30"),
        ("2022-07-09T05:30:00+05:30", "2022-07-09T09:50:00+05:30"),
    ]
    assert str(windows[1]) == "window 2/3 2022-07-08T05:30:00+05:30..2022-07-09T05:30:00+05:30"


@pytest.mark.parametrize(
    ("start", "end", "size", "message"),
    [
        ("2022-07-07T00:00:00", "2022-07-08T00:00:00Z", DAY, "needs a tz-aware start"),
        ("2022-07-08T00:00:00Z", "2022-07-07T00:00:00Z", DAY, "must be before end"),
        ("2022-07-07T00:00:00Z", "2022-07-08T00:00:00Z", timedelta(hours=36), "whole number"),
        ("2022-07-07T00:00:00Z", "2022-07-08T00:00:00Z", timedelta(hours=12), "whole number"),
        ("2022-07-07T00:00:00Z", "2022-07-08T00:00:00Z", -DAY, "whole number"),
    ],
)
def test_plan_rejects(start: str, end: str, size: timedelta, message: str) -> None:
    with pytest.raises(InputError, match=message):
        plan_windows(
            datetime.fromisoformat(start), datetime.fromisoformat(end), bucket=DAY, size=size
        )


RANGE = {"account_id": "A", "start": "2022-01-01T00:00:00Z", "end": "2023-01-01T00:00:00Z"}


@pytest.mark.parametrize(
    ("report", "bucket", "windows"),
    [
        # a year fits the default budget (100,000 points, at most 366 days a window)
        (presets.time_usage_enterprise(**RANGE), DAY, 1),
        (presets.ue_connections_avg_peak(**RANGE), HOUR, 1),  # 8,760 hours x 2 metrics
        (presets.active_sim_count(**RANGE), DAY, 1),  # SIM counts are daily
        (presets.bandwidth_percentile(customer_site_id="S", **RANGE), None, None),
        (presets.realtime_bandwidth(account_id="A"), None, None),
        (
            Report(account_id="A").last("DAY").granularity("HOUR").metric("uplink_bytes", "COUNT"),
            None,
            None,
        ),
        (
            dataclasses.replace(presets.time_usage_enterprise(**RANGE), grain="WEEK"),
            None,
            None,
        ),
    ],
    ids=["day", "hour", "sim", "percentile", "now", "last-day", "unknown-grain"],
)
def test_which_reports_are_windowed(
    report: Report, bucket: timedelta | None, windows: int | None
) -> None:
    assert bucket_of(report) == bucket
    plan = window_plan(report)
    assert (len(plan) if plan is not None else None) == windows


def test_window_override() -> None:
    report = presets.time_usage_enterprise(**RANGE)
    plan = window_plan(report, timedelta(days=30))
    assert plan is not None and len(plan) == 13
    assert isinstance(plan[0], Window)
    with pytest.raises(InputError, match="whole number of buckets of 1 day"):
        window_plan(report, timedelta(hours=5))


def test_fan_out_one_request_per_value() -> None:
    report = presets.byte_usage_subscriber(msisdn=["911", 912, "913"], **RANGE)
    parts = branches(report)
    assert [b.values for b in parts] == [
        (("msisdn", "911"),),
        (("msisdn", 912),),
        (("msisdn", "913"),),
    ]
    filters = [b.report.to_request()["dimension_filter_clauses"][0]["filters"] for b in parts]
    assert filters[1] == [
        {"dimension_name": "account_id", "operator": "EXACT", "expressions": ["A"]},
        {"dimension_name": "msisdn", "operator": "EXACT", "expressions": [912]},
    ]
    assert [str(b) for b in parts] == ["msisdn=911", "msisdn=912", "msisdn=913"]


def test_no_fan_out() -> None:
    single = presets.byte_usage_subscriber(msisdn="911", **RANGE)
    assert [b.report for b in branches(single)] == [single]
    # the same subscriber twice (as text and as a number) is one subscriber
    twice = presets.time_usage_subscriber(msisdn=["911", 911], **RANGE)
    assert len(branches(twice)) == 1
    # a filter on a dimension that is not grouped by is sent whole (the service sums it)
    ungrouped = Report(account_id="A").between("2022-01-01", "2022-01-02").granularity("DAY")
    ungrouped = ungrouped.where(msisdn=["1", "2"]).metric("uplink_bytes", "COUNT")
    assert len(branches(ungrouped)) == 1


def test_fan_out_product_of_two_dimensions() -> None:
    report = (
        Report(account_id="A")
        .between("2022-01-01", "2022-01-02")
        .granularity("DAY")
        .by("msisdn", "customer_site_id")
        .where(msisdn=["1", "2"], customer_site_id=["S1", "S2", "S3"])
        .metric("uplink_bytes", "COUNT")
    )
    assert [dict(b.values) for b in branches(report)][:4] == [
        {"msisdn": "1", "customer_site_id": "S1"},
        {"msisdn": "1", "customer_site_id": "S2"},
        {"msisdn": "1", "customer_site_id": "S3"},
        {"msisdn": "2", "customer_site_id": "S1"},
    ]
    assert len(branches(report)) == 6


def _metrics(groups: list[tuple[object, ...]]) -> list[list[str]]:
    return [[str(m.to_dict()) for m in g] for g in groups]  # type: ignore[attr-defined]


def test_metric_groups() -> None:
    ranged = Report(account_id="A").between("2022-01-01", "2022-01-02")
    # PERCENTILE answers carry no aggregation_type: the same metric twice must be split.
    pct = ranged.by("customer_site_id").metric("uplink_bandwidth", percentile=95)
    pct = pct.metric("uplink_bandwidth", percentile=50).metric("downlink_bandwidth", percentile=95)
    assert [[m.percentile for m in g] for g in metric_groups(pct)] == [[95, 95], [50]]
    # MAX and AVG of one metric over a range come back with their aggregation: one request.
    peak = presets.ue_connections_avg_peak(**RANGE)
    assert len(metric_groups(peak)) == 1 and len(branches(peak)) == 1
    # In a NOW answer a metric is one member: MAX and AVG of the same metric are split.
    now = Report(account_id="A").now().metric("ue_connections", "MAX")
    now = now.metric("ue_connections", "AVG").metric("uplink_bandwidth", "AVG")
    groups = metric_groups(now)
    assert [[(m.name, m.aggregation_type) for m in g] for g in groups] == [
        [("ue_connections", "MAX"), ("uplink_bandwidth", "AVG")],
        [("ue_connections", "AVG")],
    ]
    split = branches(now)
    assert [b.metrics for b in split] == [
        ("ue_connections", "uplink_bandwidth"),
        ("ue_connections",),
    ]
    assert [len(b.report.to_request()["metrics"]) for b in split] == [2, 1]
