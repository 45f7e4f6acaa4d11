"""Fault injection: per-request header, queue, seeded random rates, counts."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest
import requests

from edgereports.sandbox import FaultConfig, SandboxHandle
from edgereports.sandbox.web.faults import FaultSpec, parse_fault_header

SandboxFactory = Callable[..., SandboxHandle]

REPORT = {
    "start_date_time": "NOW", "end_date_time": "NOW",
    "metrics": [{"name": "ue_connections", "aggregation_type": "COUNT"}],
}  # fmt: skip


def report(sb: SandboxHandle, headers: dict[str, str] | None = None) -> requests.Response:
    body = {
        **REPORT,
        "dimension_filter_clauses": [
            {
                "filters": [
                    {
                        "dimension_name": "account_id",
                        "operator": "EXACT",
                        "expressions": [sb.account_id],
                    }
                ]
            }
        ],
    }
    return requests.post(sb.report_endpoint, params={"apikey": sb.api_key}, json=body,
                         headers=headers or {}, timeout=30)  # fmt: skip


@pytest.mark.parametrize(
    ("header", "spec"),
    [
        ("503", FaultSpec(status=503)),
        ("429", FaultSpec(status=429)),
        ("429;retry-after=0", FaultSpec(status=429, retry_after=0.0)),
        ("latency=0.25, 500", FaultSpec(latency=0.25, status=500)),
        ("drop", FaultSpec(drop=True)),
        ("none", FaultSpec(none=True)),
    ],
)
def test_fault_headers_parse(header: str, spec: FaultSpec) -> None:
    assert parse_fault_header(header) == spec


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("boom", "cannot parse fault 'boom'"),
        ("200", "cannot parse fault '200'"),
        ("503;retry-after=1", "retry-after only goes with 429, not 503"),
        ("503, drop", "a fault cannot be both a status and a drop"),
        ("latency=99", "latency 99.0 exceeds 30.0 seconds"),
    ],
)
def test_bad_fault_headers_are_400(sandbox: SandboxHandle, header: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_fault_header(header)
    r = report(sandbox, {"X-Sandbox-Fault": header})
    assert r.status_code == 400
    assert message in r.json()["message"]


def test_header_faults_are_injected_and_counted(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox()
    r = report(sb, {"X-Sandbox-Fault": "503"})
    assert r.status_code == 503 and r.json()["message"] == "injected fault: HTTP 503"
    r = report(sb, {"X-Sandbox-Fault": "429"})
    assert (r.status_code, r.headers["Retry-After"]) == (429, "1")
    r = report(sb, {"X-Sandbox-Fault": "429;retry-after=0"})
    assert r.headers["Retry-After"] == "0"
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        report(sb, {"X-Sandbox-Fault": "drop"})
    began = time.monotonic()
    assert report(sb, {"X-Sandbox-Fault": "latency=0.3"}).status_code == 200
    assert time.monotonic() - began >= 0.3
    assert sb.fault_counts() == {"503": 1, "429": 2, "drop": 1, "latency": 1}
    assert sb.request_count() == 5
    assert requests.get(f"{sb.base_url}/sandbox/faults", timeout=30).json()["counts"] == (
        sb.fault_counts()
    )


def test_faults_reach_content_and_campaigns(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox()
    for url in (f"{sb.content_url}/get-app-key", f"{sb.campaigns_url}/campaignChart"):
        r = requests.get(
            url,
            params={"partner_name": sb.partner_name},
            headers={"api_key": sb.api_key, "X-Sandbox-Fault": "502"},
            timeout=30,
        )
        assert r.status_code == 502
    assert sb.fault_counts() == {"502": 2}


def test_queued_faults_hit_the_next_requests_in_order(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox(faults=FaultConfig(schedule=("500",)))
    sb.enqueue_faults("429;retry-after=0")
    r = requests.post(f"{sb.base_url}/sandbox/faults", json={"enqueue": ["502"]}, timeout=30)
    assert r.json() == {"pending": 3}
    assert [report(sb).status_code for _ in range(4)] == [500, 429, 502, 200]
    bad = requests.post(f"{sb.base_url}/sandbox/faults", json={"enqueue": ["x"]}, timeout=30)
    assert bad.status_code == 400


def seeded_run(make_sandbox: SandboxFactory, seed: int) -> list[int]:
    sb = make_sandbox(faults={"error_rate": 0.3, "rate_limit_rate": 0.2, "retry_after": 0,
                              "seed": seed})  # fmt: skip
    statuses = [report(sb).status_code for _ in range(40)]
    counts = sb.fault_counts()
    assert sum(counts.values()) == sum(s != 200 for s in statuses)
    assert set(counts) <= {"500", "502", "503", "429"}
    return statuses


def test_random_faults_are_seeded(make_sandbox: SandboxFactory) -> None:
    first = seeded_run(make_sandbox, 11)
    assert first == seeded_run(make_sandbox, 11)
    assert first != seeded_run(make_sandbox, 12)
    assert 5 <= sum(s != 200 for s in first) <= 35


def test_random_drops_and_latency(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox(faults={"drop_rate": 1.0, "latency": 0.05, "areas": ("reporting",)})
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        report(sb)
    ok = requests.get(f"{sb.content_url}/get-app-key", params={"partner_name": sb.partner_name},
                      headers={"api_key": sb.api_key}, timeout=30)  # fmt: skip
    assert ok.status_code == 200
    assert report(sb, {"X-Sandbox-Fault": "none"}).status_code == 200
    assert sb.fault_counts() == {"drop": 1, "latency": 1}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"error_rate": 1.5}, "error_rate must be between 0 and 1"),
        ({"error_rate": 0.6, "drop_rate": 0.6}, "must not exceed 1"),
        ({"retry_after": -1}, "retry_after must be >= 0"),
        ({"error_statuses": (200,)}, "error_statuses must be 4xx or 5xx codes"),
        ({"areas": ("playback",)}, "unknown fault areas ['playback']"),
        ({"schedule": ("bogus",)}, "cannot parse fault 'bogus'"),
    ],
)
def test_fault_config_validation(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        FaultConfig(**options)
