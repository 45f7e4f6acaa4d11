"""The ``edgereports sandbox`` banner prints ready-to-paste settings; a port in use is one line."""

from __future__ import annotations

import shlex
import socket
import subprocess
import sys


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
    ]
    assert "export EDGEREPORTS_API_KEY=sandbox-demo-key" in exports
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
