"""Relative dates: resolved against a given present (the service's, when a client is at hand)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from edgereports import QueryError, Report, presets
from edgereports.query.timegrid import resolve_relative

NOW = datetime(2022, 7, 8, 4, 30, 0, tzinfo=UTC)  # 10:00 at +05:30
IST = timezone(timedelta(hours=5, minutes=30))


@pytest.mark.parametrize(
    ("text", "zone", "expected"),
    [
        ("today", UTC, "2022-07-08T00:00:00+00:00"),
        ("TODAY", UTC, "2022-07-08T00:00:00+00:00"),
        ("yesterday", UTC, "2022-07-07T00:00:00+00:00"),
        ("tomorrow", UTC, "2022-07-09T00:00:00+00:00"),
        ("7d", UTC, "2022-07-01T00:00:00+00:00"),
        ("4w", UTC, "2022-06-10T00:00:00+00:00"),
        ("24h", UTC, "2022-07-07T04:00:00+00:00"),
        ("0h", UTC, "2022-07-08T04:00:00+00:00"),
        ("today", IST, "2022-07-08T00:00:00+05:30"),
        ("7d", IST, "2022-07-01T00:00:00+05:30"),
        ("1h", IST, "2022-07-08T09:00:00+05:30"),
    ],
)
def test_resolve_relative(text: str, zone: timezone, expected: str) -> None:
    resolved = resolve_relative(text, zone, NOW)
    assert resolved is not None
    assert resolved.isoformat() == expected


@pytest.mark.parametrize("value", ["NOW", "LAST DAY", "2022-07-01", "7x", "d7", 7, None])
def test_other_values_are_not_relative(value: object) -> None:
    assert resolve_relative(value, UTC, NOW) is None


def test_between_seven_days_is_the_seven_whole_days_before_today() -> None:
    report = Report(account_id="A").between("7d", "today").metric("time_usage_seconds", "COUNT")
    request = report.at(NOW).to_request()
    assert request["start_date_time"] == "2022-07-01T00:00:00+00:00"
    assert request["end_date_time"] == "2022-07-08T00:00:00+00:00"


def test_resolved_in_the_report_zone() -> None:
    report = Report(tz="+05:30").between("yesterday", "tomorrow").metric("sim", "COUNT").at(NOW)
    assert report.to_request()["start_date_time"] == "2022-07-07T00:00:00+05:30"
    assert report.to_request()["end_date_time"] == "2022-07-09T00:00:00+05:30"
    assert report.start == datetime(2022, 7, 7, tzinfo=IST)
    assert report.relative == ("yesterday", "tomorrow")


def test_a_zone_set_after_the_range_resolves_in_that_zone() -> None:
    report = Report().between("7d", "today").timezone("+05:30").at(NOW)
    assert report.start == datetime(2022, 7, 1, tzinfo=IST)


def test_built_on_the_local_clock_until_a_present_is_given() -> None:
    report = Report().between("1d", "today")
    local_today = datetime.now(UTC).date()
    assert report.end == datetime.combine(local_today, datetime.min.time(), tzinfo=UTC)
    assert report.at(NOW).end == datetime(2022, 7, 8, tzinfo=UTC)
    # a range written with dates has nothing to resolve
    fixed = Report().between("2022-07-01", "2022-07-02")
    assert fixed.relative is None and fixed.at(NOW) is fixed
    # setting the range again forgets the relative dates
    assert report.between("2022-07-01", "2022-07-02").relative is None


def test_last_relative_and_last_keyword() -> None:
    days = Report().last("7d").at(NOW)
    assert (days.start, days.end) == (
        datetime(2022, 7, 1, tzinfo=UTC),
        datetime(2022, 7, 8, tzinfo=UTC),
    )
    hours = Report().last("24h").at(NOW)
    assert hours.end == datetime(2022, 7, 8, 4, tzinfo=UTC)
    assert hours.end - hours.start == timedelta(hours=24)
    keyword = Report().last("DAY").metric("uplink_bandwidth", "AVG").to_request()
    assert (keyword["start_date_time"], keyword["end_date_time"]) == ("LAST DAY", "NOW")


def test_presets_and_from_request_take_relative_dates() -> None:
    report = presets.build(
        "byte_usage_subscriber", account_id="A", msisdn=["1"], start="30d", end="today"
    ).at(NOW)
    assert report.to_request()["start_date_time"] == "2022-06-08T00:00:00+00:00"
    again = Report.from_request(
        {
            "start_date_time": "2d",
            "end_date_time": "today",
            "metrics": [{"name": "sim", "aggregation_type": "COUNT"}],
        }
    ).at(NOW)
    assert again.to_request()["start_date_time"] == "2022-07-06T00:00:00+00:00"


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        ("7x", "today", "nor a relative date (today, yesterday, tomorrow, 7d, 4w, 24h)"),
        ("today", "7d", "must be before end_date_time"),
        ("7d", "NOW", "mix a date with a time keyword"),
    ],
)
def test_invalid_relative_ranges(start: str, end: str, message: str) -> None:
    with pytest.raises(QueryError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Report().between(start, end)
