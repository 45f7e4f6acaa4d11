"""The CLI reaches v2: --api-version for reports from flags, v2 presets, service-report."""

from __future__ import annotations

import json
from typing import Any

import pytest

from edgereports.cli.main import main
from edgereports.sandbox import SandboxHandle


@pytest.fixture
def env(sandbox: SandboxHandle, monkeypatch: pytest.MonkeyPatch) -> SandboxHandle:
    for name, value in {
        "EDGEREPORTS_API_KEY": sandbox.api_key,
        "EDGEREPORTS_REPORTING_URL": sandbox.reporting_url,
        "EDGEREPORTS_BASE_URL": sandbox.base_url,
        "EDGEREPORTS_SERVICE_TOKEN": sandbox.service_token,
        "EDGEREPORTS_CORE_ID": sandbox.core_id,
    }.items():
        monkeypatch.setenv(name, value)
    return sandbox


def test_report_from_flags_with_api_version_v2(env: SandboxHandle, capsys: Any) -> None:
    argv = ["report", "--api-version", "v2", "--account-id", env.account_id,
            "--start", "2022-07-07T00:00:00Z", "--end", "2022-07-07T02:30:00Z",
            "--granularity", "HOUR", "--metric", "ue_connections:MAX", "--json"]  # fmt: skip
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["time_stamp"][11:19] for r in rows] == ["01:00:00", "02:00:00", "02:30:00"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["query", "--metric", "ue_connections:MAX", "--by", "enodeb_ip", "--now",
          "--api-version", "v2"], "'enodeb_ip' is a v1 name; in v2 it is 'enb_ip'"),
        (["query", "--preset", "device_status", "--account-id", "A", "--api-version", "v2"],
         "preset 'device_status' is a v1 report, not v2"),
        (["service-report", "--last", "HOUR", "--step", "2h", "--metric", "ap_count:COUNT"],
         "is longer than the range"),
    ],
)  # fmt: skip
def test_bad_v2_flags_exit_2_with_one_line(env: SandboxHandle, capsys: Any, argv: list[str],
                                           message: str) -> None:  # fmt: skip
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_service_report_prints_a_table(env: SandboxHandle, capsys: Any) -> None:
    argv = ["service-report", "--last", "HOUR", "--step", "20m", "--metric", "ap_count:MAX",
            "--where", "device=BLR-1001"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "mobile_core_id" in out and out.count("ap_count") == 3
