"""The reporting endpoint of the sandbox over HTTP: every documented pattern, quirks, errors."""

from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta
from typing import Any

import pytest
import requests

from edgereports.sandbox import SandboxHandle

START = "2022-07-07T09:50:00+05:30"
END = "2022-07-08T09:50:00+05:30"


def account_filter(sb: SandboxHandle, *extra: dict[str, Any]) -> list[dict[str, Any]]:
    acct = {"dimension_name": "account_id", "operator": "EXACT", "expressions": [sb.account_id]}
    return [{"filters": [acct, *extra]}]


def exact(dim: str, *values: Any) -> dict[str, Any]:
    return {"dimension_name": dim, "operator": "EXACT", "expressions": list(values)}


def metric(name: str, agg: str | None = None, pct: float | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if agg:
        out["aggregation_type"] = agg
    if pct is not None:
        out["metric_filter_clauses"] = [
            {"filters": [{"operator": "PERCENTILE", "comparison_value": pct}]}
        ]
    return out


def post(sb: SandboxHandle, body: Any, accept: str | None = None) -> requests.Response:
    headers = {"Accept": accept} if accept else {}
    return requests.post(
        sb.report_endpoint, params={"apikey": sb.api_key}, json=body, headers=headers, timeout=30
    )


def patterns(sb: SandboxHandle) -> dict[str, dict[str, Any]]:
    """The eleven query patterns the service documents, for the sandbox's primary account."""
    sim = sb.network.sims_of(sb.account_id)[0]
    site = sb.network.sites[0].customer_site_id
    rng = {"start_date_time": START, "end_date_time": END}
    now = {"start_date_time": "NOW", "end_date_time": "NOW"}
    return {
        "time_usage_enterprise": {
            **rng,
            "granularity": "DAY",
            "dimension_filter_clauses": account_filter(sb),
            "metrics": [metric("time_usage_seconds", "COUNT")],
        },
        "time_usage_subscriber": {
            **rng,
            "granularity": "DAY",
            "dimensions": ["msisdn"],
            "dimension_filter_clauses": account_filter(sb, exact("msisdn", sim.msisdn)),
            "metrics": [metric("time_usage_seconds", "COUNT")],
        },
        "byte_usage_subscriber": {
            **rng,
            "granularity": "HOUR",
            "dimensions": ["msisdn"],
            "dimension_filter_clauses": account_filter(sb, exact("msisdn", sim.msisdn)),
            "metrics": [metric("uplink_bytes", "COUNT"), metric("downlink_bytes", "COUNT")],
        },
        "realtime_bandwidth": {
            **now,
            "dimension_filter_clauses": account_filter(sb),
            "metrics": [metric("uplink_bandwidth", "AVG"), metric("downlink_bandwidth", "AVG")],
        },
        "bandwidth_percentile": {
            **rng,
            "dimensions": ["customer_site_id"],
            "dimension_filter_clauses": account_filter(sb, exact("customer_site_id", site)),
            "metrics": [metric("uplink_bandwidth", pct=95), metric("downlink_bandwidth", pct=95)],
        },
        "ue_connections_avg_peak": {
            **rng,
            "granularity": "HOUR",
            "dimension_filter_clauses": account_filter(sb),
            "metrics": [metric("ue_connections", "MAX"), metric("ue_connections", "AVG")],
        },
        "active_sim_count": {
            **rng,
            "dimension_filter_clauses": account_filter(sb),
            "metrics": [metric("sim", "COUNT")],
        },
        "ue_connections_subscriber": {
            **rng,
            "granularity": "DAY",
            "dimensions": ["imsi"],
            "dimension_filter_clauses": account_filter(sb, exact("imsi", sim.imsi)),
            "metrics": [metric("ue_connections", "COUNT")],
        },
        "ue_connections_enterprise": {
            **rng,
            "granularity": "DAY",
            "dimension_filter_clauses": account_filter(sb),
            "metrics": [metric("ue_connections", "COUNT")],
        },
        "concurrent_online_ues": {
            **now,
            "dimensions": ["customer_site_id"],
            "dimension_filter_clauses": account_filter(sb, exact("customer_site_id", site)),
            "metrics": [metric("ue_connections", "COUNT")],
        },
        "device_status": {
            **now,
            "dimensions": ["enodeb_ip", "ue_ip", "lr_id"],
            "dimension_filter_clauses": account_filter(sb),
            "metrics": [metric("ue_online_status", "EXISTS")],
        },
    }


PATTERNS = [
    "time_usage_enterprise", "time_usage_subscriber", "byte_usage_subscriber",
    "realtime_bandwidth", "bandwidth_percentile", "ue_connections_avg_peak", "active_sim_count",
    "ue_connections_subscriber", "ue_connections_enterprise", "concurrent_online_ues",
    "device_status",
]  # fmt: skip


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.mark.parametrize("name", PATTERNS)
def test_every_query_pattern_answers_in_its_shape(sandbox: SandboxHandle, name: str) -> None:
    body = patterns(sandbox)[name]
    r = post(sandbox, body)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"].startswith("application/json")
    data = r.json()
    metrics = body["metrics"]
    if metrics[0]["name"] == "sim":
        assert [row["date"] for row in data] == ["07-07-2022", "08-07-2022"]
        assert all(
            isinstance(row["physical"], int) and isinstance(row["esim"], int) for row in data
        )
    elif body["start_date_time"] == "NOW":
        # the five minutes ending at the clock (10:00+05:30)
        assert data["start_time"] == "2022-07-08T04:25:00Z"
        assert data["end_time"] == "2022-07-08T04:30:00Z"
        assert data["account_id"] == sandbox.account_id
        for m in metrics:
            assert m["name"] in data
        for dim in body.get("dimensions", []):
            assert isinstance(data[dim], str)
    else:
        assert len(data["result"]) == len(metrics)
        assert data["account_id"] == sandbox.account_id
        for dim in body.get("dimensions", []):
            assert dim in data
        got = {(arr[0]["name"], arr[0].get("aggregation_type")) for arr in data["result"]}
        want = {(m["name"], m.get("aggregation_type")) for m in metrics}
        assert got == want
        for arr in data["result"]:
            for point in arr:
                assert isinstance(point["value"], int | float)
                assert point["time_stamp"].endswith("+05:30")


@pytest.mark.parametrize("name", PATTERNS)
def test_every_query_pattern_answers_csv_in_the_design_layout(
    sandbox: SandboxHandle, name: str
) -> None:
    body = patterns(sandbox)[name]
    as_json = post(sandbox, body).json()
    r = post(sandbox, body, accept="text/csv")
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(r.text)))
    if isinstance(as_json, list):
        assert rows[0] == ["date", "physical", "esim"]
        assert [[d["date"], str(d["physical"]), str(d["esim"])] for d in as_json] == rows[1:]
    elif "result" not in as_json:
        assert rows[0] == list(as_json)
        assert rows[1] == [str(v) for v in as_json.values()]
    else:
        echo = [k for k in as_json if k != "result"]
        assert rows[0] == ["time_stamp", "name", "aggregation_type", "value", *echo]
        points = [p for arr in as_json["result"] for p in arr]
        assert len(rows) - 1 == len(points)
        for row, p in zip(rows[1:], points, strict=True):
            assert row[0] == p["time_stamp"] and row[1] == p["name"]
            assert row[2] == p.get("aggregation_type", "")
            assert float(row[3]) == p["value"]
            assert row[4:] == [str(as_json[k]) for k in echo]


@pytest.mark.parametrize("accept", [None, "text/csv"])
def test_answers_carry_server_timing_with_generation_and_serialization(
    sandbox: SandboxHandle, accept: str | None
) -> None:
    r = post(sandbox, patterns(sandbox)["byte_usage_subscriber"], accept=accept)
    assert r.status_code == 200
    entries = [e.strip().split(";") for e in r.headers["Server-Timing"].split(",")]
    assert [e[0] for e in entries] == ["gen", "ser"]
    for _, dur in entries:
        assert dur.startswith("dur=")
        assert float(dur.removeprefix("dur=")) >= 0
    assert "Server-Timing" not in post(sandbox, {"metrics": []}).headers  # errors carry none


def test_buckets_are_utc_aligned_and_stamped_in_the_request_offset(sandbox: SandboxHandle) -> None:
    body = patterns(sandbox)["time_usage_enterprise"]
    stamps = [p["time_stamp"] for p in post(sandbox, body).json()["result"][0]]
    assert stamps == ["2022-07-07T05:30:00+05:30", "2022-07-08T05:30:00+05:30"]
    west = {
        **body,
        "start_date_time": "2022-07-07T12:00:00-04:00",
        "end_date_time": "2022-07-08T12:00:00-04:00",
    }
    stamps = [p["time_stamp"] for p in post(sandbox, west).json()["result"][0]]
    assert stamps == ["2022-07-06T20:00:00-04:00", "2022-07-07T20:00:00-04:00"]
    hourly = patterns(sandbox)["byte_usage_subscriber"]
    stamps = [p["time_stamp"] for p in post(sandbox, hourly).json()["result"][0]]
    assert all(s[14:] == "30:00+05:30" for s in stamps)
    # the first bucket overlaps the start: 09:30 local holds 09:50
    assert stamps[0] == "2022-07-07T09:30:00+05:30"
    assert len(stamps) == 25


def test_an_end_on_a_bucket_boundary_adds_a_point_stamped_at_the_end(
    sandbox: SandboxHandle,
) -> None:
    body = {
        **patterns(sandbox)["time_usage_enterprise"],
        "start_date_time": "2022-07-05T05:30:00+05:30",
        "end_date_time": "2022-07-07T05:30:00+05:30",
    }
    stamps = [p["time_stamp"] for p in post(sandbox, body).json()["result"][0]]
    assert stamps == [
        "2022-07-05T05:30:00+05:30",
        "2022-07-06T05:30:00+05:30",
        "2022-07-07T05:30:00+05:30",
    ]


def test_inner_arrays_are_not_in_request_order(sandbox: SandboxHandle) -> None:
    for name in ("byte_usage_subscriber", "ue_connections_avg_peak"):
        body = patterns(sandbox)[name]
        data = post(sandbox, body).json()
        sent = [(m["name"], m.get("aggregation_type")) for m in body["metrics"]]
        got = [(a[0]["name"], a[0].get("aggregation_type")) for a in data["result"]]
        assert sorted(got) == sorted(sent) and got != sent


def test_percentile_points_have_no_aggregation_and_are_ordered_by_value(
    sandbox: SandboxHandle,
) -> None:
    body = {
        **patterns(sandbox)["bandwidth_percentile"],
        "granularity": "DAY",
        "start_date_time": "2022-07-01T00:00:00Z",
        "end_date_time": "2022-07-08T00:00:00Z",
    }
    for arr in post(sandbox, body).json()["result"]:
        assert all("aggregation_type" not in p for p in arr)
        values = [p["value"] for p in arr]
        assert values == sorted(values)
        assert [p["time_stamp"] for p in arr] != sorted(p["time_stamp"] for p in arr)


@pytest.mark.parametrize("as_number", [True, False])
def test_ids_are_echoed_with_the_json_type_they_were_sent_in(
    sandbox: SandboxHandle, as_number: bool
) -> None:
    msisdn = sandbox.network.sims_of(sandbox.account_id)[5].msisdn
    sent: int | str = int(msisdn) if as_number else msisdn
    body = {
        **patterns(sandbox)["time_usage_subscriber"],
        "dimension_filter_clauses": account_filter(sandbox, exact("msisdn", sent)),
    }
    assert post(sandbox, body).json()["msisdn"] == sent


def test_byte_counts_are_sometimes_halves(sandbox: SandboxHandle) -> None:
    body = {
        "start_date_time": "2022-07-01T00:00:00Z",
        "end_date_time": "2022-07-08T00:00:00Z",
        "granularity": "HOUR",
        "dimension_filter_clauses": account_filter(sandbox),
        "metrics": [metric("uplink_bytes", "COUNT")],
    }
    values = [p["value"] for p in post(sandbox, body).json()["result"][0]]
    halves = [v for v in values if isinstance(v, float)]
    assert halves and all(v * 2 == int(v * 2) for v in halves)
    assert any(isinstance(v, int) for v in values)


def test_a_current_value_echoes_lr_id_although_not_asked(sandbox: SandboxHandle) -> None:
    body = {**patterns(sandbox)["device_status"], "dimensions": ["ue_ip"]}
    data = post(sandbox, body).json()
    assert list(data) == [
        "start_time",
        "end_time",
        "ue_online_status",
        "ue_ip",
        "lr_id",
        "account_id",
    ]
    device = next(d for d in sandbox.network.devices if d.ue_ip == data["ue_ip"])
    assert data["lr_id"] == device.lr_id
    assert data["ue_online_status"] in ("YES", "NO")


def test_online_status_is_yes_for_a_top_talker_and_numeric_in_a_series(
    sandbox: SandboxHandle,
) -> None:
    assert post(sandbox, patterns(sandbox)["device_status"]).json()["ue_online_status"] == "YES"
    body = {
        "start_date_time": "2022-07-07T00:00:00Z",
        "end_date_time": "2022-07-07T06:00:00Z",
        "granularity": "HOUR",
        "dimension_filter_clauses": account_filter(sandbox),
        "metrics": [metric("ue_online_status", "EXISTS")],
    }
    assert {p["value"] for p in post(sandbox, body).json()["result"][0]} <= {0, 1}


def test_grouping_without_a_filter_echoes_the_top_talker_but_counts_everyone(
    sandbox: SandboxHandle,
) -> None:
    base = patterns(sandbox)["time_usage_enterprise"]
    grouped = {**base, "dimensions": ["msisdn"]}
    data = post(sandbox, grouped).json()
    assert data["msisdn"] in {s.msisdn for s in sandbox.network.sims_of(sandbox.account_id)}
    assert data["result"] == post(sandbox, base).json()["result"]


def test_time_keywords(sandbox: SandboxHandle) -> None:
    body = {
        **patterns(sandbox)["ue_connections_enterprise"],
        "granularity": "HOUR",
        "start_date_time": "LAST HOUR",
        "end_date_time": "NOW",
    }
    stamps = [p["time_stamp"] for p in post(sandbox, body).json()["result"][0]]
    # the range is the hour ending at the clock (04:30Z); the 04:00 bucket holds the clock
    assert stamps == ["2022-07-08T03:00:00+00:00", "2022-07-08T04:00:00+00:00"]
    for keyword, span in (("LAST DAY", 1), ("LAST WEEK", 7), ("LAST MONTH", 30)):
        single = {**body, "start_date_time": keyword}
        del single["granularity"]
        points = post(sandbox, single).json()["result"][0]
        start = instant("2022-07-08T04:30:00+00:00") - timedelta(days=span)
        assert [instant(p["time_stamp"]) for p in points] == [start]
    sims = {
        **patterns(sandbox)["active_sim_count"],
        "start_date_time": "LAST WEEK",
        "end_date_time": "NOW",
    }
    assert [r["date"] for r in post(sandbox, sims).json()][-1] == "08-07-2022"
