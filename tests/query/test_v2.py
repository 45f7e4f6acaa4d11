"""v2 reports and the reporting service's request: names, rules, round trips, steps."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import edgereports as er
from edgereports import presets
from edgereports.query.service_report import parse_step

V2 = {"api_version": "v2"}


def test_a_v2_report_knows_the_v2_names_without_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = (
            er.Report(account_id="A", **V2)
            .between("2024-08-13T19:19:19-04:00", "2024-08-13T20:19:19-04:00")
            .granularity("HOUR")
            .by("enb_ip", "ue_ip")
            .where(device="PHI-1", seid="7")
            .metric("ue_session_downlink_packet", "COUNT")
            .metric("customer_vlan_ran_ingress_bytes", "MAX")
        )
        request = report.to_request()
    assert "api_version" not in json.dumps(request)  # never sent
    assert er.Report.from_request(request, **V2) == report


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: er.Report(**V2).by("enodeb_ip"), "'enodeb_ip' is a v1 name; in v2 it is 'enb_ip'"),
        (lambda: er.Report().by("enb_ip"), "'enb_ip' is a v2 name; in v1 it is 'enodeb_ip'"),
        (
            lambda: er.Report(**V2).metric("uplink_bandwidth", "AVG"),
            "in v2 it is 'uplink_bandwidth_usage'",
        ),
        (
            lambda: er.Report().metric("ue_session_uplink_bytes", "COUNT"),
            "in v1 it is 'uplink_bytes'",
        ),
        (lambda: er.Report(**V2).where(msisdn="9"), "'msisdn' is a v1 name with no v2 counterpart"),
        (lambda: er.Report(**V2).metric("ue_online_status", "COUNT"), "allowed: EXISTS"),
        (lambda: er.Report(**V2).metric("ue_connections", "MIN"), "allowed: COUNT, MAX, AVG"),
        (
            lambda: er.Report(**V2).metric("ue_session_uplink_bytes", "EXISTS"),
            "allowed: COUNT, MAX, MIN, AVG",
        ),
        (lambda: er.Report(**V2).metric("ue_connections", percentile=95), "no metric filters"),
        (lambda: er.Report(api_version="v3"), "api_version must be one of 'v1', 'v2'"),
    ],
)
def test_bad_v2_input_names_the_field_and_the_counterpart(build: Any, message: str) -> None:
    with pytest.raises(er.QueryError, match=message.replace("(", r"\(")):
        build()


def test_only_a_v2_report_stamps_each_piece_at_its_end() -> None:
    """The one home of the stamping rule that windows, the range rule and the export follow."""
    v1 = er.Report(account_id="A").between("2024-06-01", "2024-06-02").granularity("HOUR")
    v2 = er.Report(account_id="A", **V2).between("2024-06-01", "2024-06-02").granularity("HOUR")
    assert (v1.stamps_at_end, v2.stamps_at_end) == (False, True)


def test_from_request_reads_a_v2_request_with_v2_rules() -> None:
    d = {
        "start_date_time": "LAST HOUR",
        "end_date_time": "LAST HOUR",
        "dimension_filter_clauses": [
            {"filters": [{"dimension_name": "customer_name", "operator": "EXACT",
                          "expressions": ["Acme"]}]}
        ],
        "metrics": [{"name": "customer_vlan_breakout_egress_bytes", "aggregation_type": "COUNT"}],
    }  # fmt: skip
    assert json.dumps(er.Report.from_request(d, **V2).to_request()) == json.dumps(d)
    with pytest.raises(er.QueryError, match="v2 name"):
        er.Report.from_request(d)


def test_every_v2_preset_is_marked_and_builds_a_v2_report() -> None:
    v2 = [p for p in presets.CATALOGUE if p.api_version == "v2"]
    assert len(v2) == 10 and presets.names("v2") == [p.name for p in v2]
    for info in v2:
        params = {p.name: "X" for p in info.params if p.required}
        params.update(start="2024-08-13", end="2024-08-14")
        report = info.function(**params)
        assert report.api_version == "v2"
        report.to_request()


SERVICE_SAMPLE = {
    "start_date_time": "LAST HOUR",
    "end_date_time": "NOW",
    "step": "5m",
    "dimension_filters": [{"dimension_name": "device", "operator": "EXACT",
                           "expressions": ["PHI-1"]}],
    "metrics": {"name": "ap_count", "aggregation_type": "COUNT"},
}  # fmt: skip


@pytest.mark.parametrize(
    "d",
    [
        SERVICE_SAMPLE,
        {**SERVICE_SAMPLE, "dimension_filters": []},
        {k: v for k, v in SERVICE_SAMPLE.items() if k != "dimension_filters"},
        {**SERVICE_SAMPLE, "start_date_time": "2024-08-13T20:58:24+00:00",
         "end_date_time": "2024-08-14T04:00:00+05:30", "step": "1h30m"},
        {**SERVICE_SAMPLE, "start_date_time": "LAST MINUTE", "step": "10s"},
    ],
)  # fmt: skip
def test_a_service_report_round_trips_exactly(d: dict[str, Any]) -> None:
    assert json.dumps(er.ServiceReport.from_request(d).to_request()) == json.dumps(d)


@given(st.lists(st.tuples(st.integers(1, 99), st.sampled_from("smhdwy")), min_size=1, max_size=4))
def test_steps_parse_as_the_sum_of_their_pieces(pieces: list[tuple[int, str]]) -> None:
    seconds = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    text = "".join(f"{n}{u}" for n, u in pieces)
    assert parse_step(text).total_seconds() == sum(n * seconds[u] for n, u in pieces)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"step": "5 minutes"}, "step '5 minutes' is not a duration"),
        ({"step": "0h"}, "is zero"),
        ({"step": "2h"}, "step '2h' .* is longer than the range"),
        ({"start_date_time": "LAST YEAR"}, "not a known time keyword"),
        ({"end_date_time": "2024-08-13T20:00:00Z"}, "a range is two timestamps"),
        ({"metrics": [{"name": "ap_count", "aggregation_type": "COUNT"}]}, "metrics must be"),
        ({"dimension_filters": {"device": "x"}}, "dimension_filters must be a list"),
    ],
)
def test_bad_service_requests_are_query_errors(change: dict[str, Any], message: str) -> None:
    with pytest.raises(er.QueryError, match=message):
        er.ServiceReport.from_request({**SERVICE_SAMPLE, **change})


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: er.ServiceReport().last("MONTH").step("99999999999y"), "step '99999999999y'"),
        (lambda: er.ServiceReport().last("DAY").step("9" * 40 + "s"), "longer than any range"),
        (lambda: er.ServiceReport().metric("ap_count", "SUM"), "known: COUNT, MAX, MIN, AVG"),
        (lambda: er.ServiceReport(strict=False).metric("ue_count", "P95"), "'P95'"),
    ],
)
def test_service_report_refuses_what_the_service_cannot_answer(
    build: Callable[[], object], message: str
) -> None:
    with pytest.raises(er.QueryError, match=re.escape(message)):
        build()
