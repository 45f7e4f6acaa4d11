"""The ``health`` command: flags as a table or JSON, a line when none, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgereports.cli.main import main
from edgereports.sandbox import SandboxHandle
from edgereports.sandbox.inventory import write_inventory

NOW = "2024-03-15T12:00:00+05:30"
DARK = "site_dark:CHE-1005:2024-03-12T04:00:00+00:00:6"
SANDBOX = ["health", "--sandbox", "--now", NOW, "--last", "7d"]


@pytest.fixture(autouse=True)
def no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EDGEREPORTS_API_KEY", "EDGEREPORTS_REPORTING_URL", "EDGEREPORTS_ACCOUNT_ID"):
        monkeypatch.delenv(name, raising=False)


def test_episodes_then_flags_are_printed_with_their_zone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*SANDBOX, "--incident", DARK]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == (
        "episode high: site CHE-1005: 10 of 10 active devices offline (10 subscribers) for 6 h, "
        "from 2024-03-12 04:00+00:00 to 2024-03-12 10:00+00:00"
    )
    assert lines[1].split()[:7] == [
        "kind", "subject", "start", "end", "severity", "evidence", "episode",
    ]  # fmt: skip
    assert lines[2].split()[:7] == [
        "site_dark", "CHE-1005", "2024-03-12", "04:00+00:00", "2024-03-12", "10:00+00:00", "high",
    ]  # fmt: skip
    assert lines[3].startswith("Not judged: 2 subscriber(s)") and err == ""
    assert main([*SANDBOX, "--incident", DARK, "--tz", "+05:30"]) == 0
    assert "2024-03-12 09:30+05:30" in capsys.readouterr().out.splitlines()[2]


def test_flags_as_json_to_stdout_and_to_a_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main([*SANDBOX, "--incident", DARK, "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [(r["kind"], r["subject"], r["start"], r["end"], r["episode"]) for r in records] == [
        ("site_dark", "CHE-1005", "2024-03-12T04:00:00+00:00", "2024-03-12T10:00:00+00:00",
         "CHE-1005@2024-03-12T04:00Z")
    ]  # fmt: skip
    target = tmp_path / "flags.json"
    assert main([*SANDBOX, "--incident", DARK, "--json", str(target)]) == 0
    assert json.loads(target.read_text()) == records


def test_no_flags_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(SANDBOX) == 0
    out, _ = capsys.readouterr()
    assert out.splitlines()[0] == (
        "no flags from 2024-03-08T00:00:00+00:00 to 2024-03-15T00:00:00+00:00"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([*SANDBOX, "--incident", "blackout:CHE-1005:2024-03-12T04:00:00+00:00:6"],
         "incident 1: kind 'blackout' must be one of"),
        (["health", "--sandbox", "--last", "7x"], "--last '7x' must look like 7d, 2w or 48h"),
        (["health", "--sandbox", "--last", "7d", "--start", "2024-03-01"], "not both"),
        (["health", "--sandbox"], "give the range"),
        ([*SANDBOX, "--shard", "5/4"], "shard must be i/n with 1 <= i <= n, got 5/4"),
        ([*SANDBOX, "--msisdn", "919319520966", "--shard", "1/2"], "shards split the account"),
        ([*SANDBOX, "--inventory", "nowhere.csv"], "inventory file nowhere.csv does not exist"),
        ([*SANDBOX, "--maintenance", "w.csv"], "--maintenance goes with --inventory"),
        (["health", "--merge", "nowhere.json"], "--merge: cannot read nowhere.json"),
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


def test_an_inventory_file_is_judged_and_shards_merge_to_the_whole(
    sandbox: SandboxHandle,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("EDGEREPORTS_API_KEY", sandbox.api_key)
    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", sandbox.reporting_url)
    inventory = write_inventory(sandbox.inventory(), tmp_path / "inventory.csv")
    span = ["--start", "2022-06-01", "--end", "2022-07-01", "--inventory", str(inventory)]
    assert main(["health", *span, "--json", str(tmp_path / "whole.json")]) == 0
    whole = json.loads((tmp_path / "whole.json").read_text())
    names = []
    for i in (1, 2):
        names.append(str(tmp_path / f"shard-{i}.json"))
        assert main(["health", *span, "--shard", f"{i}/2", "--json", names[-1]]) == 0
    shard = json.loads(Path(names[0]).read_text())
    assert shard["shard"] == "1/2" and shard["range"][0] == "2022-06-01T00:00:00+00:00"
    assert main(["health", "--merge", *names, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == whole
    assert main(["health", "--merge", names[0], "--json"]) == 2
    assert "merge needs shards 1 to 2 once each, got 1" in capsys.readouterr().err
