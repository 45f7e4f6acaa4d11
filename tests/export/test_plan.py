"""Export planning: whole-UTC-day windows up to the last complete bucket, from the watermark."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgereports.errors import ConfigError
from edgereports.export.job import parse_job
from edgereports.export.plan import floor_day, plan_export, to_utc
from edgereports.export.reports import ReportJob
from edgereports.query.timegrid import floor

DAY = timedelta(days=1)


def report(granularity: str | None = "HOUR", **extra: object) -> ReportJob:
    preset = {"HOUR": "ue_connections_avg_peak", "DAY": "ue_connections_enterprise"}.get(
        str(granularity), "active_sim_count"
    )
    item = {"name": "r", "preset": preset, "params": {"account_id": "A"}, "start": "2024-01-01"}
    item.update(extra)
    return parse_job({"output": "o", "reports": [item]}).reports[0]


def test_first_run_goes_from_start_to_the_last_complete_hour() -> None:
    now = datetime(2024, 1, 10, 7, 42, tzinfo=UTC)
    plan = plan_export(report("HOUR", window_days=4), None, now=now)
    assert plan.reason == "first run"
    assert [(str(w.start), str(w.end)) for w in plan.windows] == [
        ("2024-01-01 00:00:00+00:00", "2024-01-05 00:00:00+00:00"),
        ("2024-01-05 00:00:00+00:00", "2024-01-09 00:00:00+00:00"),
        ("2024-01-09 00:00:00+00:00", "2024-01-10 07:00:00+00:00"),
    ]
    assert [len(w.days()) for w in plan.windows] == [4, 4, 2]


def test_a_day_report_stops_at_midnight() -> None:
    now = datetime(2024, 1, 10, 23, 59, tzinfo=UTC)
    plan = plan_export(report("DAY"), None, now=now)
    assert plan.windows[-1].end == datetime(2024, 1, 10, tzinfo=UTC)
    assert plan_export(report(None), None, now=now).end == datetime(2024, 1, 10, tzinfo=UTC)


def test_incremental_run_starts_at_the_watermark_minus_the_lookback_in_whole_days() -> None:
    now = datetime(2024, 2, 1, 3, 0, tzinfo=UTC)
    mark = datetime(2024, 1, 31, 5, 0, tzinfo=UTC)
    plan = plan_export(report("HOUR", lookback="6h"), mark, now=now)
    assert plan.reason == "incremental"
    assert plan.begin == datetime(2024, 1, 30, tzinfo=UTC)  # 23:00 on the 30th, rounded out
    assert plan.windows[0].start == plan.begin and plan.windows[-1].end == now.replace(minute=0)
    plan = plan_export(report("HOUR", lookback="5h"), mark, now=now)
    assert plan.begin == datetime(2024, 1, 31, tzinfo=UTC)


def test_full_refresh_ignores_the_watermark_and_until_is_a_midnight() -> None:
    now = datetime(2024, 2, 1, tzinfo=UTC)
    mark = datetime(2024, 1, 31, tzinfo=UTC)
    plan = plan_export(
        report("DAY"), mark, now=now, full_refresh=True, until=to_utc("2024-01-20T13:00Z")
    )
    assert plan.reason == "full refresh"
    assert (plan.begin, plan.end) == (
        datetime(2024, 1, 1, tzinfo=UTC),
        datetime(2024, 1, 20, tzinfo=UTC),
    )


def test_nothing_to_do_is_up_to_date() -> None:
    now = datetime(2024, 2, 1, 0, 30, tzinfo=UTC)
    plan = plan_export(report("DAY", lookback=0), datetime(2024, 2, 1, tzinfo=UTC), now=now)
    assert plan.windows == () and plan.reason == "up to date"
    assert plan.lines() == ["r: up to date, watermark 2024-02-01, nothing to fetch"]
    before = plan_export(report("DAY"), None, now=datetime(2023, 12, 1, tzinfo=UTC))
    assert before.windows == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2024-13-01", "--until '2024-13-01' is not a date"),
        ("yesterday", "--until 'yesterday' is not a date"),
        ("2024-01-01T00:00:00", "--until '2024-01-01T00:00:00' has no UTC offset"),
    ],
)
def test_bad_until(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        to_utc(text)
    assert message in str(info.value)


instants = st.datetimes(
    min_value=datetime(2024, 1, 1), max_value=datetime(2024, 4, 1), timezones=st.just(UTC)
)


@settings(max_examples=150, deadline=None)
@given(
    granularity=st.sampled_from(["HOUR", "DAY", None]),
    window_days=st.integers(1, 10),
    lookback_hours=st.integers(0, 24 * 5),
    now=instants,
    mark=st.none() | instants,
    until=st.none() | instants,
    full=st.booleans(),
)
def test_windows_tile_the_range_on_whole_days(
    granularity: str | None,
    window_days: int,
    lookback_hours: int,
    now: datetime,
    mark: datetime | None,
    until: datetime | None,
    full: bool,
) -> None:
    r = report(granularity, window_days=window_days, lookback=f"{lookback_hours}h")
    plan = plan_export(r, mark, now=now, until=until, full_refresh=full)
    end = floor(now, r.bucket)  # the start of the bucket holding now
    if until is not None:
        end = min(end, floor_day(until))
    if full or mark is None:
        begin = r.start
    else:
        begin = max(r.start, floor_day(mark - timedelta(hours=lookback_hours)))
        assert begin <= mark - timedelta(hours=lookback_hours) or begin == r.start
    if begin >= end:
        assert plan.windows == ()
        return
    windows = plan.windows
    assert windows[0].start == begin and windows[-1].end == end
    for a, b in itertools.pairwise(windows):
        assert a.end == b.start  # no gap, no overlap
    for w in windows:
        assert w.start == floor_day(w.start)  # every window starts at a UTC midnight
        assert w.end - w.start <= timedelta(days=window_days)
        assert (w.end - w.start) % r.bucket == timedelta(0)
    for w in windows[:-1]:
        assert w.end == floor_day(w.end)  # only the last may end inside a day
    days = [d for w in windows for d in w.days()]
    assert len(days) == len(set(days))  # each day's partition is written by one window
