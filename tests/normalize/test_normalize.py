"""to_frame on JSON answers: shapes, request use, quirks, empty answers and bad payloads."""

from __future__ import annotations

import copy
import json
import math
import warnings
from collections.abc import Callable
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
import pytest

from edgereports.errors import InputError, QueryError, SchemaError
from edgereports.normalize import detect_shape, read_csv, to_frame
from edgereports.normalize._arrowjson import read_timeseries
from edgereports.normalize.api import ARROW_MIN_BYTES
from edgereports.schema import schema_for, validate_frame

ACCOUNT = "62c40843c7a1909709112345"
UTC = pd.Timestamp


def account_filter(*extra: dict[str, Any]) -> list[dict[str, Any]]:
    filters = [{"dimension_name": "account_id", "operator": "EXACT", "expressions": [ACCOUNT]}]
    return [{"filters": [*filters, *extra]}]


def ts_request(metrics: list[dict[str, Any]], dims: list[str] | None = None) -> dict[str, Any]:
    req: dict[str, Any] = {
        "start_date_time": "2022-07-07T09:50:00+05:30",
        "end_date_time": "2022-07-08T09:50:00+05:30",
        "granularity": "HOUR",
    }
    if dims:
        req["dimensions"] = dims
    req["dimension_filter_clauses"] = account_filter()
    req["metrics"] = metrics
    return req


def pct(name: str, value: float, agg: str | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name}
    if agg:
        m["aggregation_type"] = agg
    m["metric_filter_clauses"] = [
        {"filters": [{"operator": "PERCENTILE", "comparison_value": value}]}
    ]
    return m


def point(stamp: str, name: str, value: Any, agg: str | None = "COUNT") -> dict[str, Any]:
    p = {"time_stamp": stamp, "name": name, "value": value}
    if agg is not None:
        p["aggregation_type"] = agg
    return p


def conforms(df: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(validate_frame(df, df.attrs["shape"]), df)


# --------------------------------------------------------------------------- time series
def test_arrays_follow_request_order_and_time_order() -> None:
    req = ts_request(
        [{"name": "uplink_bytes", "aggregation_type": "COUNT"}, pct("uplink_bandwidth", 95)]
    )
    payload = {
        "result": [
            [point("2022-07-07T11:30:00+05:30", "jitter", 3, "AVG")],
            [
                point("2022-07-07T12:30:00+05:30", "uplink_bandwidth", 9, None),
                point("2022-07-07T10:30:00+05:30", "uplink_bandwidth", 1, None),
            ],
            [point("2022-07-07T10:30:00+05:30", "uplink_bytes", 5)],
        ],
        "account_id": ACCOUNT,
    }
    df = to_frame(payload, req)
    conforms(df)
    assert df["metric"].tolist() == [
        "uplink_bytes",
        "uplink_bandwidth",
        "uplink_bandwidth",
        "jitter",
    ]
    assert df["percentile"].tolist()[:3] == [pytest.approx(math.nan, nan_ok=True), 95.0, 95.0]
    assert df["value"].tolist() == [5.0, 1.0, 9.0, 3.0]
    assert df["time_stamp"].tolist()[1:3] == [UTC("2022-07-07T05:00Z"), UTC("2022-07-07T07:00Z")]
    assert df["aggregation"].tolist() == ["COUNT", pd.NA, pd.NA, "AVG"]
    no_req = to_frame(payload)
    assert no_req["metric"].tolist() == [
        "jitter",
        "uplink_bandwidth",
        "uplink_bandwidth",
        "uplink_bytes",
    ]
    assert no_req["percentile"].isna().all()


def test_percentile_matches_a_metric_asked_with_aggregation_and_filter() -> None:
    req = ts_request([pct("downlink_bandwidth", 99.5, agg="AVG")])
    payload = {"result": [[point("2022-07-07T10:30:00+05:30", "downlink_bandwidth", 7, None)]]}
    assert to_frame(payload, req)["percentile"].tolist() == [99.5]


def test_two_percentiles_of_one_metric_are_ambiguous() -> None:
    req = ts_request([pct("uplink_bandwidth", 95), pct("uplink_bandwidth", 50)])
    payload = {
        "result": [
            [point("2022-07-07T10:30:00+05:30", "uplink_bandwidth", 7, None)],
            [point("2022-07-07T11:30:00+05:30", "uplink_bandwidth", 3, None)],
        ]
    }
    df = to_frame(payload, req)
    assert df["percentile"].isna().all()
    assert df["value"].tolist() == [7.0, 3.0]


def test_account_id_from_request_when_not_echoed() -> None:
    req = ts_request([{"name": "ue_connections", "aggregation_type": "COUNT"}], dims=["imsi"])
    payload = {"result": [[point("2022-07-07T10:30:00Z", "ue_connections", 1)]]}
    df = to_frame(payload, req)
    assert df["account_id"].tolist() == [ACCOUNT]
    assert df["imsi"].tolist() == [pd.NA]
    assert to_frame(payload)["account_id"].tolist() == [pd.NA]


def test_inner_array_with_mixed_metrics_and_extra_members() -> None:
    payload = {
        "result": [
            [
                point("2022-07-07T10:30:00Z", "uplink_bytes", 1),
                {**point("2022-07-07T10:30:00Z", "downlink_bytes", 2), "unit": "bytes"},
                point("2022-07-07T09:30:00Z", "uplink_bytes", 3, agg=None),
                {**point("2022-07-07T08:30:00Z", "uplink_bytes", 4), "aggregation_type": None},
            ]
        ]
    }
    df = to_frame(payload)
    assert list(zip(df["metric"], df["aggregation"].fillna("-"), df["value"], strict=True)) == [
        ("uplink_bytes", "COUNT", 1.0),
        ("downlink_bytes", "COUNT", 2.0),
        ("uplink_bytes", "-", 4.0),
        ("uplink_bytes", "-", 3.0),
    ]


@pytest.mark.parametrize(
    ("value", "number"),
    [
        ("YES", 1.0),
        ("no", 0.0),
        (True, 1.0),
        (False, 0.0),
        (None, math.nan),
        ("2.5", 2.5),
        (7, 7.0),
    ],
)
def test_time_series_values(value: Any, number: float) -> None:
    df = to_frame({"result": [[point("2022-07-07T10:30:00Z", "ue_online_status", value)]]})
    assert df["value"].tolist() == [pytest.approx(number, nan_ok=True)]


@pytest.mark.parametrize(
    ("stamp", "utc"),
    [
        ("2022-07-07T05:30:00+05:30", "2022-07-07T00:00:00Z"),
        ("2022-07-06T20:00:00-04:00", "2022-07-07T00:00:00Z"),
        ("2022-07-07T00:00:00Z", "2022-07-07T00:00:00Z"),
        ("2022-07-07T00:00:00.123456+00:00", "2022-07-07T00:00:00.123456Z"),
        ("2022-07-07T00:00:00.1234567+00:00", "2022-07-07T00:00:00.123456Z"),
        ("2022-07-07 05:30:00+0530", "2022-07-07T00:00:00Z"),
        ("2022-07-07T00:00:00", "2022-07-07T00:00:00Z"),
    ],
)
def test_timestamps_become_utc(stamp: str, utc: str) -> None:
    df = to_frame({"result": [[point(stamp, "ue_connections", 1)]]})
    assert df["time_stamp"].iloc[0] == UTC(utc)


def test_identifiers_are_text_whether_numbers_or_strings() -> None:
    base = {"result": [[point("2022-07-07T10:30:00Z", "uplink_bytes", 1)]]}
    as_int = to_frame({**base, "msisdn": 919876543210, "account_id": 12345})
    as_float = to_frame({**base, "msisdn": 919876543210.0, "account_id": "12345"})
    as_text = to_frame({**base, "msisdn": "919876543210", "account_id": 12345.0})
    for df in (as_int, as_float, as_text):
        assert df["msisdn"].tolist() == ["919876543210"]
        assert df["account_id"].tolist() == ["12345"]
    pd.testing.assert_frame_equal(as_int, as_float)


def test_extra_echoed_keys_follow_the_requested_dimensions() -> None:
    req = ts_request(
        [{"name": "uplink_bytes", "aggregation_type": "COUNT"}], dims=["imsi", "msisdn"]
    )
    payload = {
        "lr_id": "LR-1",
        "result": [[point("2022-07-07T10:30:00Z", "uplink_bytes", 1)]],
        "msisdn": 1,
        "account_id": ACCOUNT,
    }
    assert list(to_frame(payload, req).columns) == [
        "time_stamp",
        "account_id",
        "imsi",
        "msisdn",
        "lr_id",
        "metric",
        "aggregation",
        "percentile",
        "value",
    ]


@pytest.mark.parametrize(
    "payload",
    [{"result": []}, {"result": [[], []]}, {"result": [], "msisdn": 919876543210}, [], {}],
)
def test_empty_time_series(payload: Any) -> None:
    req = ts_request([{"name": "uplink_bytes", "aggregation_type": "COUNT"}], dims=["msisdn"])
    df = to_frame(payload, req)
    conforms(df)
    assert len(df) == 0
    assert df.attrs["shape"] == "timeseries"
    assert "msisdn" in df.columns


# --------------------------------------------------------------------------- arrow fast path
def big_payload(points: int = 10_000) -> dict[str, Any]:
    def series(name: str, agg: str, salt: int) -> list[dict[str, Any]]:
        return [
            point(
                f"{2000 + i // 600}-{1 + i // 24 % 12:02d}-{1 + i % 25:02d}"
                f"T{i % 24:02d}:30:00+05:30",
                name,
                i * 3 + salt if i % 2 else i + 0.25,
                agg,
            )
            for i in range(points)
        ]

    return {
        "result": [series("downlink_bytes", "COUNT", 1), series("uplink_bytes", "COUNT", 2)],
        "account_id": ACCOUNT,
        "msisdn": 919876543210,
        "customer_site_id": "1001",
    }


def test_arrow_path_equals_orjson_path() -> None:
    payload = big_payload()
    body = orjson.dumps(payload)
    assert len(body) >= ARROW_MIN_BYTES
    req = ts_request(
        [
            {"name": "uplink_bytes", "aggregation_type": "COUNT"},
            {"name": "downlink_bytes", "aggregation_type": "COUNT"},
        ],
        dims=["msisdn"],
    )
    fast = read_timeseries(body, None)
    assert fast is not None
    from_bytes = to_frame(body, req)
    from_dict = to_frame(payload, req)
    pd.testing.assert_frame_equal(from_bytes, from_dict)
    conforms(from_bytes)
    assert from_bytes["metric"].iloc[0] == "uplink_bytes"
    assert len(from_bytes) == 20_000


def outcome(payload: Any) -> pd.DataFrame | str:
    try:
        return to_frame(payload)
    except SchemaError as exc:
        return f"SchemaError: {exc}"


@pytest.mark.parametrize(
    ("mutate", "falls_back"),
    [
        (lambda p: p["result"][1][5].update(value="YES"), True),
        (lambda p: p["result"][0][7].update(value=None), True),
        (lambda p: p["result"][0][7].pop("value"), True),
        (lambda p: p.update(extra={"a": 1}), True),
        (lambda p: p.update(day="2022-07-07"), True),
        (lambda p: p.update(flag=True, ratio=2.5), False),
        (lambda p: p.update(iccid=18446744073709551615), True),
        (lambda p: p["result"][0][3].update(time_stamp="2022-07-07T00:00:00.1234567Z"), True),
        (lambda p: p["result"][0][3].update(time_stamp="2022-07-07T00:00:00"), False),
        (lambda p: p["result"][0][3].update(unit="B"), False),
    ],
)
def test_arrow_path_falls_back_or_agrees(mutate: Any, falls_back: bool) -> None:
    payload = big_payload()
    mutate(payload)
    body = orjson.dumps(payload)
    assert (read_timeseries(body, None) is None) == falls_back
    from_bytes, from_dict = outcome(body), outcome(payload)
    if isinstance(from_dict, str):
        assert from_bytes == from_dict
    else:
        if "iccid" in payload:
            assert from_dict["iccid"].iloc[0] == "18446744073709551615"
        assert isinstance(from_bytes, pd.DataFrame)
        pd.testing.assert_frame_equal(from_bytes, from_dict)


def test_arrow_path_error_is_located_precisely() -> None:
    payload = big_payload()
    payload["result"][1][450]["time_stamp"] = "2022-13-01T00:00:00Z"
    with pytest.raises(SchemaError) as info:
        to_frame(orjson.dumps(payload))
    assert info.value.where == "result[1][450].time_stamp"
    assert "2022-13-01T00:00:00Z" in str(info.value)


# --------------------------------------------------------------------------- current values
def current(**members: Any) -> dict[str, Any]:
    return {
        "start_time": "2022-07-08T04:15:00.000Z",
        "end_time": "2022-07-08T04:20:00.000Z",
        **members,
    }


def test_current_values_text_and_booleans() -> None:
    payload = [
        current(ue_online_status="NO", ue_ip="10.0.0.1"),
        current(ue_online_status=True, ue_ip="10.0.0.2"),
        current(ue_online_status="ONLINE", ue_ip="10.0.0.3"),
        current(ue_online_status=1, ue_ip="10.0.0.4"),
    ]
    df = to_frame(payload)
    conforms(df)
    assert df["value"].tolist()[:2] == [0.0, 1.0]
    assert math.isnan(df["value"].iloc[2])
    assert df["value"].iloc[3] == 1.0
    assert df["value_text"].tolist() == ["NO", "true", "ONLINE", pd.NA]
    assert df["ue_ip"].tolist() == ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]


def test_current_member_kinds_with_and_without_request() -> None:
    payload = current(cell_load=0.5, site_name="north", uplink_bandwidth=3, account_id=7)
    no_req = to_frame(payload)
    assert no_req["metric"].tolist() == ["cell_load", "uplink_bandwidth"]
    assert "site_name" in no_req.columns
    req = {
        "start_date_time": "NOW",
        "end_date_time": "NOW",
        "dimension_filter_clauses": account_filter(),
        "metrics": [{"name": "uplink_bandwidth", "aggregation_type": "AVG"}],
    }
    with_req = to_frame(payload, req)
    assert with_req["metric"].tolist() == ["uplink_bandwidth"]
    assert with_req["aggregation"].tolist() == ["AVG"]
    assert with_req["cell_load"].tolist() == ["0.5"]
    assert with_req["account_id"].tolist() == ["7"]


def test_current_without_metrics_is_empty_with_dimensions() -> None:
    req = {
        "start_date_time": "NOW",
        "end_date_time": "NOW",
        "dimensions": ["customer_site_id"],
        "metrics": [{"name": "ue_connections", "aggregation_type": "COUNT"}],
    }
    df = to_frame(current(customer_site_id=1001), req)
    conforms(df)
    assert len(df) == 0
    assert "customer_site_id" in df.columns


# --------------------------------------------------------------------------- SIM counts
def test_sim_counts_dates_counts_and_account() -> None:
    payload = [
        {"date": "09-07-2022", "physical": "12", "esim": 3.0},
        {"date": "2022-07-07", "physical": None, "esim": 1, "account_id": 99},
        {"date": "8-7-2022", "physical": 10, "esim": 2, "note": "ignored"},
    ]
    req = {
        "start_date_time": "2022-07-07T00:00:00Z",
        "end_date_time": "2022-07-10T00:00:00Z",
        "dimension_filter_clauses": account_filter(),
        "metrics": [{"name": "sim", "aggregation_type": "COUNT"}],
    }
    df = to_frame(payload, req)
    conforms(df)
    assert df["date"].tolist() == [pd.Timestamp(f"2022-07-0{d}") for d in (7, 8, 9)]
    assert df["physical"].tolist() == [pd.NA, 10, 12]
    assert df["esim"].tolist() == [1, 2, 3]
    assert df["account_id"].tolist() == ["99", ACCOUNT, ACCOUNT]
    assert detect_shape([]) == "sim_count"


# --------------------------------------------------------------------------- inputs, attrs
def test_payload_forms_and_attrs() -> None:
    payload = {"result": [[point("2022-07-07T10:30:00Z", "uplink_bytes", 1)]]}
    body = orjson.dumps(payload)
    req = ts_request([{"name": "uplink_bytes", "aggregation_type": "COUNT"}])
    expected = to_frame(payload, req)
    for form in (body, bytearray(body), memoryview(body), body.decode(), b"\xef\xbb\xbf \n" + body):
        pd.testing.assert_frame_equal(to_frame(form, req), expected)
    assert expected.attrs == {"shape": "timeseries", "source": "json", "request": req}
    original = copy.deepcopy(req)
    req["metrics"].append({"name": "x"})
    assert expected.attrs["request"] == original, "attrs hold a copy of the request"


def test_request_objects_are_read_through_to_request() -> None:
    class Report:
        def to_request(self) -> dict[str, Any]:
            return ts_request([pct("uplink_bandwidth", 90)])

    payload = {"result": [[point("2022-07-07T10:30:00Z", "uplink_bandwidth", 1, None)]]}
    df = to_frame(payload, Report())
    assert df["percentile"].tolist() == [90.0]
    assert df.attrs["request"] == Report().to_request()


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (5, "request must be a Report or a request dict, not int"),
        ({"metrics": "x"}, "metrics must be a list, got str"),
        ({"metrics": [{"name": 3}]}, r"metrics\[0\].name must be a non-empty string, got 3"),
        ({"dimensions": [1], "metrics": []}, r"dimensions\[0\] must be a non-empty string"),
        ({"dimensions": ["msisdn"]}, "request.metrics is missing"),
        (
            {"metrics": [pct("uplink_bandwidth", "high")]},  # type: ignore[arg-type]
            "comparison_value must be a number",
        ),
        # the request is validated as Report.from_request does
        (
            {"dimensions": ["msisdn", "msisdn"], "metrics": []},
            r"dimensions lists a name twice: \['msisdn', 'msisdn'\]",
        ),
        ({"dimensions": ["value"], "metrics": []}, r"dimensions\[0\] 'value' is the name of"),
        ({"metrics": [], "granularity": "day"}, "granularity must be a non-empty upper-case"),
        ({"metrics": [], "colour": "red"}, "request has unknown key 'colour'"),
    ],
)
def test_bad_requests(request_: Any, message: str) -> None:
    with pytest.raises(QueryError, match=message):
        to_frame({"result": []}, request_)
    with pytest.raises(QueryError, match=message):
        read_csv(b"", request_)


NOW_REQUEST = {
    "start_date_time": "NOW",
    "end_date_time": "NOW",
    "dimensions": ["msisdn", "msisdn"],
    "metrics": [{"name": "uplink_bytes", "aggregation_type": "COUNT"}],
}


@pytest.mark.parametrize(
    "payload",
    [
        b'{"result": []}',
        {
            "start_time": "2024-01-01T00:00:00Z",
            "end_time": "2024-01-01T00:05:00Z",
            "msisdn": "1",
            "uplink_bytes": 3,
        },
    ],
)
def test_duplicate_dimensions_are_a_query_error_whatever_the_answer(payload: Any) -> None:
    """was a bare ValueError, or pandas' "array length 1 does not match"."""
    with pytest.raises(QueryError, match="dimensions lists a name twice"):
        to_frame(payload, NOW_REQUEST)


def test_a_request_is_read_without_warnings() -> None:
    """The request was checked when built: reading it again warns of nothing."""
    req = {"metrics": [{"name": "custom_metric", "aggregation_type": "COUNT"}]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = to_frame({"result": []}, req)
    assert df.empty


# --------------------------------------------------------------------------- bad payloads
P = "2022-07-07T10:30:00Z"
BAD: list[tuple[Any, str, str]] = [
    ({"result": 5}, "result is not a list of lists", "result"),
    ({"result": [5]}, "result item is not a list of points", "result[0]"),
    ({"result": [[5]]}, "point is not an object", "result[0][0]"),
    ({"result": [[{"name": "a", "value": 1}]]}, "point has no time_stamp", "result[0][0]"),
    ({"result": [[{"time_stamp": P, "value": 1}]]}, "point has no name", "result[0][0]"),
    ({"result": [[{"time_stamp": P, "name": "a"}]]}, "point has no value", "result[0][0]"),
    (
        {"result": [[point(P, "a", 1), point(5, "a", 1)]]},  # type: ignore[arg-type]
        "time_stamp is not a text timestamp",
        "result[0][1].time_stamp",
    ),
    (
        {"result": [[], [point(P, "a", 1), point("yesterday", "a", 1)]]},
        "time_stamp is not an ISO 8601 time",
        "result[1][1].time_stamp",
    ),
    (
        {"result": [[point(None, "a", 1)]]},  # type: ignore[arg-type]
        "time_stamp is missing",
        "result[0][0].time_stamp",
    ),
    ({"result": [[point(P, 7, 1)]]}, "name is not text", "result[0][0].name"),  # type: ignore[arg-type]
    (
        {"result": [[{**point(P, "a", 1), "aggregation_type": 3}]]},
        "aggregation_type is not text",
        "result[0][0].aggregation_type",
    ),
    (
        {"result": [[point(P, "a", {"a": 1})]]},
        "value is a dict, not a number",
        "result[0][0].value",
    ),
    ({"result": [[point(P, "a", [1])]]}, "value is a list, not a number", "result[0][0].value"),
    ({"result": [[point(P, "a", "lots")]]}, "value is not a number", "result[0][0].value"),
    ({"result": [], "msisdn": {"a": 1}}, "an identifier must be a string or a number", "msisdn"),
    ({"result": [], "metric": "x"}, "echoed key clashes with a frame column", "metric"),
    ({}, r"object matches no known answer shape \(members: none\)", ""),  # no request
    ({"error": "bad"}, r"matches no known answer shape \(members: error\)", ""),
    ([1, 2], "list matches no known answer shape", "[0]"),
    ({"start_time": P}, "current value has no end_time", ""),
    (current(x=1, start_time="soon"), "start_time is not an ISO 8601 time", "start_time"),
    (current(uplink_bandwidth=[1]), "value is a list, not a number", "uplink_bandwidth"),
    ([current(x=1), 5], "current value is not an object", "[1]"),
    ([{"date": "2022/07/07"}], "date is not a dd-mm-yyyy date", "[0].date"),
    ([{"date": "31-02-2022"}], "date is not a calendar date", "[0].date"),
    ([{"date": 20220707}], "date is not text", "[0].date"),
    ([{"date": "07-07-2022", "physical": 1.5}], "count is not a whole number", "[0].physical"),
    ([{"date": "07-07-2022", "esim": True}], "count is a boolean", "[0].esim"),
    ([{"date": "07-07-2022"}, 5], "SIM count item is not an object", "[1]"),
    ([{"date": "07-07-2022"}, {"physical": 1}], "SIM count item has no date", "[1]"),
    (b"{not json", "payload is not valid JSON", "char 1"),
    (b'{"result": []} {"result": []}', "payload is not valid JSON", "char 15"),
    ("time_stamp;name;value\n", "CSV header matches no known layout", "header"),
    (42, "payload must be parsed JSON", ""),
]


@pytest.mark.parametrize(("payload", "message", "where"), BAD)
def test_bad_payloads_say_where_and_why(payload: Any, message: str, where: str) -> None:
    with pytest.raises(SchemaError, match=message) as info:
        to_frame(payload)
    assert info.value.where == where


def test_excerpt_is_short_and_redacted() -> None:
    payload = {"result": [[point(P, "a", "apikey=SECRET123 " + "x" * 500)]]}
    with pytest.raises(SchemaError) as info:
        to_frame(payload)
    message = str(info.value)
    assert "SECRET123" not in message
    assert "apikey=***" in message
    excerpt = message.split(": ", 1)[1]
    assert len(excerpt) <= 200


# ----------------------------------------------------------------- what an adversarial run found
DEEP = b"[" * 1000 + b"]" * 1000


@pytest.mark.parametrize(
    "payload",
    [DEEP, b'{"result": ' + DEEP + b"}", orjson.loads(b"[" * 900 + b"]" * 900)],
    ids=["list", "result", "parsed"],
)
def test_deep_nesting_is_a_schema_error(payload: Any) -> None:
    """Item 3: was a RecursionError while the error message was written."""
    with pytest.raises(SchemaError):
        to_frame(payload)


def test_lone_surrogate_is_a_schema_error() -> None:
    """Item 4: was a UnicodeEncodeError."""
    payload = json.loads('{"result":[[{"time_stamp":"\\ud800","name":"x","value":1}]]}')
    with pytest.raises(SchemaError, match=r"not valid UTF-8 text at result\[0\]\[0\].time_stamp"):
        to_frame(payload)


@pytest.mark.parametrize("column", ["value", "metric", "value_text", "aggregation"])
def test_csv_header_alone_with_a_frame_column_is_the_empty_frame(column: str) -> None:
    """Item 5: was a bare ValueError ("clash with fixed columns")."""
    df = read_csv(f"start_time,end_time,{column}\n")
    assert df.empty and df.attrs["shape"] == "current"
    assert list(df.columns) == list(schema_for("current").fixed)


@pytest.mark.parametrize("path", [None, 0], ids=["orjson", "pyarrow"])
@pytest.mark.parametrize("number", [b"9" * 400, b"-" + b"9" * 400, b"1e400"])
def test_numbers_beyond_float64_are_a_schema_error_on_both_paths(
    path: int | None, number: bytes
) -> None:
    """Item 8: the pyarrow path (bodies of 2 MiB or more) made them inf."""
    body = b'{"result":[[{"time_stamp":"2024-01-01T00:00:00Z","name":"x","value":%s}]]}' % number
    with pytest.raises(SchemaError, match="number is infinity"):
        to_frame(body, arrow_min_bytes=path)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "0"])
def test_arrow_min_bytes_is_checked(bad: Any) -> None:
    with pytest.raises(InputError, match="arrow_min_bytes must be None or a whole number"):
        to_frame(b"{}", arrow_min_bytes=bad)


@pytest.mark.parametrize(
    "payload",
    [
        {"start_time": P, "end_time": P, "uplink_bytes": 1, "\ud800": "x"},
        {"result": [], "\ud800": "x"},
    ],
)
def test_member_name_that_is_not_utf8_is_a_schema_error(payload: Any) -> None:
    """Found by the fuzz: a lone surrogate in a member name was a UnicodeEncodeError."""
    with pytest.raises(SchemaError, match="member name is not valid UTF-8"):
        to_frame(payload)


@pytest.mark.parametrize("token", [b"NaN", b"Infinity", b"-Infinity", b"Inf", b"-NaN"])
@pytest.mark.parametrize("where", ["point", "top", "value", "nested"])
def test_nan_and_infinity_tokens_fail_on_both_paths(token: bytes, where: str) -> None:
    """Found by the fuzz: pyarrow's parser took NaN/Infinity, orjson (rightly) refuses them
    (in an ignored member, an echoed key, a value, or deep in an ignored member)."""
    point = b'{"time_stamp":"2024-01-01T00:00:00Z","name":"x","aggregation_type":"COUNT","value":'
    extra = {"point": b', "x": ' + token, "nested": b', "x": {"y": [1, ' + token + b"]}"}
    body = {
        "point": b'{"result":[[' + point + b"1" + extra["point"] + b"}]]}",
        "nested": b'{"result":[[' + point + b"1" + extra["nested"] + b"}]]}",
        "top": b'{"result":[[' + point + b'1}]], "x": ' + token + b"}",
        "value": b'{"result":[[' + point + token + b"}]]}",
    }[where]
    for path in (None, 0):
        with pytest.raises(SchemaError, match="not valid JSON"):
            to_frame(body, arrow_min_bytes=path)


def test_a_column_of_one_value_per_block_repeats_each_value_its_block_s_rows() -> None:
    """``block_strings``: distinct values taken row by row (nulls and empty blocks kept), or
    one constant; a value that is not UTF-8 is a SchemaError."""
    from edgereports.normalize._util import block_strings

    got = block_strings(["a", None, "b", "a", "é"], [2, 1, 0, 3, 1])
    assert str(got.dtype) == "string"
    assert got.tolist() == ["a", "a", pd.NA, "a", "a", "a", "é"]
    assert block_strings(["x", "x"], [2, 3]).tolist() == ["x"] * 5
    with pytest.raises(SchemaError, match="text is not valid UTF-8"):
        block_strings(["a", "\ud800"], [1, 1])


def test_a_column_of_one_value_per_block_holds_each_value_s_text_once() -> None:
    """Up to ``SHARED_BLOCKS`` blocks, a block is a slice of one array per value (a block over
    ``CONSTANT_CHUNK`` rows several): no text is copied per row; more blocks stay slices when
    they are long, and are one array taken row by row when short, or a constant's few
    chunks."""
    from edgereports.normalize._util import CONSTANT_CHUNK, LONG_RUN, SHARED_BLOCKS, block_strings

    def chunks(column: pd.Series) -> list[pa.Array]:
        return list(pa.chunked_array(pa.array(column.array)).chunks)

    def text(chunk: pa.Array) -> int:
        return int(chunk.buffers()[2].address)

    got = block_strings(["a", "b", "a", "b"], [3, 2, 2, CONSTANT_CHUNK + 1])
    assert got.tolist() == ["a"] * 3 + ["b"] * 2 + ["a"] * 2 + ["b"] * (CONSTANT_CHUNK + 1)
    a1, b1, a2, b2, b3 = chunks(got)
    assert [len(c) for c in (a1, b1, a2, b2, b3)] == [3, 2, 2, CONSTANT_CHUNK, 1]
    assert text(a1) == text(a2) and text(b1) == text(b2) == text(b3) != text(a1)

    many = ["x", "y"] * SHARED_BLOCKS
    got = block_strings(many, [2] * len(many))
    assert got.tolist() == [v for v in many for _ in range(2)]
    assert len(chunks(got)) == 1
    long = block_strings(many, [LONG_RUN] * len(many))
    assert long.tolist() == [v for v in many for _ in range(LONG_RUN)]
    assert len(chunks(long)) == len(many)
    assert len({text(c) for c in chunks(long)}) == 2
    constant = block_strings(["z"] * (SHARED_BLOCKS + 1), [CONSTANT_CHUNK] * (SHARED_BLOCKS + 1))
    assert len(constant) == CONSTANT_CHUNK * (SHARED_BLOCKS + 1)
    assert len({text(c) for c in chunks(constant)}) == 1
    assert len(chunks(constant)) == SHARED_BLOCKS + 1


ONE_SERIES = {
    "result": [
        [
            {"time_stamp": "2024-01-01T00:00:00Z", "name": "uplink_bytes", "value": 1},
            {"time_stamp": "2024-01-01T01:00:00Z", "name": "uplink_bytes", "value": 2},
        ]
    ],
    "account_id": "62c40843c7a1909709112345",
}
ONE_SERIES_CSV = (
    "time_stamp,name,value,account_id\n"
    "2024-01-01T00:00:00Z,uplink_bytes,1,62c40843c7a1909709112345\n"
    "2024-01-01T01:00:00Z,uplink_bytes,2,62c40843c7a1909709112345\n"
)


@pytest.mark.parametrize(
    "read",
    [
        lambda: to_frame(json.dumps(ONE_SERIES).encode()),
        lambda: to_frame(json.dumps(ONE_SERIES)),
        lambda: to_frame(ONE_SERIES),
        lambda: read_csv(ONE_SERIES_CSV.encode()),
        lambda: read_csv(ONE_SERIES_CSV),
    ],
    ids=["json-bytes", "json-text", "parsed", "csv-bytes", "csv-text"],
)
def test_every_column_of_a_frame_can_be_written(read: Callable[[], pd.DataFrame]) -> None:
    """A series read from one block once left ``value`` a read-only view of the reader's
    memory: ``df.loc[0, "value"] = ...`` raised "assignment destination is read-only"."""
    df = read()
    new = {
        "time_stamp": pd.Timestamp("2024-02-01", tz="UTC"),
        "account_id": "x",
        "metric": "downlink_bytes",
        "aggregation": "MAX",
        "percentile": 90.0,
        "value": 5.0,
    }
    for column, value in new.items():
        df.loc[0, column] = value
    assert df.loc[0, list(new)].tolist() == list(new.values())
    assert df.loc[1, "value"] == 2.0
