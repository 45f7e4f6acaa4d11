"""The sandbox's Flask application: routes of all three areas, auth, faults and JSON errors.

Request flow for the API areas (reporting ``/connectivity/v1``, content ``/api/v1/stream-tech``,
campaigns ``/rmn-api/api/v1/rmn``): count the request, apply the rate-limit mode (``throttle.py``)
and faults (``faults.py``), check credentials (header ``api_key`` then query ``partner_name`` for
content and campaigns: 401 without the right key, 400 without ``partner_name``, 403 for another
partner; query ``apikey`` for reporting, query ``Authorization`` for the v2 report, header
``Authorization: Bearer`` for the reporting service), then the route. Every error is a JSON body
(``problems.py``); an unexpected exception is a 500 JSON body with no traceback.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

from flask import Flask, Response, g, jsonify, request
from werkzeug.exceptions import HTTPException
from werkzeug.http import http_date

from ..problems import ApiProblem
from .admin import register_admin
from .campaigns import register_campaigns
from .content import register_content
from .faults import AREAS
from .openapi import build_openapi
from .reporting import register_reporting
from .reporting_v2 import register_reporting_v2
from .state import SandboxState, same_secret
from .throttle import retry_after_header

__all__ = ["DROP_FLAG", "RAW_HEADERS", "area_of", "create_app"]

RAW_HEADERS = "edgereports.sandbox.raw_headers"
DROP_FLAG = "edgereports.sandbox.drop"
_LOG = logging.getLogger("edgereports.sandbox")


def area_of(path: str) -> str | None:
    """Return the area of a request path: reporting, content, campaigns, playback or None."""
    if path.startswith(("/connectivity/v1/", "/connectivity/v2/", "/reporting/v2/")):
        return "reporting"
    if path.startswith("/api/v1/stream-tech/"):
        return "content"
    if path.startswith("/rmn-api/api/v1/rmn/"):
        return "campaigns"
    if path.startswith("/edge/"):
        return "playback"
    return None


def _header(name: str) -> str | None:
    """Return a request header whose name has an underscore, as sent (``wsgi_server.py``)."""
    for key, value in request.environ.get(RAW_HEADERS, ()):
        if key.lower() == name:
            return str(value)
    env_key = "HTTP_" + name.upper()
    if RAW_HEADERS not in request.environ and env_key in request.environ:
        return str(request.environ[env_key])  # test clients keep underscores in the environ
    return None


def _rate_key() -> str:
    """The credential a request presents (the rate-limit mode counts per key), else its
    client's address."""
    for value in (
        request.args.get("apikey"),
        request.args.get("Authorization"),
        request.headers.get("Authorization"),
        _header("api_key"),
    ):
        if value:
            return value
    return str(request.remote_addr or "")


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return _problem_response(ApiProblem(status, message, headers=headers))


def _problem_response(exc: ApiProblem) -> Response:
    resp = jsonify(exc.body())
    resp.status_code = exc.status
    resp.headers.update(exc.headers)
    return resp


def create_app(state: SandboxState) -> Flask:
    """Create the Flask app of one sandbox.

    Args:
        state: the sandbox's state (network, clock, faults, credentials, stores).

    Returns:
        The app.
    """
    app = Flask("edgereports.sandbox")
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.config["MAX_CONTENT_LENGTH"] = state.limits.upload_body

    @app.before_request
    def _before() -> Response | None:
        area = area_of(request.path)
        if area is None:
            return None
        state.count(area)
        if area in ("reporting", "content"):
            request.max_content_length = state.limits.json_body
        if area in AREAS:
            wait = state.throttle.admit(_rate_key())
            if wait is not None:
                return _error(
                    429,
                    f"rate limit: more than {state.throttle.per_second} requests per second "
                    "for this key",
                    {"Retry-After": retry_after_header(wait), "X-Sandbox-Rate-Limited": "1"},
                )
            try:
                spec = state.faults.decide(area, request.headers.get("X-Sandbox-Fault"))
            except ValueError as exc:
                return _error(400, f"X-Sandbox-Fault: {exc}")
            if spec.latency:
                state.faults.count("latency")
                time.sleep(spec.latency)
            if spec.status is not None:
                state.faults.count(str(spec.status))
                headers = {"X-Sandbox-Fault-Injected": str(spec.status)}
                if spec.status == 429:
                    ra = (
                        state.faults.config.retry_after
                        if spec.retry_after is None
                        else spec.retry_after
                    )
                    headers["Retry-After"] = f"{ra:g}"
                return _error(spec.status, f"injected fault: HTTP {spec.status}", headers)
            g.sandbox_drop = spec.drop
        if area in ("content", "campaigns"):
            key = _header("api_key")
            if not key:
                return _error(401, "the api_key header is required")
            if not same_secret(key, state.api_key):
                return _error(401, "invalid api_key")
            partner = request.args.get("partner_name")
            if not partner:
                return _error(400, "the partner_name query parameter is required")
            if partner != state.partner_name:
                return _error(403, f"this api_key has no subscription {partner!r}")
        return None

    @app.after_request
    def _after(resp: Response) -> Response:
        resp.headers["Date"] = http_date(state.clock.now())  # the sandbox's clock is "now"
        if getattr(g, "sandbox_drop", False):
            state.faults.count("drop")
            data = resp.get_data()
            half = data[: len(data) // 2]

            def partial() -> Iterator[bytes]:
                yield half

            resp.response = partial()
            resp.headers["Content-Length"] = str(len(data))
            resp.headers["X-Sandbox-Fault-Injected"] = "drop"
            resp.headers["Connection"] = "close"
            request.environ[DROP_FLAG] = True  # tells a server that keeps connections to close it
        return resp

    app.register_error_handler(ApiProblem, _problem_response)

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException) -> Response:
        status = exc.code or 500
        messages = {
            404: f"no route {request.path}",
            405: f"method {request.method} is not allowed on {request.path}",
            413: "the request body is too large (JSON bodies: at most "
            f"{state.limits.json_body} bytes; uploads: {state.limits.upload_body})",
        }
        resp = _error(status, messages.get(status, exc.description or exc.name))
        if status == 405 and exc.get_headers():
            for k, v in exc.get_headers():
                if k.lower() == "allow":
                    resp.headers["Allow"] = v
        return resp

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> Response:
        _LOG.error("sandbox error on %s %s: %r", request.method, request.path, exc)
        return _error(500, f"internal sandbox error ({type(exc).__name__})")

    register_reporting(app, state)
    register_reporting_v2(app, state)
    register_content(app, state)
    register_campaigns(app, state)
    register_admin(app, state)
    document: dict[str, Any] = build_openapi(state)

    @app.get("/openapi.json")
    def openapi() -> Any:
        return jsonify(document)

    return app
