"""The live service's v2 reporting: the v2 report and the reporting service.

- ``POST /connectivity/v2/report?Authorization=<key>``: the v2 report (``engine/v2.py``),
  JSON or CSV like v1; 401 for a missing or wrong ``Authorization`` parameter.
- ``POST /reporting/v2/reporting-service/{coreId}`` with ``Authorization: Bearer <token>``:
  the reporting service (``engine/reporting_service.py``), JSON only; 401 for a missing or wrong
  token, 404 for another core id.

Both are counted as the ``reporting`` area (faults, request counts) and log their bodies like
v1 (``SandboxHandle.report_requests()``).
"""

from __future__ import annotations

import time

import orjson
from flask import Flask, Response, request

from ..engine.reporting_service import answer_service, parse_service
from ..engine.v2 import answer_v2, parse_v2
from ..problems import ApiProblem
from .reporting import answer_report, read_json_body, timed_response
from .state import SandboxState, same_secret

__all__ = ["REPORT_V2_PATH", "SERVICE_PATH", "register_reporting_v2"]

REPORT_V2_PATH = "/connectivity/v2/report"
SERVICE_PATH = "/reporting/v2/reporting-service/<core_id>"


def register_reporting_v2(app: Flask, state: SandboxState) -> None:
    """Register the v2 report and the reporting service on ``app``.

    Args:
        app: the Flask app.
        state: the sandbox state (its key, service token and core id).
    """

    @app.post(REPORT_V2_PATH)
    def report_v2() -> Response:
        return answer_report(
            state,
            "Authorization",
            "invalid Authorization key",
            lambda body: answer_v2(parse_v2(body), state.network, state.data_now()),
        )

    @app.post(SERVICE_PATH)
    def reporting_service(core_id: str) -> Response:
        started = time.perf_counter()
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiProblem(401, "the Authorization: Bearer <token> header is required")
        if not same_secret(token.strip(), state.service_token):
            raise ApiProblem(401, "invalid bearer token")
        if core_id != state.core_id:
            raise ApiProblem(404, f"unknown mobile core {core_id!r}", field="coreId")
        body = read_json_body()
        state.log_report(body)
        ans = answer_service(parse_service(body), state.network, state.data_now(), core_id)
        answered = time.perf_counter()
        return timed_response(orjson.dumps(ans), "application/json", started, answered)
