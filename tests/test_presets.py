"""Each preset against its row the service documents's query-pattern table."""

from __future__ import annotations

import json
from typing import Any

import pytest

import edgereports as er
from edgereports import presets

A = "62c40843c7a1909709112345"
S, E = "2022-07-07T09:50:00+05:30", "2022-07-08T09:50:00+05:30"

# The documented query patterns: purpose -> range, granularity, dimensions, metrics
# (aggregation or PERCENTILE).
Row = tuple[str, dict[str, Any], str, str | None, list[str], list[tuple[str, Any]]]
DOCUMENTED_ROWS: list[Row] = [
    ("time_usage_enterprise", {}, "dates", "DAY", [], [("time_usage_seconds", "COUNT")]),
    (
        "time_usage_subscriber",
        {"msisdn": "919876543210"},
        "dates",
        "DAY",
        ["msisdn"],
        [("time_usage_seconds", "COUNT")],
    ),
    (
        "byte_usage_subscriber",
        {"msisdn": "919876543210"},
        "dates",
        "HOUR",
        ["msisdn"],
        [("uplink_bytes", "COUNT"), ("downlink_bytes", "COUNT")],
    ),
    (
        "realtime_bandwidth",
        {},
        "now",
        None,
        [],
        [("uplink_bandwidth", "AVG"), ("downlink_bandwidth", "AVG")],
    ),
    (
        "bandwidth_percentile",
        {"customer_site_id": "site-1", "percentile": 90},
        "dates",
        None,
        ["customer_site_id"],
        [("uplink_bandwidth", ("PERCENTILE", 90)), ("downlink_bandwidth", ("PERCENTILE", 90))],
    ),
    (
        "ue_connections_avg_peak",
        {},
        "dates",
        "HOUR",
        [],
        [("ue_connections", "MAX"), ("ue_connections", "AVG")],
    ),
    ("active_sim_count", {}, "dates", None, [], [("sim", "COUNT")]),
    (
        "ue_connections_subscriber",
        {"imsi": "404450000000001"},
        "dates",
        "DAY",
        ["imsi"],
        [("ue_connections", "COUNT")],
    ),
    ("ue_connections_enterprise", {}, "dates", "DAY", [], [("ue_connections", "COUNT")]),
    (
        "concurrent_online_ues",
        {"customer_site_id": "MUM-1002"},
        "now",
        None,
        ["customer_site_id"],
        [("ue_connections", "COUNT")],
    ),
    # the documented dimensions, and the device's IMSI: each row names its device (top talkers)
    (
        "device_status",
        {"imsi": "404450000000001"},
        "now",
        None,
        ["enodeb_ip", "ue_ip", "lr_id", "imsi"],
        [("ue_online_status", "EXISTS")],
    ),
]


def test_catalogue_lists_the_eleven_patterns_in_spec_order() -> None:
    assert presets.names("v1") == [row[0] for row in DOCUMENTED_ROWS]
    for info in presets.CATALOGUE[: len(DOCUMENTED_ROWS)]:
        assert info.purpose and "\n" not in info.purpose
        assert info.params[0].name == "account_id" and info.params[0].required


@pytest.mark.parametrize("row", DOCUMENTED_ROWS, ids=[r[0] for r in DOCUMENTED_ROWS])
def test_preset_matches_spec_row(row: Any) -> None:
    name, params, rng, granularity, dims, metrics = row
    if rng == "dates":
        params = {**params, "start": S, "end": E}
    d = presets.build(name, account_id=A, **params).to_request()
    if rng == "now":
        assert (d["start_date_time"], d["end_date_time"]) == ("NOW", "NOW")
    else:
        assert (d["start_date_time"], d["end_date_time"]) == (S, E)
    assert d.get("granularity") == granularity
    assert d.get("dimensions", []) == dims
    first = d["dimension_filter_clauses"][0]["filters"]
    assert first[0] == {"dimension_name": "account_id", "operator": "EXACT", "expressions": [A]}
    for dim in dims:
        if dim in params:  # the pattern's own filter narrows the result
            assert {
                "dimension_name": dim,
                "operator": "EXACT",
                "expressions": [params[dim]],
            } in first
    got = []
    for m in d["metrics"]:
        if "metric_filter_clauses" in m:
            f = m["metric_filter_clauses"][0]["filters"][0]
            got.append((m["name"], (f["operator"], f["comparison_value"])))
            assert "aggregation_type" not in m
        else:
            got.append((m["name"], m["aggregation_type"]))
    assert got == metrics
    assert json.dumps(er.Report.from_request(d).to_request()) == json.dumps(d)


def test_subscriber_presets_take_lists_for_fan_out() -> None:
    report = presets.time_usage_subscriber(account_id=A, msisdn=["1", 2], start=S, end=E)
    assert report.filter_values("msisdn") == ("1", 2)


def test_bandwidth_percentile_defaults_to_95() -> None:
    report = presets.bandwidth_percentile(account_id=A, customer_site_id="s", start=S, end=E)
    assert [m.percentile for m in report.metrics] == [95, 95]


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        (
            "time_usage_enterprize",
            {},
            "unknown preset 'time_usage_enterprize'; did you mean 'time_usage_enterprise'",
        ),
        ("time_usage_subscriber", {"start": S, "end": E}, "needs msisdn"),
        ("realtime_bandwidth", {"start": S}, "give both start and end, or neither"),
        ("realtime_bandwidth", {"percentile": 9}, "takes no parameter 'percentile'; it takes:"),
        ("device_status", {"granularity": "DAY"}, "granularity='DAY' needs start and end"),
        ("time_usage_enterprise", {"start": E, "end": S}, "must be before end_date_time"),
    ],
)
def test_preset_errors(name: str, params: dict[str, Any], message: str) -> None:
    with pytest.raises(er.QueryError, match=message):
        presets.build(name, account_id=A, **params)


def test_presets_take_a_granularity_and_the_now_presets_a_range() -> None:
    daily = presets.byte_usage_subscriber(
        account_id=A, msisdn=["1"], start=S, end=E, granularity="DAY"
    )
    assert daily.to_request()["granularity"] == "DAY"
    sites = presets.concurrent_online_ues(
        account_id=A, customer_site_id=["s1", "s2"], start=S, end=E, granularity="HOUR"
    ).to_request()
    assert (sites["start_date_time"], sites["end_date_time"], sites["granularity"]) == (
        S,
        E,
        "HOUR",
    )
    assert presets.concurrent_online_ues(account_id=A).to_request()["start_date_time"] == "NOW"
    assert presets.get("concurrent_online_ues").is_now  # NOW unless given a range
    defaults = {p.name: p.default for p in presets.get("byte_usage_subscriber").params}
    assert defaults["granularity"] == "HOUR" and defaults["start"] is None
