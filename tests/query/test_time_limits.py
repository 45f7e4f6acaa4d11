"""A request's times lie in the years 1970 to 8999: outside them a range, or the other period
of a comparison, is a QueryError naming the field, raised before any request (the pull plans
windows, buckets and periods around a range with Python's dates, which end in the year 9999)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

import pytest

import edgereports as er
from edgereports import QueryError, Report, ServiceReport

# a client of a closed port: a request would be a TransportError, not the QueryError expected
DEAD = "http://127.0.0.1:9"


def _report() -> Report:
    return Report(account_id="A").granularity("DAY").metric("time_usage_seconds", "COUNT")


@pytest.mark.parametrize(
    ("start", "end", "field"),
    [
        ("9999-12-30", "9999-12-31", "start_date_time"),
        ("2022-07-01", "9999-12-31", "end_date_time"),
        ("2022-07-01T00:00:00+05:30", "9000-01-01T00:00:00+05:30", "end_date_time"),
        (datetime(9999, 12, 30, tzinfo=UTC), datetime(9999, 12, 31, tzinfo=UTC), "start_date_time"),
        (date(1969, 12, 31), date(2022, 7, 1), "start_date_time"),
        ("0001-01-01", "2022-07-01", "start_date_time"),
    ],
)
def test_a_time_outside_the_years_is_a_query_error_naming_its_field(
    start: Any, end: Any, field: str
) -> None:
    with pytest.raises(QueryError, match="must lie in the years 1970 to 8999") as caught:
        _report().between(start, end).to_request()
    assert caught.value.field == field


def test_the_first_and_last_years_are_in() -> None:
    request = _report().between("1970-01-01", "8999-12-31").to_request()
    assert request["start_date_time"].startswith("1970-01-01")
    assert request["end_date_time"].startswith("8999-12-31")


def test_a_service_report_has_the_same_years() -> None:
    with pytest.raises(QueryError, match="1970 to 8999") as caught:
        ServiceReport().between("9999-12-30T00:00:00+00:00", "9999-12-31T00:00:00+00:00")
    assert caught.value.field == "start_date_time"


PULLS: dict[str, tuple[Callable[[er.ReportingClient], object], str, str]] = {
    "a range in the year 9999": (
        lambda c: c.fetch(_report().between("9999-12-30", "9999-12-31")),
        "start_date_time",
        "must lie in the years 1970 to 8999",
    ),
    "er.fetch ending in the year 9999": (
        lambda c: er.fetch(
            "time_usage_enterprise", client=c, account_id="A", start="2022-07-01", end="9999-12-31"
        ),
        "end_date_time",
        "must lie in the years 1970 to 8999",
    ),
    "the previous year of 1970": (
        lambda c: c.fetch(_report().between("1970-01-02", "1970-01-05"), compare="previous_year"),
        "compare",
        "compare='previous_year' of this range reaches outside the years 1970 to 8999",
    ),
    "the previous period of 1970": (
        lambda c: c.fetch(_report().between("1970-01-02", "1970-01-05"), compare="previous_period"),
        "compare",
        "compare='previous_period' of this range reaches outside the years 1970 to 8999",
    ),
    "the previous period of a range of seven thousand years": (
        lambda c: er.ReportingClient("k", DEAD, max_range=None).fetch(
            _report().between("1970-01-02", "8999-12-01"), compare="previous_period"
        ),
        "compare",
        "reaches outside the years 1970 to 8999",
    ),
    "a compared range in the year 9999": (
        lambda c: c.fetch(
            _report().between("2022-07-01", "2022-07-03"), compare=("9999-12-01", "9999-12-03")
        ),
        "compare",
        "must lie in the years 1970 to 8999",
    ),
}


@pytest.mark.parametrize("case", PULLS, ids=list(PULLS))
def test_a_pull_out_of_the_years_is_refused_before_any_request(case: str) -> None:
    pull, field, said = PULLS[case]
    client = er.ReportingClient("k", DEAD, progress=False)
    with client, pytest.raises(QueryError, match=said) as caught:
        pull(client)
    assert caught.value.field == field
