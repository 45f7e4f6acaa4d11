"""The sandbox's OpenAPI document: valid, complete, and true to the server (schemathesis)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openapi_spec_validator import validate
from schemathesis import GenerationMode
from schemathesis.checks import (  # type: ignore[attr-defined]
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from edgereports.sandbox import SandboxHandle, serve

OPERATIONS = {
    ("post", "/api/v1/stream-tech/content/add"),
    ("get", "/api/v1/stream-tech/content/get-all"),
    ("get", "/api/v1/stream-tech/content/get-url/{content_id}"),
    ("get", "/api/v1/stream-tech/get-app-key"),
    ("get", "/api/v1/stream-tech/signed-url"),
    ("get", "/api/v1/stream-tech/get-whitelist-domain"),
    ("post", "/api/v1/stream-tech/add-whitelist-domain"),
    ("delete", "/api/v1/stream-tech/delete-whitelist-domain"),
    ("post", "/rmn-api/api/v1/rmn/agencies/campaignsOps"),
    ("get", "/rmn-api/api/v1/rmn/agencies/campaignsOps"),
    ("get", "/rmn-api/api/v1/rmn/agencies/campaigns/status/{campaign_name}"),
    ("get", "/rmn-api/api/v1/rmn/agencies/campaignChart"),
    ("post", "/connectivity/v1/report"),
    ("post", "/connectivity/v2/report"),
    ("post", "/reporting/v2/reporting-service/{coreId}"),
}
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]  # fmt: skip


@pytest.fixture(scope="module")
def fuzzed() -> Iterator[SandboxHandle]:
    """A private sandbox for fuzzing (it onboards junk)."""
    with serve(seed=2, clock="2022-07-08T10:00:00+05:30", sync_delay=0) as sb:
        yield sb


def document(sb: SandboxHandle) -> dict[str, Any]:
    r = requests.get(f"{sb.base_url}/openapi.json", timeout=30)
    assert r.status_code == 200
    return r.json()  # type: ignore[no-any-return]


def test_the_document_is_valid_openapi_with_all_13_endpoints_and_v2(fuzzed: SandboxHandle) -> None:
    doc = document(fuzzed)
    validate(doc)
    ops = {(m, p) for p, item in doc["paths"].items() for m in item}
    assert ops == OPERATIONS
    metric = doc["components"]["schemas"]["ReportRequest"]["properties"]["metrics"]["items"]
    assert {"packet_latency", "jitter", "packet_loss"} <= set(metric["properties"]["name"]["enum"])
    assert doc["servers"] == [{"url": fuzzed.base_url}]


@pytest.fixture(scope="module")
def schema(fuzzed: SandboxHandle) -> Any:
    return schemathesis.openapi.from_dict(document(fuzzed))


def fuzz(sb: SandboxHandle, schema: Any, mode: GenerationMode, data: st.DataObject) -> None:
    strategy = schema.as_strategy(
        generation_mode=mode,
        headers={"api_key": sb.api_key, "Authorization": f"Bearer {sb.service_token}"},
        query={"partner_name": sb.partner_name, "apikey": sb.api_key, "Authorization": sb.api_key},
    )
    case = data.draw(strategy)
    body = case.body
    if (
        case.operation.path == "/connectivity/v1/report"
        and isinstance(body, dict)
        and isinstance(body.get("dimension_filter_clauses"), list)
        and data.draw(st.booleans())
    ):
        # reach the engine too: pin the account, keep everything else fuzzed
        account = {"dimension_name": "account_id", "operator": "EXACT",
                   "expressions": [sb.account_id]}  # fmt: skip
        rest = [f for c in body["dimension_filter_clauses"] if isinstance(c, dict)
                for f in (c.get("filters") if isinstance(c.get("filters"), list) else [])
                if isinstance(f, dict)
                and f.get("dimension_name") != "account_id"]  # fmt: skip
        case.body = {**body, "dimension_filter_clauses": [{"filters": [account, *rest]}]}
    response = case.call(base_url=sb.base_url, timeout=30)
    case.validate_response(response, checks=CHECKS)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_schemathesis_positive_cases_conform(
    fuzzed: SandboxHandle, schema: Any, data: st.DataObject
) -> None:
    fuzz(fuzzed, schema, GenerationMode.POSITIVE, data)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_schemathesis_negative_cases_conform(
    fuzzed: SandboxHandle, schema: Any, data: st.DataObject
) -> None:
    fuzz(fuzzed, schema, GenerationMode.NEGATIVE, data)
