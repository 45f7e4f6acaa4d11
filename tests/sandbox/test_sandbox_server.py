"""serve(), the handle, the helper routes, the clock, concurrency and the command line."""

from __future__ import annotations

import ast
import logging
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests

from edgereports.sandbox import Clock, SandboxHandle, serve
from edgereports.sandbox.__main__ import main

SandboxFactory = Callable[..., SandboxHandle]
PACKAGE = Path(__file__).resolve().parents[2] / "edgereports" / "sandbox"


def test_the_handle(sandbox: SandboxHandle) -> None:
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", sandbox.base_url)
    assert sandbox.reporting_url == sandbox.base_url
    assert sandbox.report_endpoint == f"{sandbox.base_url}/connectivity/v1/report"
    assert re.fullmatch(r"[0-9a-f]{24}", sandbox.account_id)
    assert len(sandbox.network.sims_of(sandbox.account_id)) >= 60
    assert sandbox.api_key not in repr(sandbox)
    assert sandbox.clock.now() == datetime(2022, 7, 8, 4, 30, tzinfo=UTC)


def test_helper_routes(sandbox: SandboxHandle) -> None:
    info = requests.get(f"{sandbox.base_url}/sandbox/info", timeout=30).json()
    assert info["account_id"] == sandbox.account_id
    assert info["partner_name"] == sandbox.partner_name
    assert info["clock"] == {"now": "2022-07-08T04:30:00+00:00", "fixed": True}
    net = requests.get(f"{sandbox.base_url}/sandbox/network", timeout=30).json()
    assert [s["msisdn"] for s in net["sims"]] == [s.msisdn for s in sandbox.network.sims]
    for route in ("info", "network", "faults", "requests", "clock"):
        text = requests.get(f"{sandbox.base_url}/sandbox/{route}", timeout=30).text
        assert sandbox.api_key not in text


def test_request_counts_and_the_report_log(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox()
    body = {"start_date_time": "NOW", "end_date_time": "NOW", "metrics": [
        {"name": "ue_connections", "aggregation_type": "COUNT"}], "dimension_filter_clauses": [
        {"filters": [{"dimension_name": "account_id", "operator": "EXACT",
                      "expressions": [sb.account_id]}]}]}  # fmt: skip
    for _ in range(3):
        requests.post(sb.report_endpoint, params={"apikey": sb.api_key}, json=body, timeout=30)
    requests.post(sb.report_endpoint, json=body, timeout=30)  # 401 still counts
    assert sb.request_count() == 4
    assert sb.report_requests() == [body] * 3
    seen = requests.get(f"{sb.base_url}/sandbox/requests", timeout=30).json()
    assert seen["counts"]["reporting"] == 4 and len(seen["report_requests"]) == 3
    requests.post(f"{sb.base_url}/sandbox/reset", timeout=30)
    assert sb.request_count() == 0 and sb.report_requests() == []


def test_the_clock_moves_by_handle_and_by_route(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox(clock="2022-07-08T00:00:00Z")
    sb.clock.advance(timedelta(minutes=7))
    url = f"{sb.base_url}/sandbox/clock"
    assert requests.get(url, timeout=30).json()["now"] == "2022-07-08T00:07:00+00:00"
    r = requests.post(url, json={"set": "2023-01-01T05:30:00+05:30"}, timeout=30)
    assert r.json()["now"] == "2023-01-01T00:00:00+00:00"
    r = requests.post(url, json={"advance": 60}, timeout=30)
    assert sb.clock.now() == datetime(2023, 1, 1, 0, 1, tzinfo=UTC)
    assert requests.post(url, json={"set": "2023-01-01T00:00:00"}, timeout=30).status_code == 400
    assert requests.post(url, json={"advance": "x"}, timeout=30).status_code == 400
    requests.post(url, json={"real_time": True}, timeout=30)
    assert abs((sb.clock.now() - datetime.now(UTC)).total_seconds()) < 5


def test_a_shifted_real_time_clock() -> None:
    clock = Clock(shift=timedelta(days=-1))
    assert abs((datetime.now(UTC) - clock.now()).total_seconds() - 86400) < 5
    with pytest.raises(ValueError, match="has no UTC offset"):
        Clock("2022-07-08T10:00:00")


def test_unknown_routes_and_methods_answer_json(sandbox: SandboxHandle) -> None:
    r = requests.get(f"{sandbox.base_url}/nowhere", timeout=30)
    assert (r.status_code, r.json()["message"]) == (404, "no route /nowhere")
    r = requests.get(sandbox.report_endpoint, timeout=30)
    assert r.status_code == 405 and r.json()["error"] == "Method Not Allowed"


def test_eight_concurrent_clients_are_served_without_error(sandbox: SandboxHandle) -> None:
    body = {"start_date_time": "2022-06-01T00:00:00+05:30",
            "end_date_time": "2022-07-01T00:00:00+05:30", "granularity": "HOUR",
            "dimension_filter_clauses": [{"filters": [
                {"dimension_name": "account_id", "operator": "EXACT",
                 "expressions": [sandbox.account_id]}]}],
            "metrics": [{"name": "uplink_bytes", "aggregation_type": "COUNT"}]}  # fmt: skip
    barrier = threading.Barrier(8)

    def client(_: int) -> list[int]:
        barrier.wait()
        with requests.Session() as s:
            return [s.post(sandbox.report_endpoint, params={"apikey": sandbox.api_key},
                           json=body, timeout=60).status_code for _ in range(5)]  # fmt: skip

    with ThreadPoolExecutor(8) as pool:
        statuses = [s for batch in pool.map(client, range(8)) for s in batch]
    assert statuses == [200] * 40


def test_serve_validates_options() -> None:
    with pytest.raises(ValueError, match="sync_delay must be >= 0"), serve(sync_delay=-1):
        pass
    with (
        pytest.raises(ValueError, match="error_rate must be between 0 and 1"),
        serve(faults={"error_rate": 2}),
    ):
        pass


def test_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    assert "--fault-rate" in capsys.readouterr().out
    assert main(["--port", "0", "--duration", "0.2", "--now", "2022-07-08T10:00:00+05:30"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"base URL:\s+http://127\.0\.0\.1:\d+", out)
    assert "API key:        sandbox-demo-key" in out
    assert "partner name:   sandbox-partner" in out
    assert "account id:     62c40843c7a1909709112345" in out
    assert main(["--port", "0", "--duration", "0", "--api-key", "s3cr3t-value"]) == 0
    assert "s3cr3t-value" not in capsys.readouterr().out
    assert main(["--devices", "0", "--port", "0"]) == 2
    assert "devices must be between 1 and 100000" in capsys.readouterr().err


def test_the_sandbox_imports_nothing_else_from_edgereports() -> None:
    for path in PACKAGE.rglob("*.py"):
        depth = len(path.relative_to(PACKAGE).parts)  # 1 at the top, 2 in model/, engine/, web/
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level == 0 and node.module:
                    assert not node.module.startswith("edgereports"), (path.name, node.module)
                if node.level > depth:
                    pytest.fail(f"{path.name} imports from outside the sandbox package")
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("edgereports") for a in node.names), path.name


def test_request_lines_are_logged_without_keys_unless_quiet(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = {"start_date_time": "NOW", "end_date_time": "NOW",
            "dimension_filter_clauses": [{"filters": [
                {"dimension_name": "account_id", "operator": "EXACT",
                 "expressions": ["62c40843c7a1909709112345"]}]}],
            "metrics": [{"name": "ue_connections", "aggregation_type": "COUNT"}]}  # fmt: skip
    caplog.set_level(logging.INFO, logger="edgereports.sandbox")
    for quiet in (True, False):
        with serve(api_key="s3cr3t-value", quiet=quiet) as sb:
            r = requests.post(sb.report_endpoint, params={"apikey": sb.api_key}, json=body,
                              timeout=30)  # fmt: skip
            assert r.status_code == 200
        lines = [rec.getMessage() for rec in caplog.records]
        if quiet:
            assert lines == []
        else:
            assert lines == ['"POST /connectivity/v1/report?apikey=***" 200']
        assert "s3cr3t-value" not in caplog.text


def test_a_dropped_body_closes_a_kept_alive_connection(sandbox: SandboxHandle) -> None:
    body = {"start_date_time": "2022-07-01T00:00:00Z", "end_date_time": "2022-07-02T00:00:00Z",
            "granularity": "HOUR",
            "dimension_filter_clauses": [{"filters": [
                {"dimension_name": "account_id", "operator": "EXACT",
                 "expressions": [sandbox.account_id]}]}],
            "metrics": [{"name": "uplink_bytes", "aggregation_type": "COUNT"}]}  # fmt: skip
    with requests.Session() as s:
        ok = s.post(sandbox.report_endpoint, params={"apikey": sandbox.api_key}, json=body,
                    timeout=30)  # fmt: skip
        assert ok.status_code == 200 and ok.headers.get("Connection") != "close"
        started = time.monotonic()
        with pytest.raises(requests.exceptions.ChunkedEncodingError):
            s.post(sandbox.report_endpoint, params={"apikey": sandbox.api_key}, json=body,
                   headers={"X-Sandbox-Fault": "drop"}, timeout=30)  # fmt: skip
        assert time.monotonic() - started < 5  # closed at once, not left to time out
        again = s.post(sandbox.report_endpoint, params={"apikey": sandbox.api_key}, json=body,
                       timeout=30)  # fmt: skip
        assert again.status_code == 200 and again.content == ok.content


def test_a_client_s_kept_alive_connections_stay_open(make_sandbox: SandboxFactory) -> None:
    """Twenty idle keep-alive connections (more than the sixteen a client keeps by default)
    are all kept: cheroot's default limit, ten, answered "Connection: close" past the tenth,
    and the client reconnected for about a third of a pull's requests."""
    sb = make_sandbox()
    sessions = [requests.Session() for _ in range(20)]
    try:
        for _ in range(2):
            for s in sessions:  # one after another: the others' connections wait, idle
                answer = s.get(f"{sb.base_url}/sandbox/clock", timeout=30)
                assert answer.status_code == 200
                assert answer.headers.get("Connection", "").lower() != "close"
    finally:
        for s in sessions:
            s.close()
