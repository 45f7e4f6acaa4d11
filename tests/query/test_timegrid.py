"""The laws of the time grid: one bucket per instant, a range's buckets tile it, partial shares
add up, planned windows own every bucket once, v2 pieces cover the range's buckets."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from edgereports.query import timegrid as tg
from edgereports.reporting.plan import plan_windows

BUCKETS = st.sampled_from([tg.BUCKETS["HOUR"], tg.BUCKETS["DAY"]])
ZONES = st.sampled_from(
    [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-4))]
)
INSTANTS = st.datetimes(
    min_value=datetime(2020, 1, 1), max_value=datetime(2026, 12, 31), timezones=ZONES
)
LIMITS = settings(max_examples=150, deadline=None)


@LIMITS
@given(INSTANTS, BUCKETS)
def test_every_instant_lies_in_exactly_one_bucket(moment: datetime, bucket: timedelta) -> None:
    first = tg.floor(moment, bucket)
    assert first <= moment < first + bucket
    assert tg.is_aligned(first, bucket) and tg.floor(first, bucket) == first
    assert tg.ceil(moment, bucket) == (first if first == moment else first + bucket)


@LIMITS
@given(INSTANTS, st.timedeltas(timedelta(minutes=1), timedelta(days=40)), BUCKETS)
def test_a_range_buckets_tile_it_and_partial_shares_add_up(
    start: datetime, length: timedelta, bucket: timedelta
) -> None:
    end = start + length
    starts = tg.bucket_starts(start, end, bucket)
    assert starts[0] <= start < starts[0] + bucket and starts[-1] < end <= starts[-1] + bucket
    assert all(b - a == bucket for a, b in itertools.pairwise(starts))
    parts = tg.partial_buckets(start, end, bucket)
    assert {p.start for p in parts} <= set(starts) and all(0 < p.share < 1 for p in parts)
    covered = bucket * (len(starts) - len(parts)) + sum((bucket * p.share for p in parts),
                                                         timedelta())  # fmt: skip
    assert abs(covered - length) < timedelta(milliseconds=1)
    low, high = tg.whole_buckets(start, end, bucket)
    assert (high - low) // bucket == len(starts) - len(parts)
    assert tg.inclusive_last(start, end, bucket) == starts[-1]


@LIMITS
@given(
    INSTANTS,
    st.integers(1, 24 * 20),
    st.integers(1, 72),
    st.booleans(),
)
def test_planned_windows_own_every_bucket_once(
    start: datetime, hours: int, size: int, at_end: bool
) -> None:
    bucket = tg.BUCKETS["HOUR"]
    end = start + timedelta(hours=hours, minutes=7)
    windows = plan_windows(start, end, bucket=bucket, size=bucket * size)
    if at_end:  # v2: each piece stamped at its end, the range's end included
        stamps = [min(b + bucket, end) for b in tg.bucket_starts(start, end, bucket)]
    else:
        stamps = tg.bucket_starts(start, end, bucket)
    owners = [0] * len(stamps)
    for w in windows:
        first, last = w.index == 0, w.index == w.count - 1
        for i, s in enumerate(stamps):
            keep = tg.owned_mask(s, w.start, w.end, first=first, last=last, at_end=at_end)
            owners[i] += 1 if keep is None or keep else 0
    assert owners == [1] * len(stamps)


@LIMITS
@given(INSTANTS, st.timedeltas(timedelta(minutes=1), timedelta(days=10)), BUCKETS)
def test_v2_pieces_cover_the_range_buckets(
    start: datetime, length: timedelta, bucket: timedelta
) -> None:
    end = start + length
    starts = tg.bucket_starts(start, end, bucket)
    ends = [min(b + bucket, end) for b in starts]  # v2 cuts at boundaries, stamps at ends
    assert [tg.covered_bucket(e, bucket) for e in ends] == starts
    micros = [tg.epoch_micros(e) for e in ends]
    covered = [tg.row_bucket_micros(m, bucket, at_end=True) for m in micros]
    assert covered == [tg.epoch_micros(b) for b in starts]


@LIMITS
@given(INSTANTS, ZONES, st.integers(0, 400))
def test_relative_days_are_midnights_counted_back(now: datetime, zone: timezone, n: int) -> None:
    resolved = tg.resolve_relative(f"{n}d", zone, now)
    assert resolved is not None
    assert resolved.time() == datetime.min.time() and resolved.tzinfo == zone
    assert (now.astimezone(zone).date() - resolved.date()).days == n


def test_provisional_from_is_the_bucket_holding_now() -> None:
    now = datetime(2022, 7, 8, 4, 30, tzinfo=UTC)
    hour, day = tg.BUCKETS["HOUR"], tg.BUCKETS["DAY"]
    assert tg.provisional_from(now + hour, hour, now) == datetime(2022, 7, 8, 4, tzinfo=UTC)
    assert tg.provisional_from(datetime(2022, 7, 8, 4, tzinfo=UTC), hour, now) is None
    assert tg.provisional_from(datetime(2022, 7, 8, 0, 1, tzinfo=UTC), day, now) == datetime(
        2022, 7, 8, tzinfo=UTC
    )


def test_shown_range_includes_the_last_day_or_hour() -> None:
    ist = timezone(timedelta(hours=5, minutes=30))
    first, last, unit = tg.shown_range(
        datetime(2022, 7, 1, tzinfo=ist), datetime(2022, 7, 8, tzinfo=ist), ist
    )
    assert (first.day, last.day, unit) == (1, 7, "day")
    hour = tg.BUCKETS["HOUR"]
    first, last, unit = tg.shown_range(
        datetime(2022, 7, 7, 9, tzinfo=UTC), datetime(2022, 7, 8, 9, tzinfo=UTC), UTC, hour
    )
    assert (last.hour, unit) == (8, "hour")
    _, last, unit = tg.shown_range(
        datetime(2022, 7, 7, 9, 50, tzinfo=UTC), datetime(2022, 7, 8, 9, 50, tzinfo=UTC), UTC
    )
    assert (last.minute, unit) == (50, "time")


def test_bucket_length_and_frame_rule() -> None:
    assert tg.bucket_length("day") == timedelta(days=1)
    assert tg.bucket_length(None) is None and tg.bucket_length("WEEK") is None
    v2 = {"api_version": "v2", "request": {"start_date_time": "2022-07-01T00:00:00Z"}}
    assert tg.frame_buckets(v2) == (timedelta(hours=1), True)  # v2's default granularity
    assert tg.frame_buckets({"request": {"start_date_time": "NOW"}}) is None
    sims = {"shape": "sim_count", "request": {"start_date_time": "2022-07-01T00:00:00Z"}}
    assert tg.frame_buckets(sims) == (timedelta(days=1), False)
