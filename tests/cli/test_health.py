"""The ``health`` command: flags as a table or JSON, a line when none, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgereports.cli.main import main
from edgereports.sandbox import SandboxHandle

NOW = "2024-03-15T12:00:00+05:30"
DARK = "site_dark:CHE-1005:2024-03-12T04:00:00+00:00:6"
SANDBOX = ["health", "--sandbox", "--now", NOW, "--last", "7d"]


@pytest.fixture(autouse=True)
def no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EDGEREPORTS_API_KEY", "EDGEREPORTS_REPORTING_URL", "EDGEREPORTS_ACCOUNT_ID"):
        monkeypatch.delenv(name, raising=False)


def test_flags_are_printed_as_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SANDBOX, "--incident", DARK]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split()[:6] == ["kind", "subject", "start", "end", "severity", "evidence"]
    assert lines[1].split()[:7] == [
        "site_dark", "CHE-1005", "2024-03-12", "04:00", "2024-03-12", "10:00", "high",
    ]  # fmt: skip
    assert len(lines) == 2 and err == ""


def test_flags_as_json_to_stdout_and_to_a_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main([*SANDBOX, "--incident", DARK, "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [(r["kind"], r["subject"], r["start"], r["end"]) for r in records] == [
        ("site_dark", "CHE-1005", "2024-03-12T04:00:00+00:00", "2024-03-12T10:00:00+00:00")
    ]
    target = tmp_path / "flags.json"
    assert main([*SANDBOX, "--incident", DARK, "--json", str(target)]) == 0
    assert json.loads(target.read_text()) == records


def test_no_flags_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(SANDBOX) == 0
    out, _ = capsys.readouterr()
    assert out == "no flags from 2024-03-08T00:00:00+00:00 to 2024-03-15T00:00:00+00:00\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([*SANDBOX, "--incident", "blackout:CHE-1005:2024-03-12T04:00:00+00:00:6"],
         "incident 1: kind 'blackout' must be one of"),
        (["health", "--sandbox", "--last", "7x"], "--last '7x' must look like 7d, 2w or 48h"),
        (["health", "--sandbox", "--last", "7d", "--start", "2024-03-01"], "not both"),
        (["health", "--sandbox"], "give the range"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_the_live_service_needs_an_account_and_subscribers(
    sandbox: SandboxHandle, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("EDGEREPORTS_API_KEY", sandbox.api_key)
    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", sandbox.reporting_url)
    assert main(["health", "--last", "7d"]) == 2
    assert "give --account-id" in capsys.readouterr().err
    assert main(["health", "--last", "7d", "--account-id", sandbox.account_id]) == 2
    assert "msisdn must name the subscribers" in capsys.readouterr().err
    sims = sandbox.network.sims_of(sandbox.account_id)
    args = ["--account-id", sandbox.account_id, "--msisdn", sims[0].msisdn]
    assert main(["health", "--start", "2022-07-01", "--end", "2022-07-08", *args]) == 0
    out = capsys.readouterr().out
    assert out.startswith(("no flags", "kind"))
