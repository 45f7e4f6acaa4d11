"""Bad report requests get 4xx JSON bodies that say what is wrong, never a 500."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import requests

from edgereports.sandbox import SandboxHandle


def good(sb: SandboxHandle) -> dict[str, Any]:
    return {
        "start_date_time": "2022-07-07T09:50:00+05:30",
        "end_date_time": "2022-07-08T09:50:00+05:30",
        "granularity": "DAY",
        "dimension_filter_clauses": [{"filters": [
            {"dimension_name": "account_id", "operator": "EXACT",
             "expressions": [sb.account_id]}]}],
        "metrics": [{"name": "time_usage_seconds", "aggregation_type": "COUNT"}],
    }  # fmt: skip


def pct(name: str, value: Any = 95) -> dict[str, Any]:
    return {"name": name,
            "metric_filter_clauses": [{"filters": [{"operator": "PERCENTILE",
                                                    "comparison_value": value}]}]}  # fmt: skip


def filters(b: dict[str, Any]) -> list[dict[str, Any]]:
    return b["dimension_filter_clauses"][0]["filters"]  # type: ignore[no-any-return]


Edit = Callable[[dict[str, Any]], Any]

CASES: list[tuple[str, Edit, str, str | None]] = [
    ("missing start", lambda b: b.pop("start_date_time"),
     "start_date_time is required", "start_date_time"),
    ("start not a string", lambda b: b.update(start_date_time=20220707),
     "start_date_time must be a string, not an integer", "start_date_time"),
    ("naive timestamp", lambda b: b.update(start_date_time="2022-07-07T09:50:00"),
     "is not an ISO 8601 timestamp with a UTC offset", "start_date_time"),
    ("impossible date", lambda b: b.update(end_date_time="2022-02-30T00:00:00Z"),
     "is not a valid date and time", "end_date_time"),
    ("year out of range", lambda b: b.update(start_date_time="1999-01-01T00:00:00Z"),
     "must lie in the years 2000 to 2099", "start_date_time"),
    ("end before start", lambda b: b.update(end_date_time="2022-07-01T00:00:00Z"),
     "end_date_time must be after start_date_time", "end_date_time"),
    ("range too long", lambda b: b.update(start_date_time="2019-01-01T00:00:00Z"),
     "the range spans more than 1100 days", "end_date_time"),
    ("NOW on one side", lambda b: b.update(end_date_time="NOW"),
     "NOW must be used on both sides", "start_date_time"),
    ("keyword then a date", lambda b: b.update(start_date_time="LAST DAY"),
     "a range that starts LAST DAY must end NOW", "end_date_time"),
    ("granularity with NOW", lambda b: b.update(start_date_time="NOW", end_date_time="NOW"),
     "granularity is not used with NOW", "granularity"),
    ("unknown granularity", lambda b: b.update(granularity="WEEK"),
     "granularity must be one of HOUR, DAY, not 'WEEK'", "granularity"),
    ("granularity wrong type", lambda b: b.update(granularity=1),
     "granularity must be one of HOUR, DAY, not 1", "granularity"),
    ("unknown top field", lambda b: b.update(limit=5), "unknown field 'limit'", "limit"),
    ("dimensions not a list", lambda b: b.update(dimensions="msisdn"),
     "dimensions must be an array of strings, not a string", "dimensions"),
    ("unknown dimension", lambda b: b.update(dimensions=["country"]),
     "unknown dimension 'country'", "dimensions[0]"),
    ("no filters", lambda b: b.pop("dimension_filter_clauses"),
     "must hold an account_id EXACT filter", "dimension_filter_clauses"),
    ("no account filter", lambda b: filters(b).pop(0),
     "exactly one account_id EXACT filter with one value (found 0", "dimension_filter_clauses"),
    ("two accounts", lambda b: filters(b)[0]["expressions"].append("abc"),
     "(found 2 values)", "dimension_filter_clauses"),
    ("operator", lambda b: filters(b)[0].update(operator="LIKE"),
     "operator must be 'EXACT', not 'LIKE'", "dimension_filter_clauses[0].filters[0].operator"),
    ("boolean expression", lambda b: filters(b).append(
        {"dimension_name": "msisdn", "operator": "EXACT", "expressions": [True]}),
     "must be a string or an integer, not a boolean",
     "dimension_filter_clauses[0].filters[1].expressions[0]"),
    ("empty expressions", lambda b: filters(b).append(
        {"dimension_name": "msisdn", "operator": "EXACT", "expressions": []}),
     "expressions must be a non-empty array", "dimension_filter_clauses[0].filters[1].expressions"),
    ("unknown filter member", lambda b: filters(b)[0].update(negate=True),
     "unknown member 'negate'", "dimension_filter_clauses[0].filters[0].negate"),
    ("grouped dimension with several values", lambda b: (
        b.update(dimensions=["msisdn"]),
        filters(b).append({"dimension_name": "msisdn", "operator": "EXACT",
                           "expressions": ["919000000001", "919000000002"]})),
     "its filter lists 2 values", "dimensions"),
    ("no metrics", lambda b: b.update(metrics=[]),
     "metrics must be a non-empty array", "metrics"),
    ("unknown metric", lambda b: b["metrics"][0].update(name="packet_jitter"),
     "unknown metric 'packet_jitter'; known: time_usage_seconds, uplink_bytes, downlink_bytes, "
     "uplink_bandwidth, downlink_bandwidth, ue_connections, ue_online_status, sim, "
     "packet_latency, jitter, packet_loss", "metrics[0].name"),
    ("unknown aggregation", lambda b: b["metrics"][0].update(aggregation_type="SUM"),
     "aggregation_type must be one of COUNT, AVG, MAX, MIN, EXISTS, not 'SUM'",
     "metrics[0].aggregation_type"),
    ("no aggregation", lambda b: b["metrics"][0].pop("aggregation_type"),
     "aggregation_type is required (or a PERCENTILE metric filter)",
     "metrics[0].aggregation_type"),
    ("same metric twice", lambda b: b["metrics"].append(dict(b["metrics"][0])),
     "metrics[1] repeats metrics[0]", "metrics[1]"),
    ("same metric twice with PERCENTILE", lambda b: b.update(
        metrics=[pct("uplink_bandwidth", 50), pct("uplink_bandwidth", 95)]),
     "could not be told apart", "metrics[1]"),
    ("percentile out of range", lambda b: b.update(metrics=[pct("uplink_bandwidth", 150)]),
     "must be between 0 and 100", "metrics[0].metric_filter_clauses[0].filters[0]"
     ".comparison_value"),
    ("percentile not a number", lambda b: b.update(metrics=[pct("uplink_bandwidth", "95")]),
     "comparison_value must be a number", "metrics[0].metric_filter_clauses[0].filters[0]"
     ".comparison_value"),
    ("sim with granularity", lambda b: b["metrics"][0].update(name="sim"),
     "SIM counts are daily: omit granularity", "granularity"),
    ("sim with AVG", lambda b: b.update(metrics=[{"name": "sim", "aggregation_type": "AVG"}]),
     "metric 'sim' is counted with aggregation_type COUNT", "metrics[0].aggregation_type"),
    ("sim with another metric", lambda b: (b.pop("granularity"), b["metrics"].append(
        {"name": "sim", "aggregation_type": "COUNT"})),
     "metric 'sim' cannot be combined with other metrics", "metrics"),
    ("the same metric twice in NOW", lambda b: (
        b.update(start_date_time="NOW", end_date_time="NOW"), b.pop("granularity"),
        b.update(metrics=[{"name": "ue_connections", "aggregation_type": "MAX"},
                          {"name": "ue_connections", "aggregation_type": "AVG"}])),
     "a NOW answer has one member per metric name", "metrics[1]"),
]  # fmt: skip


@pytest.mark.parametrize(("edit", "message", "field"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])  # fmt: skip
def test_invalid_requests_get_400_naming_the_field(
    sandbox: SandboxHandle, edit: Edit, message: str, field: str | None
) -> None:
    body = copy.deepcopy(good(sandbox))
    edit(body)
    r = requests.post(sandbox.report_endpoint, params={"apikey": sandbox.api_key}, json=body,
                      timeout=30)  # fmt: skip
    assert r.status_code == 400, r.text
    err = r.json()
    assert err["status"] == 400 and err["error"] == "Bad Request"
    assert message in err["message"]
    assert err.get("field") == field


def test_an_unknown_account_is_404(sandbox: SandboxHandle) -> None:
    body = good(sandbox)
    filters(body)[0]["expressions"] = ["000000000000000000000000"]
    r = requests.post(sandbox.report_endpoint, params={"apikey": sandbox.api_key}, json=body,
                      timeout=30)  # fmt: skip
    assert r.status_code == 404
    assert r.json()["message"] == "unknown account_id '000000000000000000000000'"


@pytest.mark.parametrize(
    ("params", "headers", "data", "status", "message"),
    [
        ({}, {}, None, 401, "the apikey query parameter is required"),
        ({"apikey": "wrong"}, {}, None, 401, "invalid apikey"),
        (
            None,
            {"Accept": "text/html"},
            None,
            406,
            "Accept must allow application/json or text/csv",
        ),
        (None, {"Content-Type": "text/plain"}, b"{}", 415, "Content-Type must be application/json"),
        (
            None,
            {"Content-Type": "application/json"},
            b'{"start_date_time": ',
            400,
            "the request body is not valid JSON",
        ),
        (
            None,
            {"Content-Type": "application/json"},
            b"[1, 2]",
            400,
            "the request body must be a JSON object, not an array",
        ),
        (
            None,
            {"Content-Type": "application/json"},
            b" " * (1 << 20) + b"{}",
            413,
            "the request body is too large",
        ),
    ],
    ids=["no key", "wrong key", "accept", "content type", "malformed", "array", "too large"],
)
def test_transport_level_errors(
    sandbox: SandboxHandle,
    params: dict[str, str] | None,
    headers: dict[str, str],
    data: bytes | None,
    status: int,
    message: str,
) -> None:
    query = {"apikey": sandbox.api_key} if params is None else params
    kwargs: dict[str, Any] = {"data": data} if data is not None else {"json": good(sandbox)}
    r = requests.post(sandbox.report_endpoint, params=query, headers=headers, timeout=30,
                      **kwargs)  # fmt: skip
    assert r.status_code == status
    assert r.headers["Content-Type"].startswith("application/json")
    assert message in r.json()["message"]
    assert sandbox.api_key not in r.text


def test_a_request_too_large_to_answer_is_400(make_sandbox: Any) -> None:
    sb = make_sandbox(devices=8000, extra_accounts=0, clock="2023-01-01T00:00:00Z")
    body = good(sb)
    body.update(granularity="HOUR", start_date_time="2020-01-01T00:00:00Z",
                end_date_time="2022-12-31T00:00:00Z")  # fmt: skip
    r = requests.post(sb.report_endpoint, params={"apikey": sb.api_key}, json=body, timeout=30)
    assert r.status_code == 400
    assert "device-hours; the sandbox computes at most 200000000" in r.json()["message"]


def test_an_answer_with_too_many_points_is_400(make_sandbox: Any) -> None:
    sandbox = make_sandbox(clock="2023-01-01T00:00:00Z")  # the range lies before the clock
    body = good(sandbox)
    body.update(granularity="HOUR", start_date_time="2020-01-01T00:00:00Z",
                end_date_time="2022-12-31T00:00:00Z")  # fmt: skip
    names = ("uplink_bytes", "downlink_bytes", "time_usage_seconds", "ue_connections")
    body["metrics"] = [{"name": n, "aggregation_type": a} for n in names
                       for a in ("COUNT", "AVG", "MAX", "MIN", "EXISTS")]  # fmt: skip
    r = requests.post(sandbox.report_endpoint, params={"apikey": sandbox.api_key}, json=body,
                      timeout=30)  # fmt: skip
    assert r.status_code == 400
    assert r.json()["message"] == (
        "the answer would hold 525620 points; the sandbox answers at most 500000: use a "
        "coarser granularity or a shorter range"
    )
