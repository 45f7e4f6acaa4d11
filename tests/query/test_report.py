"""The Report builder: canonical requests, validation messages, round trips."""

from __future__ import annotations

import dataclasses
import json
import warnings
from datetime import date, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import edgereports as er
from edgereports.query.report import REQUEST_KEYS
from edgereports.query.vocabulary import AGGREGATIONS, DIMENSIONS, METRICS

ACCOUNT = "62c40843c7a1909709112345"
IST = timezone(timedelta(hours=5, minutes=30))

# The documented enterprise time usage request (docs/query.md).
WORKED_EXAMPLE = """
{"start_date_time": "2022-07-07T09:50:00+05:30", "end_date_time": "2022-07-08T09:50:00+05:30",
 "granularity": "DAY",
 "dimension_filter_clauses": [{"filters": [{"dimension_name": "account_id", "operator": "EXACT",
                                            "expressions": ["62c40843c7a1909709112345"]}]}],
 "metrics": [{"name": "time_usage_seconds", "aggregation_type": "COUNT"}]}
"""


def account_clause(*extra: dict[str, Any]) -> list[dict[str, Any]]:
    account = {"dimension_name": "account_id", "operator": "EXACT", "expressions": [ACCOUNT]}
    return [{"filters": [account, *extra]}]


def test_worked_example_of_design() -> None:
    report = (
        er.Report(account_id=ACCOUNT)
        .between("2022-07-07T09:50:00+05:30", "2022-07-08T09:50:00+05:30")
        .granularity("DAY")
        .metric("time_usage_seconds", "COUNT")
    )
    assert json.dumps(report.to_request()) == json.dumps(json.loads(WORKED_EXAMPLE))


VALID = [
    (
        "datetimes keep their offset",
        lambda: (
            er.Report(account_id=ACCOUNT)
            .between(
                datetime(2022, 7, 7, 9, 50, tzinfo=IST), datetime(2022, 7, 8, 9, 50, tzinfo=IST)
            )
            .metric("sim", "COUNT")
        ),
        {
            "start_date_time": "2022-07-07T09:50:00+05:30",
            "end_date_time": "2022-07-08T09:50:00+05:30",
            "dimension_filter_clauses": account_clause(),
            "metrics": [{"name": "sim", "aggregation_type": "COUNT"}],
        },
    ),
    (
        "dates are midnight in the report's zone",
        lambda: (
            er.Report(account_id=ACCOUNT, tz="-04:00")
            .between(date(2022, 7, 7), date(2022, 7, 8))
            .granularity("HOUR")
            .metric("ue_connections", "MAX")
            .metric("ue_connections", "AVG")
        ),
        {
            "start_date_time": "2022-07-07T00:00:00-04:00",
            "end_date_time": "2022-07-08T00:00:00-04:00",
            "granularity": "HOUR",
            "dimension_filter_clauses": account_clause(),
            "metrics": [
                {"name": "ue_connections", "aggregation_type": "MAX"},
                {"name": "ue_connections", "aggregation_type": "AVG"},
            ],
        },
    ),
    (
        "dates default to UTC",
        lambda: er.Report().between("2022-07-07", date(2022, 7, 8)).metric("sim", "COUNT"),
        {
            "start_date_time": "2022-07-07T00:00:00+00:00",
            "end_date_time": "2022-07-08T00:00:00+00:00",
            "metrics": [{"name": "sim", "aggregation_type": "COUNT"}],
        },
    ),
    (
        "NOW, dimensions, integer expression kept as a number",
        lambda: (
            er.Report(account_id=ACCOUNT)
            .now()
            .by("customer_site_id")
            .where(customer_site_id=12345)
            .metric("ue_connections", "COUNT")
        ),
        {
            "start_date_time": "NOW",
            "end_date_time": "NOW",
            "dimensions": ["customer_site_id"],
            "dimension_filter_clauses": account_clause(
                {"dimension_name": "customer_site_id", "operator": "EXACT", "expressions": [12345]}
            ),
            "metrics": [{"name": "ue_connections", "aggregation_type": "COUNT"}],
        },
    ),
    (
        "LAST DAY keyword, no account filter, two clauses",
        lambda: (
            er.Report()
            .last("day")
            .granularity("HOUR")
            .filter("imsi", ["404450000000001"])
            .filter("msisdn", "919876543210", clause=1)
            .metric("uplink_bytes", "COUNT")
        ),
        {
            "start_date_time": "LAST DAY",
            "end_date_time": "NOW",
            "granularity": "HOUR",
            "dimension_filter_clauses": [
                {
                    "filters": [
                        {
                            "dimension_name": "imsi",
                            "operator": "EXACT",
                            "expressions": ["404450000000001"],
                        }
                    ]
                },
                {
                    "filters": [
                        {
                            "dimension_name": "msisdn",
                            "operator": "EXACT",
                            "expressions": ["919876543210"],
                        }
                    ]
                },
            ],
            "metrics": [{"name": "uplink_bytes", "aggregation_type": "COUNT"}],
        },
    ),
    (
        "percentile metric filter, explicitly empty dimensions",
        lambda: (
            er.Report()
            .between("2022-07-07T00:00:00Z", "2022-07-08T00:00:00Z")
            .by()
            .metric("uplink_bandwidth", percentile=99.5)
        ),
        {
            "start_date_time": "2022-07-07T00:00:00Z",
            "end_date_time": "2022-07-08T00:00:00Z",
            "dimensions": [],
            "metrics": [
                {
                    "name": "uplink_bandwidth",
                    "metric_filter_clauses": [
                        {"filters": [{"operator": "PERCENTILE", "comparison_value": 99.5}]}
                    ],
                }
            ],
        },
    ),
    (
        "filtering a dimension again replaces its values in place",
        lambda: (
            er.Report(account_id=ACCOUNT)
            .now()
            .where(msisdn=["1", "2"], imsi="9")
            .where(msisdn="3")
            .metric("ue_online_status", "EXISTS")
        ),
        {
            "start_date_time": "NOW",
            "end_date_time": "NOW",
            "dimension_filter_clauses": account_clause(
                {"dimension_name": "msisdn", "operator": "EXACT", "expressions": ["3"]},
                {"dimension_name": "imsi", "operator": "EXACT", "expressions": ["9"]},
            ),
            "metrics": [{"name": "ue_online_status", "aggregation_type": "EXISTS"}],
        },
    ),
]


@pytest.mark.parametrize(("label", "build", "expected"), VALID, ids=[v[0] for v in VALID])
def test_valid_requests(label: str, build: Any, expected: dict[str, Any]) -> None:
    request = build().to_request()
    assert json.dumps(request) == json.dumps(expected)
    assert json.dumps(er.Report.from_request(request).to_request()) == json.dumps(request)


def base() -> er.Report:
    return er.Report(account_id=ACCOUNT).between("2022-07-07T00:00:00Z", "2022-07-08T00:00:00Z")


INVALID = [
    ("no metric", lambda: base().to_request(), "metrics is empty"),
    ("no range", lambda: er.Report().metric("sim", "COUNT").to_request(), "no time range"),
    (
        "start after end",
        lambda: er.Report().between("2022-07-08T00:00:00Z", "2022-07-07T00:00:00Z"),
        "start_date_time '2022-07-08T00:00:00Z' must be before end_date_time",
    ),
    (
        "start equals end",
        lambda: er.Report().between("2022-07-08T00:00:00Z", "2022-07-08T05:30:00+05:30"),
        "must be before end_date_time",
    ),
    (
        "naive datetime",
        lambda: er.Report().between(datetime(2022, 7, 7), datetime(2022, 7, 8, tzinfo=IST)),
        "start_date_time '2022-07-07T00:00:00' is a naive datetime",
    ),
    (
        "timestamp without offset",
        lambda: er.Report().between("2022-07-07T09:50:00", "NOW"),
        "start_date_time '2022-07-07T09:50:00' has no UTC offset",
    ),
    (
        "malformed timestamp",
        lambda: er.Report().between("2022-07-07T25:00:00Z", "2022-07-08T00:00:00Z"),
        "start_date_time '2022-07-07T25:00:00Z' is not an ISO-8601 timestamp",
    ),
    (
        "date on one side, keyword on the other",
        lambda: er.Report().between("2022-07-07T00:00:00Z", "NOW"),
        "mix a date with a time keyword",
    ),
    (
        "LAST keyword as end",
        lambda: er.Report().between("NOW", "LAST DAY"),
        "end_date_time 'LAST DAY' must be 'NOW'",
    ),
    (
        "granularity on NOW",
        lambda: er.Report().now().granularity("HOUR").metric("sim", "COUNT").to_request(),
        "granularity 'HOUR' cannot be used on a NOW query",
    ),
    ("empty expressions", lambda: base().where(msisdn=[]), "expressions is empty"),
    (
        "empty string expression",
        lambda: base().where(msisdn=[""]),
        r"filters\[1\].expressions\[0\] is an empty string",
    ),
    (
        "float expression",
        lambda: base().where(msisdn=[9.5]),
        r"expressions\[0\] must be a string or an integer, got 9.5",
    ),
    (
        "bool expression",
        lambda: base().where(msisdn=True),
        "must be a string, an integer or a list of them, got True",
    ),
    (
        "percentile not a number",
        lambda: base().metric("uplink_bandwidth", percentile="95"),  # type: ignore[arg-type]
        r"comparison_value must be a number, got '95'",
    ),
    (
        "percentile out of range",
        lambda: base().metric("uplink_bandwidth", percentile=150),
        "must be a percentile between 0 and 100, got 150",
    ),
    (
        "percentile NaN",
        lambda: base().metric("uplink_bandwidth", percentile=float("nan")),
        "must be a finite number",
    ),
    (
        "empty dimension name",
        lambda: base().filter("", ["x"]),
        r"dimension_name must be a non-empty string, got ''",
    ),
    (
        "dimension name not a string",
        lambda: base().filter(7, ["x"]),  # type: ignore[arg-type]
        "dimension_name must be a non-empty string, got 7",
    ),
    (
        "lower-case aggregation",
        lambda: base().metric("uplink_bytes", "avg"),
        "aggregation_type must be a non-empty upper-case token .* got 'avg'; did you mean 'AVG'",
    ),
    (
        "empty aggregation",
        lambda: base().metric("uplink_bytes", ""),
        "aggregation_type must be a non-empty upper-case token",
    ),
    (
        "metric with neither aggregation nor filter",
        lambda: base().metric("uplink_bytes"),
        r"metrics\[0\] \('uplink_bytes'\) needs an aggregation_type",
    ),
    (
        "repeated metric",
        lambda: base().metric("sim", "COUNT").metric("sim", "COUNT"),
        r"metrics\[1\] repeats",
    ),
    ("repeated dimension", lambda: base().by("msisdn", "msisdn"), "lists a name twice"),
    (
        "lower-case granularity",
        lambda: base().granularity("day"),
        "granularity must be a non-empty upper-case token .* did you mean 'DAY'",
    ),
    ("bad clause index", lambda: base().filter("msisdn", "1", clause=3), "clause 3 does not exist"),
    ("bad time zone", lambda: er.Report(tz="Mars/Olympus"), "timezone 'Mars/Olympus' is neither"),
    ("empty account id", lambda: er.Report(account_id=""), r"account_id\[0\] is an empty string"),
]


@pytest.mark.parametrize(("label", "build", "message"), INVALID, ids=[v[0] for v in INVALID])
def test_invalid_requests(label: str, build: Any, message: str) -> None:
    with pytest.raises(er.QueryError, match=message):
        build()


INVALID_DICTS = [
    ("not an object", [], "request must be an object, got list"),
    ("unknown key", {"granularty": "DAY", "metrics": []}, "unknown key 'granularty'; allowed"),
    ("no metrics key", {"start_date_time": "NOW", "end_date_time": "NOW"}, "metrics is missing"),
    (
        "metrics not a list",
        {"start_date_time": "NOW", "end_date_time": "NOW", "metrics": {}},
        "metrics must be a list, got dict",
    ),
    (
        "start not a string",
        {"start_date_time": 5, "end_date_time": "NOW", "metrics": []},
        "start_date_time must be an ISO-8601 timestamp string or a time keyword, got 5",
    ),
    (
        "filter without operator",
        {
            "start_date_time": "NOW",
            "end_date_time": "NOW",
            "dimension_filter_clauses": [
                {"filters": [{"dimension_name": "imsi", "expressions": ["1"]}]}
            ],
            "metrics": [{"name": "sim", "aggregation_type": "COUNT"}],
        },
        r"dimension_filter_clauses\[0\].filters\[0\].operator is missing",
    ),
    (
        "metric filter clause not an object",
        {
            "start_date_time": "NOW",
            "end_date_time": "NOW",
            "metrics": [{"name": "sim", "metric_filter_clauses": [5]}],
        },
        r"metrics\[0\].metric_filter_clauses\[0\] must be an object, got int",
    ),
]


@pytest.mark.parametrize(
    ("label", "d", "message"), INVALID_DICTS, ids=[v[0] for v in INVALID_DICTS]
)
def test_invalid_request_dicts(label: str, d: Any, message: str) -> None:
    with pytest.raises(er.QueryError, match=message):
        er.Report.from_request(d)


def test_query_error_is_a_value_error_and_names_the_field() -> None:
    with pytest.raises(ValueError) as info:
        base().metric("uplink_bytes", "avg")
    assert isinstance(info.value, er.QueryError)
    assert info.value.field == "metrics[0].aggregation_type"


def test_unknown_names_warn_with_a_hint_and_fail_when_strict() -> None:
    with pytest.warns(er.VocabularyWarning, match="did you mean 'uplink_bandwidth'"):
        report = base().metric("uplink_bandwith", "AVG")
    assert report.metrics[0].name == "uplink_bandwith"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        base().metric("packet_jitter", "P99")
    assert [str(w.message).split(" is ")[0] for w in caught] == [
        "metrics[0].name 'packet_jitter'",
        "metrics[0].aggregation_type 'P99'",
    ]
    assert {w.filename for w in caught} == {__file__}  # the caller's line, not ours
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        er.Report().between("LAST YEAR", "NOW").metric("sim", "COUNT").to_request()
    assert [str(w.message).split(";")[0] for w in caught] == [
        "start_date_time 'LAST YEAR' is not a known time keyword (known: NOW, LAST HOUR, "
        "LAST DAY, LAST WEEK, LAST MONTH)"
    ]
    assert caught[0].filename == __file__  # points at the caller's line
    strict = er.Report(strict=True).between("2022-07-07T00:00:00Z", "2022-07-08T00:00:00Z")
    with pytest.raises(er.QueryError, match="did you mean 'msisdn'"):
        strict.by("msisdnn")
    with pytest.raises(er.QueryError, match="'MINUTE' is not a known name"):
        strict.granularity("MINUTE")
    with pytest.raises(er.QueryError, match="'P99' is not a known name"):
        er.Report.from_request(
            {
                "start_date_time": "NOW",
                "end_date_time": "NOW",
                "metrics": [{"name": "sim", "aggregation_type": "P99"}],
            },
            strict=True,
        )


def test_known_names_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in METRICS:
            base().metric(name, "COUNT")
        base().by(*DIMENSIONS).granularity("HOUR")


def test_caller_lists_changed_afterwards_do_not_change_the_report() -> None:
    values = ["919876543210"]
    dims = ["msisdn"]
    report = base().by(dims).where(msisdn=values).metric("time_usage_seconds", "COUNT")
    before = report.to_request()
    values.append("919876543211")
    dims.append("imsi")
    assert report.to_request() == before
    request = report.to_request()
    read = er.Report.from_request(request)
    request["dimensions"].append("imsi")
    request["dimension_filter_clauses"][0]["filters"][1]["expressions"].append("x")
    assert read.to_request() == before


def test_reports_are_immutable_values() -> None:
    report = base().metric("sim", "COUNT")
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.grain = "DAY"  # type: ignore[misc]
    assert report.granularity("DAY") is not report
    assert report.grain is None
    assert hash(report) == hash(er.Report.from_request(report.to_request()))
    assert report == er.Report.from_request(report.to_request())


def test_time_range_and_keywords() -> None:
    report = er.Report().between("2022-07-07T09:50:00+05:30", "2022-07-08T00:00:00Z")
    start, end = report.time_range() or (None, None)
    assert start == datetime(2022, 7, 7, 9, 50, tzinfo=IST)
    assert end is not None and end.utcoffset() == timedelta(0)
    assert er.Report().now().time_range() is None
    assert er.Report().now().is_now
    assert er.Report().last("WEEK").uses_keywords
    keyword_both = {
        "start_date_time": "LAST DAY",
        "end_date_time": "LAST DAY",
        "metrics": [{"name": "sim", "aggregation_type": "COUNT"}],
    }
    assert er.Report.from_request(keyword_both).to_request() == keyword_both
    assert base().where(msisdn=["1", 2]).filter_values("msisdn") == ("1", 2)
    assert base().filter_values("account_id") == (ACCOUNT,)


# -- the round trip as a property -------------------------------------------------------------

timestamps = st.builds(
    lambda d, off, frac: d.replace(tzinfo=timezone(timedelta(minutes=off))).isoformat(
        timespec="microseconds" if frac else "seconds"
    ),
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 1, 1)),
    st.sampled_from([0, 330, -240, 345, 60, -600]),
    st.booleans(),
)
expressions = st.lists(
    st.one_of(st.text("0123456789abc", min_size=1, max_size=15), st.integers(0, 10**15)),
    min_size=1,
    max_size=4,
)
filters = st.builds(
    lambda name, values: {"dimension_name": name, "operator": "EXACT", "expressions": values},
    st.sampled_from(["account_id", "msisdn", "imsi", "customer_site_id"]),
    expressions,
)
metric_filters = st.builds(
    lambda value: {"operator": "PERCENTILE", "comparison_value": value},
    st.one_of(st.integers(0, 100), st.floats(0, 100)),
)
clauses_of = lambda items, **kw: st.lists(  # noqa: E731
    st.builds(lambda fs: {"filters": fs}, st.lists(items, **kw)), min_size=1, max_size=2
)


def metric_key(m: dict[str, Any]) -> str:
    """Metrics equal as values (95 == 95.0) are one metric entry."""
    clauses = [
        [float(f["comparison_value"]) for f in c["filters"]]
        for c in m.get("metric_filter_clauses", [])
    ]
    return repr((m["name"], m.get("aggregation_type"), clauses))


@st.composite
def metrics(draw: st.DrawFn) -> dict[str, Any]:
    m: dict[str, Any] = {"name": draw(st.sampled_from(METRICS))}
    with_agg = draw(st.booleans())
    if with_agg:
        m["aggregation_type"] = draw(st.sampled_from(AGGREGATIONS))
    if not with_agg or draw(st.booleans()):
        m["metric_filter_clauses"] = draw(clauses_of(metric_filters, min_size=1, max_size=2))
    return m


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    d: dict[str, Any] = {}
    kind = draw(st.sampled_from(["dates", "now", "last"]))
    if kind == "dates":
        a, b = sorted(
            draw(st.lists(timestamps, min_size=2, max_size=2, unique=True)),
            key=datetime.fromisoformat,
        )
        if datetime.fromisoformat(a) == datetime.fromisoformat(b):
            b = (datetime.fromisoformat(b) + timedelta(hours=1)).isoformat()
        d["start_date_time"], d["end_date_time"] = a, b
    elif kind == "now":
        d["start_date_time"] = d["end_date_time"] = "NOW"
    else:
        d["start_date_time"] = draw(st.sampled_from(["LAST HOUR", "LAST DAY", "LAST WEEK"]))
        d["end_date_time"] = "NOW"
    if kind != "now" and draw(st.booleans()):
        d["granularity"] = draw(st.sampled_from(["DAY", "HOUR"]))
    if draw(st.booleans()):
        d["dimensions"] = draw(st.lists(st.sampled_from(DIMENSIONS), unique=True, max_size=3))
    if draw(st.booleans()):
        d["dimension_filter_clauses"] = draw(st.just([]) | clauses_of(filters, max_size=3))
    d["metrics"] = draw(st.lists(metrics(), min_size=1, max_size=4, unique_by=metric_key))
    return d


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests())
@pytest.mark.slow
def test_round_trip_is_exact_as_text(d: dict[str, Any]) -> None:
    assert list(d) == [k for k in REQUEST_KEYS if k in d]
    text = json.dumps(d)
    assert json.dumps(er.Report.from_request(d).to_request()) == text
    assert json.dumps(d) == text  # from_request does not change its argument


@pytest.mark.parametrize("name", ["value", "metric", "time_stamp", "value_text", "esim"])
def test_a_dimension_named_like_a_frame_column_is_refused_when_built(name: str) -> None:
    """it passed with a warning, then an empty answer raised ValueError."""
    with pytest.raises(er.QueryError, match=rf"dimensions\[1\] '{name}' is the name of a frame"):
        er.Report().by("msisdn", name)
    request = {
        "dimensions": [name],
        "metrics": [{"name": "uplink_bytes", "aggregation_type": "MAX"}],
    }
    with pytest.raises(er.QueryError) as info:
        er.Report.from_request(request)
    assert info.value.field == "dimensions[0]"


def test_reserved_columns_are_the_frames_fixed_columns() -> None:
    from edgereports.query.vocabulary import RESERVED_COLUMNS
    from edgereports.schema import SCHEMAS

    fixed = {c for schema in SCHEMAS.values() for c in schema.fixed} - {"account_id"}
    assert set(RESERVED_COLUMNS) == fixed


def test_from_request_can_read_quietly() -> None:
    request = {"dimensions": ["cell"], "metrics": [{"name": "mos", "aggregation_type": "AVG"}]}
    with pytest.warns(er.VocabularyWarning):
        er.Report.from_request(request)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        er.Report.from_request(request, warn=False)
    with pytest.raises(er.QueryError):
        er.Report.from_request(request, strict=True, warn=False)
