"""The time grid's comparison periods: the other range of a rule, and the row each row meets."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgereports.query.periods import (
    Shift,
    counterparts,
    covered_share,
    fixed_gap,
    from_wall,
    other_range,
    pair_shift,
    rule_shift,
    year_earlier,
)

IST = timezone(timedelta(hours=5, minutes=30))
BERLIN = ZoneInfo("Europe/Berlin")
DAY, HOUR = timedelta(days=1), timedelta(hours=1)
LIMITS = settings(max_examples=150, deadline=None)


def _local(day: str, zone: tzinfo, hour: int = 0) -> datetime:
    return datetime.combine(date.fromisoformat(day), time(hour), zone)


def test_seven_local_days_have_the_seven_local_days_before_them_in_every_zone() -> None:
    for zone in (IST, BERLIN, UTC):
        start, end = _local("2024-03-25", zone), _local("2024-04-01", zone)  # over 31 March
        shift = rule_shift("previous_period", start, end, zone)
        assert shift == Shift(days=7)
        low, high = other_range(start, end, shift, zone)
        assert (low.date(), low.hour, high) == (date(2024, 3, 18), 0, start)
    # the Berlin week is 167 hours long; the week before it 168, and it is still 7 days back
    week = _local("2024-04-01", BERLIN).astimezone(UTC) - _local("2024-03-25", BERLIN)
    assert week == 167 * HOUR


def test_the_named_rules_move_by_their_calendar_shift() -> None:
    start, end = _local("2024-07-01", IST), _local("2024-07-08", IST)  # a Monday
    week = other_range(start, end, rule_shift("previous_week", start, end, IST), IST)
    dow = other_range(start, end, rule_shift("previous_year_dow", start, end, IST), IST)
    year = other_range(start, end, rule_shift("previous_year", start, end, IST), IST)
    assert [t.date() for t in week] == [date(2024, 6, 24), date(2024, 7, 1)]
    assert [t.date() for t in dow] == [date(2023, 7, 3), date(2023, 7, 10)]
    assert dow[0].weekday() == start.weekday() == 0
    assert [t.date() for t in year] == [date(2023, 7, 1), date(2023, 7, 8)]  # a Saturday
    assert year_earlier(datetime(2024, 2, 29, 5, tzinfo=UTC)) == datetime(
        2023, 2, 28, 5, tzinfo=UTC
    )
    with pytest.raises(ValueError, match="unknown comparison"):
        rule_shift("last_month", start, end, IST)


def test_a_range_that_is_not_whole_days_moves_by_its_wall_clock_length() -> None:
    start, end = _local("2022-07-06", IST, 9), _local("2022-07-07", IST, 15)
    shift = rule_shift("previous_period", start, end, IST)
    assert shift == Shift(days=1, time=6 * HOUR) and not shift.whole(DAY) and shift.whole(HOUR)
    assert other_range(start, end, shift, IST) == (_local("2022-07-05", IST, 3), start)


def test_a_day_row_meets_the_utc_day_the_shift_earlier() -> None:
    first = datetime(2022, 6, 30, tzinfo=UTC)  # a +05:30 week overlaps eight UTC days
    days = [first + i * DAY for i in range(8)]
    met = counterparts(days, DAY, IST, Shift(days=7), first, first - 7 * DAY)
    assert met == [d - 7 * DAY for d in days]


def test_an_hour_row_meets_the_same_wall_clock_hour_across_a_change_of_summer_time() -> None:
    first = _local("2024-03-25", BERLIN).astimezone(UTC)
    hours = [first + i * HOUR for i in range(167)]  # the week of 31 March: 167 hours
    met = counterparts(hours, HOUR, BERLIN, Shift(days=7), first, first - 7 * DAY)
    assert all(m is not None for m in met)
    for mine, theirs in zip(hours, met, strict=True):
        assert theirs is not None
        here, there = mine.astimezone(BERLIN), theirs.astimezone(BERLIN)
        assert here.replace(tzinfo=None) - there.replace(tzinfo=None) == 7 * DAY
    # the week after: its Sunday 02:00 has no counterpart (that hour was skipped)
    after = _local("2024-04-01", BERLIN).astimezone(UTC)
    week = [after + i * HOUR for i in range(168)]
    met = counterparts(week, HOUR, BERLIN, Shift(days=7), after, first)
    skipped = [t.astimezone(BERLIN) for t, m in zip(week, met, strict=True) if m is None]
    assert [(t.day, t.hour) for t in skipped] == [(7, 2)]


def test_an_hour_shown_twice_meets_its_first_instant() -> None:
    # 27 October 2024: 02:00-03:00 happens twice in Berlin; a week later it happens once
    once = _local("2024-11-03", BERLIN, 2).astimezone(UTC)
    (met,) = counterparts([once], HOUR, BERLIN, Shift(days=7), once, once - 7 * DAY)
    assert met is not None and met.astimezone(BERLIN).utcoffset() == 2 * HOUR
    assert from_wall(datetime(2024, 10, 27, 2, 30), BERLIN, strict=True) is not None


def test_a_shift_of_no_whole_buckets_lines_up_the_first_buckets() -> None:
    first, other_first = datetime(2024, 3, 8, tzinfo=UTC), datetime(2024, 3, 6, tzinfo=UTC)
    shift = Shift(days=1, time=12 * HOUR)
    met = counterparts([first, first + DAY], DAY, UTC, shift, first, other_first)
    assert met == [other_first, other_first + DAY]


def test_a_range_given_by_its_dates_is_shifted_by_the_distance_of_its_start() -> None:
    this = _local("2024-12-01", BERLIN)
    assert pair_shift(this, _local("2023-12-01", BERLIN), BERLIN) == Shift(days=366)


def test_the_share_of_a_bucket_its_value_holds() -> None:
    t = datetime(2024, 7, 8, tzinfo=UTC)
    # v1: the whole bucket, so far; v2: the piece inside the range, so far
    assert covered_share(t, DAY, t + 18 * HOUR, t + DAY, None, pieces=False) == 1.0
    assert covered_share(t, DAY, t + 18 * HOUR, t + DAY, None, pieces=True) == 0.25
    assert covered_share(t, DAY, t, t + DAY, t + 6 * HOUR, pieces=False) == 0.25
    assert covered_share(t, DAY, t, t + DAY, t - HOUR, pieces=False) == 0.0


@LIMITS
@given(
    zone=st.sampled_from([UTC, IST, BERLIN, ZoneInfo("America/New_York")]),
    day=st.dates(min_value=date(2001, 1, 1), max_value=date(2040, 12, 31)),
    days=st.integers(min_value=1, max_value=60),
)
def test_the_previous_period_ends_where_the_range_starts_and_is_as_many_local_days(
    zone: tzinfo, day: date, days: int
) -> None:
    start = datetime.combine(day, time(0), zone)
    end = datetime.combine(day + timedelta(days=days), time(0), zone)
    shift = rule_shift("previous_period", start, end, zone)
    low, high = other_range(start, end, shift, zone)
    assert shift == Shift(days=days) and high == start
    assert (start.date() - low.date()).days == days and low.time() == start.time()


@LIMITS
@given(
    zone=st.sampled_from([UTC, IST, BERLIN]),
    bucket=st.sampled_from([DAY, HOUR]),
    days=st.integers(min_value=-400, max_value=800),
    hours=st.integers(min_value=0, max_value=23),
    start=st.integers(min_value=0, max_value=20 * 365 * 24),
)
def test_a_fixed_gap_is_where_every_counterpart_lies(
    zone: tzinfo, bucket: timedelta, days: int, hours: int, start: int
) -> None:
    first = datetime(2010, 1, 1, tzinfo=UTC) + start * HOUR
    first = first - (first - datetime(2010, 1, 1, tzinfo=UTC)) % bucket
    shift = Shift(days=days, time=hours * HOUR)
    other_first = first - timedelta(days=days) - shift.time
    other_first = other_first - (other_first - datetime(2010, 1, 1, tzinfo=UTC)) % bucket
    gap = fixed_gap(bucket, zone, shift, first, other_first)
    if zone is BERLIN and bucket == HOUR:
        assert gap is None  # summer time: the distance varies
        return
    assert gap is not None
    starts = [first + i * bucket for i in range(0, 60, 7)]
    assert counterparts(starts, bucket, zone, shift, first, other_first) == [
        t - gap for t in starts
    ]
