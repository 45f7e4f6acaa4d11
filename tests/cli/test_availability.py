"""The ``availability`` command: the ledger as a table or JSON, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from edgereports.cli.main import main
from edgereports.sandbox import SandboxHandle
from edgereports.sandbox.inventory import write_inventory

NOW = "2024-03-15T12:00:00+05:30"
DARK = "site_dark:CHE-1005:2024-03-12T04:00:00+00:00:6"
SANDBOX = ["availability", "--sandbox", "--now", NOW, "--last", "30d"]


@pytest.fixture(autouse=True)
def no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EDGEREPORTS_API_KEY", "EDGEREPORTS_REPORTING_URL", "EDGEREPORTS_ACCOUNT_ID"):
        monkeypatch.delenv(name, raising=False)


def test_the_ledger_per_site_counts_an_injected_outage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*SANDBOX, "--incident", DARK]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].startswith(
        "availability by customer_site_id from 2024-02-14T00:00:00+00:00 to "
        "2024-03-15T00:00:00+00:00 (whole UTC hours"
    )
    assert lines[1].split() == [
        "customer_site_id", "availability", "available", "unavailable", "maintenance",
        "inactive", "unknown", "hours",
    ]  # fmt: skip
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:8]}
    assert rows["CHE-1005"][1:3] == ["714", "6"] and rows["CHE-1005"][-1] == "720"
    assert rows["CHE-1005"][0] == f"{100 * 714 / 720:.2f}%"
    assert lines[-1].startswith("unavailable hours rest on 1 outage(s) health found")
    assert err == ""


def test_the_ledger_as_json_by_enodeb_and_day(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = [*SANDBOX[:-1], "3d", "--by", "enodeb", "--granularity", "day", "--incident", DARK]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["by"] == "enodeb" and data["granularity"] == "DAY"
    assert "available / (available + unavailable)" in data["rule"]
    days = {(r["enodeb_ip"], r["time_stamp"][:10]): r for r in data["rows"]}
    dark = days[("10.10.4.1", "2024-03-12")]  # CHE-1005's one eNodeB
    assert (dark["unavailable_hours"], dark["hours"]) == (6, 24)
    assert [o["kind"] for o in data["outages"]] == ["site_dark"]
    target = tmp_path / "ledger.json"
    assert main([*argv, "--json", str(target)]) == 0
    assert json.loads(target.read_text()) == data


def test_an_inventory_file_with_maintenance_windows_against_the_service(
    sandbox: SandboxHandle,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("EDGEREPORTS_API_KEY", sandbox.api_key)
    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", sandbox.reporting_url)
    inventory = write_inventory(sandbox.inventory(), tmp_path / "inventory.csv")
    windows = tmp_path / "windows.csv"
    pd.DataFrame(
        {"scope": ["site"], "subject": ["BLR-1001"], "start": ["2022-06-03T10:20:00+00:00"],
         "end": ["2022-06-03T12:00:00+00:00"]}
    ).to_csv(windows, index=False)  # fmt: skip
    span = ["--start", "2022-06-01", "--end", "2022-07-01", "--inventory", str(inventory)]
    assert main(["availability", *span, "--maintenance", str(windows), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    sites = {r["customer_site_id"]: r for r in data["rows"]}
    assert sites["BLR-1001"]["maintenance_hours"] == 2  # 10:00 and 11:00 UTC
    assert [w["subject"] for w in data["maintenance"]] == ["BLR-1001"]
    assert all(r["hours"] == 30 * 24 for r in data["rows"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([*SANDBOX, "--by", "region"], "--by must be one of site, enodeb, msisdn, got 'region'"),
        ([*SANDBOX, "--granularity", "WEEK"], "granularity must be one of HOUR, DAY, MONTH"),
        ([*SANDBOX, "--granularity", "HOUR"], "--granularity must be DAY or MONTH"),
        (["availability", "--sandbox", "--last", "30d", "--start", "2024-03-01"], "not both"),
        (["availability", "--sandbox"], "give the range"),
        ([*SANDBOX, "--maintenance", "w.csv"], "--maintenance goes with --inventory"),
        ([*SANDBOX, "--incident", "blackout:CHE-1005:2024-03-12T04:00:00+00:00:6"],
         "incident 1: kind 'blackout' must be one of"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err
