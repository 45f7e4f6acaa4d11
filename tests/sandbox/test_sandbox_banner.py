"""The ``edgereports sandbox`` banner prints ready-to-paste settings; a port in use is one line."""

from __future__ import annotations

import shlex
import socket
import subprocess
import sys

import requests


def _sandbox(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-W", "default", "-m", "edgereports.cli", "sandbox", *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_banner_prints_export_lines() -> None:
    done = _sandbox("--port", "0", "--duration", "0.2")
    assert done.returncode == 0, done.stderr
    exports = [line for line in done.stdout.splitlines() if line.startswith("export ")]
    names = [shlex.split(line)[1].split("=", 1)[0] for line in exports]
    assert names == [
        "EDGEREPORTS_API_KEY",
        "EDGEREPORTS_REPORTING_URL",
        "EDGEREPORTS_BASE_URL",
        "EDGEREPORTS_PARTNER_NAME",
        "EDGEREPORTS_ACCOUNT_ID",
        "EDGEREPORTS_SERVICE_TOKEN",  # the v2 reporting service's (docs/v2.md needs them)
        "EDGEREPORTS_CORE_ID",
    ]
    assert "export EDGEREPORTS_API_KEY=sandbox-demo-key" in exports
    assert "export EDGEREPORTS_CORE_ID=sandbox-core-1" in exports
    assert done.stderr == ""


def test_a_port_in_use_is_one_line() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = _sandbox("--port", str(port), "--duration", "0.2")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"edgereports sandbox: port {port} on 127.0.0.1 is already in use; choose another "
        "with --port (--port 0 picks a free one)"
    ]


def test_report_points_option_sets_the_limit() -> None:
    """``--report-points N``: an answer of more than N points is a 400 that says so."""
    cmd = [sys.executable, "-m", "edgereports.cli", "sandbox", "--port", "0",
           "--report-points", "100", "--duration", "60"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        info = {}
        for line in proc.stdout:
            name, _, value = line.strip().partition(":")
            info[name] = value.strip()
            if line.startswith("Press Ctrl-C") or line.startswith("Stopping"):
                break
        body = {
            "start_date_time": "2022-01-01T00:00:00Z",
            "end_date_time": "2022-01-06T00:00:00Z",  # 121 HOUR buckets
            "granularity": "HOUR",
            "dimension_filter_clauses": [{"filters": [{"dimension_name": "account_id",
                "operator": "EXACT", "expressions": [info["account id"]]}]}],
            "metrics": [{"name": "uplink_bytes", "aggregation_type": "COUNT"}],
        }  # fmt: skip
        url = info["reporting URL"].split()[-1].rstrip(")")  # the POST target
        answer = requests.post(url, params={"apikey": "sandbox-demo-key"}, json=body, timeout=60)
        assert answer.status_code == 400, answer.text
        assert "the sandbox answers at most 100" in answer.text
        body["end_date_time"] = "2022-01-05T00:00:00Z"  # 97 buckets: within the limit
        answer = requests.post(url, params={"apikey": "sandbox-demo-key"}, json=body, timeout=60)
        assert answer.status_code == 200, answer.text
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_report_points_must_be_positive() -> None:
    done = _sandbox("--port", "0", "--report-points", "0")
    assert done.returncode == 2
    assert "--report-points: must be a whole number of at least 1, got '0'" in done.stderr
