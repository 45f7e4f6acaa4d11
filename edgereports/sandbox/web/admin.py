"""Unauthenticated helper routes under ``/sandbox/`` (for tests, notebooks and the demo).

They read or change the running sandbox: its inventory, incidents, faults, request counts and
report bodies, clock and rate-limit mode (docs/sandbox.md). The API key is never shown.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
from flask import Flask, Response, jsonify, request

from ..problems import bad
from .state import SandboxState

__all__ = ["register_admin"]


def register_admin(app: Flask, state: SandboxState) -> None:
    """Register the ``/sandbox/...`` routes on ``app``.

    Args:
        app: the Flask app.
        state: the sandbox state.
    """
    network_json: list[bytes] = []

    def clock_info() -> dict[str, Any]:
        return {"now": state.clock.now().isoformat(), "fixed": state.clock.fixed}

    def body() -> dict[str, Any]:
        data = request.get_json(silent=True)
        if not isinstance(data, dict):
            raise bad("the body must be a JSON object")
        return data

    @app.get("/sandbox/info")
    def sandbox_info() -> Any:
        base = state.base_url.rstrip("/")
        return jsonify(
            {
                "base_url": base,
                "reporting_url": base,
                "report_endpoint": f"{base}/connectivity/v1/report",
                "partner_name": state.partner_name,
                "account_id": state.network.primary_account_id,
                "seed": state.seed,
                "devices": len(state.network.devices),
                "sync_delay": state.sync_delay,
                "clock": clock_info(),
                "limits": dataclasses.asdict(state.limits),
            }
        )

    @app.get("/sandbox/network")
    def sandbox_network() -> Response:
        if not network_json:
            network_json.append(orjson.dumps(state.network.to_dict()))
        return Response(network_json[0], mimetype="application/json")

    @app.get("/sandbox/incidents")
    def sandbox_incidents() -> Any:
        return jsonify({"incidents": [i.to_dict() for i in state.network.incidents]})

    @app.get("/sandbox/faults")
    def sandbox_faults() -> Any:
        cfg = dataclasses.asdict(state.faults.config)
        return jsonify(
            {"counts": state.faults.counts(), "pending": state.faults.pending(), "config": cfg}
        )

    @app.post("/sandbox/faults")
    def sandbox_faults_enqueue() -> Any:
        specs = body().get("enqueue")
        if not isinstance(specs, list) or not all(isinstance(s, str) for s in specs):
            raise bad("enqueue must be an array of fault strings", "enqueue")
        try:
            state.faults.enqueue(*specs)
        except ValueError as exc:
            raise bad(str(exc), "enqueue") from None
        return jsonify({"pending": state.faults.pending()})

    @app.get("/sandbox/requests")
    def sandbox_requests() -> Any:
        return jsonify({"counts": state.request_counts(), "report_requests": state.reports()})

    @app.get("/sandbox/clock")
    def sandbox_clock() -> Any:
        return jsonify(clock_info())

    @app.post("/sandbox/clock")
    def sandbox_clock_set() -> Any:
        data = body()
        try:
            if "set" in data:
                state.clock.set(str(data["set"]))
            elif "advance" in data:
                step = data["advance"]
                if isinstance(step, bool) or not isinstance(step, int | float):
                    raise bad("advance must be a number of seconds", "advance")
                state.clock.advance(float(step))
            elif data.get("real_time") is True:
                state.clock.follow_real_time()
            else:
                raise bad('send {"set": ISO}, {"advance": seconds} or {"real_time": true}')
        except ValueError as exc:
            raise bad(str(exc), "set") from None
        return jsonify(clock_info())

    def rate_limit_info() -> dict[str, Any]:
        return {
            "requests_per_second": state.throttle.per_second,
            "rate_limited": state.throttle.refused,
        }

    @app.get("/sandbox/rate-limit")
    def sandbox_rate_limit() -> Any:
        return jsonify(rate_limit_info())

    @app.post("/sandbox/rate-limit")
    def sandbox_rate_limit_set() -> Any:
        data = body()
        if "requests_per_second" not in data:
            raise bad('send {"requests_per_second": N} or null', "requests_per_second")
        try:
            state.throttle.set(data["requests_per_second"])
        except ValueError as exc:
            raise bad(str(exc), "requests_per_second") from None
        return jsonify(rate_limit_info())

    @app.post("/sandbox/reset")
    def sandbox_reset() -> Any:
        state.reset_counters()
        return jsonify({"status": "reset"})
