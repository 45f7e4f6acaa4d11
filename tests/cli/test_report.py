"""The ``report`` command and the analyst scripts in examples/, against the sandbox."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pandas.testing as pdt
import pytest

from edgereports import presets
from edgereports.cli.report import add_parser, parse_duration
from edgereports.normalize import read_csv
from edgereports.reporting import ReportingClient
from edgereports.sandbox import SandboxHandle

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
START, END = "2022-06-01T00:00:00+05:30", "2022-06-09T00:00:00+05:30"


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="edgereports")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    status: int = args.handler(args)
    return status


@pytest.fixture
def env(sandbox: SandboxHandle, monkeypatch: pytest.MonkeyPatch) -> SandboxHandle:
    monkeypatch.setenv("EDGEREPORTS_API_KEY", sandbox.api_key)
    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", sandbox.reporting_url)
    return sandbox


def enterprise_args(sb: SandboxHandle) -> list[str]:
    return [
        "report",
        "--preset",
        "time_usage_enterprise",
        "--account-id",
        sb.account_id,
        "--start",
        START,
        "--end",
        END,
        "--window",
        "2d",
    ]


def expected_frame(sb: SandboxHandle) -> pd.DataFrame:
    client = ReportingClient(sb.api_key, sb.reporting_url, progress=False)
    report = presets.time_usage_enterprise(account_id=sb.account_id, start=START, end=END)
    return client.fetch(report, window=timedelta(days=100))


@pytest.mark.slow
def test_report_to_csv_parquet_json_and_table(
    env: SandboxHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = expected_frame(env)
    before = env.request_count()
    assert run_cli([*enterprise_args(env), "--csv", str(tmp_path / "u.csv")]) == 0
    assert env.request_count() - before == 5  # eight days in windows of two (from 00:00+05:30)
    from_csv = read_csv(tmp_path / "u.csv", request=expected.attrs["request"])
    pdt.assert_frame_equal(from_csv, expected)

    assert run_cli([*enterprise_args(env), "--parquet", str(tmp_path / "u.parquet")]) == 0
    pdt.assert_frame_equal(pd.read_parquet(tmp_path / "u.parquet"), expected, check_dtype=False)
    out = capsys.readouterr().out  # a file written is named in one line
    n, columns = len(expected), len(expected.columns)
    assert out.splitlines()[-2:] == [
        f"wrote {n} rows × {columns} columns to {tmp_path / 'u.csv'}",
        f"wrote {n} rows × {columns} columns to {tmp_path / 'u.parquet'}",
    ]

    capsys.readouterr()
    assert run_cli([*enterprise_args(env), "--json", "--accept", "csv"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["value"] for r in records] == expected["value"].tolist()

    assert run_cli(enterprise_args(env)) == 0
    table = capsys.readouterr().out
    assert "time_usage_seconds" in table and len(table.splitlines()) == len(expected) + 1
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind


@pytest.mark.parametrize(
    ("extra", "unset", "status", "message"),
    [
        (["--preset", "no_such_preset"], None, 2, "unknown preset 'no_such_preset'"),
        (["--window", "5x"], None, 2, "--window '5x' must look like 12h, 7d or 2w"),
        (["--window", "5h"], None, 2, "whole number of buckets"),
        (["--workers", "0"], None, 2, "--workers must be 1 or more"),
        ([], "EDGEREPORTS_API_KEY", 2, "missing settings: api_key (EDGEREPORTS_API_KEY)"),
        ([], "EDGEREPORTS_REPORTING_URL", 2, "missing settings: reporting_url"),
    ],
)
def test_report_bad_input_exits_2(
    env: SandboxHandle,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    unset: str | None,
    status: int,
    message: str,
) -> None:
    if unset:
        monkeypatch.delenv(unset)
    before = env.request_count()
    assert run_cli([*enterprise_args(env), *extra]) == status
    err = capsys.readouterr().err
    assert err.startswith("edgereports: error: ") and message in err
    assert env.request_count() == before


def test_report_service_errors_exit_1(
    make_sandbox: Callable[..., SandboxHandle],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    sb = make_sandbox(seed=0)
    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", sb.reporting_url)
    monkeypatch.setenv("EDGEREPORTS_API_KEY", "wrong-key-000")
    assert run_cli(enterprise_args(sb)) == 1
    assert "edgereports: AuthError: " in capsys.readouterr().err
    monkeypatch.setenv("EDGEREPORTS_API_KEY", sb.api_key)
    sb.enqueue_faults("none", "503")
    out = tmp_path / "partial.csv"
    argv = [*enterprise_args(sb), "--retries", "0", "--workers", "1", "--csv", str(out)]
    assert run_cli(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("edgereports: PartialFailure: 1 of 5 requests failed:")
    assert "window 2/5" in err and not out.exists()  # nothing written


def test_parse_duration() -> None:
    assert parse_duration("36h") == timedelta(hours=36)
    assert parse_duration(" 2W ") == timedelta(weeks=2)
    assert parse_duration(None) is None


def _run_example(name: str, sb: SandboxHandle, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "EDGEREPORTS_API_KEY": sb.api_key,
        "EDGEREPORTS_REPORTING_URL": sb.reporting_url,
    }
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_example_nightly_pull(sandbox: SandboxHandle, tmp_path: Path) -> None:
    sims = sandbox.network.sims_of(sandbox.account_id)[:6]
    (tmp_path / "subs.txt").write_text("\n".join(s.msisdn for s in sims) + "\n")
    done = _run_example(
        "nightly_pull.py",
        sandbox,
        "--account-id",
        sandbox.account_id,
        "--subscribers",
        str(tmp_path / "subs.txt"),
        "--day",
        "2022-07-01",
        "--out",
        str(tmp_path / "out"),
    )
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "out" / "date=2022-07-01"
    client = ReportingClient(sandbox.api_key, sandbox.reporting_url, progress=False)
    span = {"account_id": sandbox.account_id, "start": "2022-07-01", "end": "2022-07-02"}
    byte_usage = client.fetch(
        presets.byte_usage_subscriber(msisdn=[s.msisdn for s in sims], **span)
    )
    day = byte_usage[byte_usage["time_stamp"] < pd.Timestamp("2022-07-02", tz="UTC")]
    written = pd.read_parquet(folder / "byte_usage.parquet")
    assert len(written) == 6 * 24 * 2
    assert written["value"].sum() == day["value"].sum()
    from_csv = read_csv(folder / "byte_usage.csv", request=byte_usage.attrs["request"])
    pdt.assert_frame_equal(from_csv, day.reset_index(drop=True))
    assert (folder / "time_usage.csv").exists() and (folder / "time_usage.parquet").exists()


@pytest.mark.slow
def test_example_subscriber_report(sandbox: SandboxHandle, tmp_path: Path) -> None:
    sims = sandbox.network.sims_of(sandbox.account_id)[:3]
    msisdn_args = [a for s in sims for a in ("--msisdn", s.msisdn)]
    span = ["--start", "2022-06-01", "--end", "2022-06-08"]
    done = _run_example(
        "subscriber_report.py",
        sandbox,
        "--account-id",
        sandbox.account_id,
        *msisdn_args,
        *span,
        "--csv",
        str(tmp_path / "s.csv"),
    )
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(tmp_path / "s.csv", dtype={"msisdn": str}).set_index("msisdn")
    client = ReportingClient(sandbox.api_key, sandbox.reporting_url, progress=False)
    usage = client.fetch(
        presets.time_usage_subscriber(
            account_id=sandbox.account_id,
            msisdn=[s.msisdn for s in sims],
            start="2022-06-01",
            end="2022-06-08",
        )
    )
    hours = (usage.groupby("msisdn")["value"].sum() / 3600).round(2)
    assert table["hours_online"].to_dict() == pytest.approx(hours.to_dict())
    assert set(table.index) == {s.msisdn for s in sims}
    assert sims[0].msisdn in done.stdout


# -- every number means what its label says ------------------------------------------------


@pytest.mark.slow
def test_the_table_of_an_unpinned_preset_says_total_and_top_talker(
    env: SandboxHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["report", "--preset", "concurrent_online_ues", "--account-id", env.account_id]
    assert run_cli(argv) == 0
    out, err = capsys.readouterr()
    assert "customer_site_id (top talker)" in out and "total (top talker " in out
    assert err.startswith("edgereports: TopTalkerWarning: grouped by customer_site_id")
    assert "a COUNT row is the total of the whole scope" in err
    assert "pass customer_site_id values" in err and len(err.splitlines()) == 1
    sites = [s.customer_site_id for s in env.network.sites if s.account_id == env.account_id]
    assert run_cli([*argv, *(a for s in sites for a in ("--customer-site-id", s))]) == 0
    out, err = capsys.readouterr()
    assert err == "" and all(s in out for s in sites) and "top talker" not in out


def test_a_top_talkers_maximum_is_its_own_not_a_total(
    env: SandboxHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["report", "--account-id", env.account_id, "--now", "--by", "customer_site_id"]
    assert run_cli([*argv, "--metric", "ue_connections:MAX"]) == 0
    out, err = capsys.readouterr()
    assert " only (the top talker; other members not shown)" in out
    assert "total" not in out  # a maximum is never called a total
    assert "a MAX row is the value of one customer_site_id only" in err and "total of" not in err


def test_filters_that_match_nothing_are_named_and_nothing_is_written(
    env: SandboxHandle, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    other = next(s for s in env.network.sims if s.account_id != env.account_id).msisdn
    target = tmp_path / "t.parquet"
    argv = ["report", "--preset", "time_usage_subscriber", "--account-id", env.account_id,
            "--msisdn", other, "--start", "2022-06-01", "--end", "2022-06-08",
            "--parquet", str(target)]  # fmt: skip
    assert run_cli(argv) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (
        f"edgereports: EmptyResultWarning: no rows for account_id={env.account_id}, "
        f"msisdn={other} from 2022-06-01T00:00:00+00:00 to 2022-06-08T00:00:00+00:00"
    )
    assert err[1:] == ["edgereports: nothing written (pass --allow-empty to write it)"]
    assert not target.exists()
    assert run_cli([*argv, "--allow-empty"]) == 0
    assert target.exists() and pd.read_parquet(target).empty


def test_a_failure_of_every_window_is_told_once(
    make_sandbox: Callable[..., SandboxHandle],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sb = make_sandbox(seed=0)
    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", sb.reporting_url)
    monkeypatch.setenv("EDGEREPORTS_API_KEY", sb.api_key)
    sb.enqueue_faults(*["503"] * 5)
    assert run_cli([*enterprise_args(sb), "--retries", "0"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("edgereports: ApiError: 5 of 5 requests failed: POST ")
    assert err.count("answered HTTP 503") == 1 and len(err.splitlines()) == 1


def test_an_unreachable_address_fails_at_once_with_a_hint(
    sandbox: SandboxHandle, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import closed_port_url

    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", closed_port_url())
    monkeypatch.setenv("EDGEREPORTS_API_KEY", sandbox.api_key)
    started = time.perf_counter()
    assert run_cli(enterprise_args(sandbox)) == 1
    assert time.perf_counter() - started < 2.0  # was 8.5 s of retries per request
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2
    assert err[0].startswith("edgereports: TransportError: 5 of 5 requests failed: POST ")
    assert "Connection refused" in err[0]
    assert err[1] == (
        "hint: nothing answers at that address: check EDGEREPORTS_REPORTING_URL (or "
        "--reporting-url), or start a local sandbox with `edgereports sandbox`"
    )


def test_report_flags_apply_on_top_of_a_preset_or_are_refused(
    env: SandboxHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    from edgereports.cli.main import main

    preset = ["--preset", "time_usage_enterprise", "--account-id", env.account_id,
              "--start", "2022-06-01", "--end", "2022-06-03"]  # fmt: skip
    assert main(["query", *preset, "--tz", "+05:30", "--granularity", "HOUR", "--compact"]) == 0
    request = json.loads(capsys.readouterr().out)
    assert request["start_date_time"] == "2022-06-01T00:00:00+05:30"
    assert request["granularity"] == "HOUR"
    assert run_cli(["report", *preset, "--tz", "+05:30"]) == 0
    out = capsys.readouterr().out
    assert "2022-05-31 05:30:00+05:30" in out and "+00:00" not in out
    assert main(["report", *preset, "--tz", "Mars/Phobos"]) == 2
    assert "timezone 'Mars/Phobos'" in capsys.readouterr().err
    assert main(["query", *preset, "--metric", "uplink_bytes:COUNT"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("edgereports: error: --metric cannot be combined with --preset")


@pytest.mark.slow
def test_the_subscriber_report_runs_as_its_docstring_says(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    docstring = (EXAMPLES / "subscriber_report.py").read_text(encoding="utf-8")
    command = docstring.split("python subscriber_report.py", 1)[1].split("\n\n", 1)[0]
    args = shlex.split(command.replace("\\\n", " "))
    assert args[:2] == ["--account-id", sandbox.account_id]  # the sandbox's own account
    done = _run_example("subscriber_report.py", sandbox, *args)
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()[2:]
    assert [r.split()[0] for r in rows] == sorted(args[3::2][:2])  # one row per subscriber
    assert all(float(r.split()[1]) > 0 for r in rows)  # hours online


@pytest.mark.parametrize(
    ("flag", "target", "message"),
    [
        (
            "--json",
            "nodir/x.json",
            "--json {tmp}/nodir/x.json: directory {tmp}/nodir does not exist",
        ),
        ("--parquet", "adir", "--parquet {tmp}/adir: it is a directory; give a file name"),
        ("--csv", "afile/x.csv", "--csv {tmp}/afile/x.csv: {tmp}/afile is not a directory"),
    ],
)
def test_output_paths_are_checked_before_any_request(
    env: SandboxHandle,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    flag: str,
    target: str,
    message: str,
) -> None:
    """the paths were checked after fetching (or not: NotADirectoryError)."""
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("x")
    before = env.request_count()
    assert run_cli([*enterprise_args(env), flag, str(tmp_path / target)]) == 2
    err = capsys.readouterr().err
    assert err == f"edgereports: error: {message.format(tmp=tmp_path)}\n"
    assert env.request_count() == before


def test_report_compare_writes_the_other_period_beside_each_row(
    env: SandboxHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = enterprise_args(env)[:-2]  # no window
    out = tmp_path / "c.csv"
    assert run_cli([*args, "--compare", "2022-05-01..2022-05-09", "--csv", str(out)]) == 0
    written = pd.read_csv(out)
    client = ReportingClient(env.api_key, env.reporting_url, progress=False)
    # dates without an offset are UTC midnights: 8 UTC days, against the 9 this range overlaps
    before = presets.time_usage_enterprise(
        account_id=env.account_id, start="2022-05-01", end="2022-05-09"
    )
    other = client.fetch(before)
    columns = ["compare_time_stamp", "compare_value", "change", "change_pct", "compare_partial"]
    assert list(written.columns[-5:]) == columns
    assert len(written) == 9 and len(other) == 8
    assert written["compare_value"][:8].tolist() == other["value"].tolist()
    assert written[columns[:4]].iloc[8].isna().all()  # the ninth day has no counterpart
    # the range's first and last UTC days are partial: marked (the other's are whole days)
    assert written["compare_partial"].tolist() == [True, *[False] * 7, True]
    assert run_cli([*args, "--compare", "last_month"]) == 2
    err = capsys.readouterr().err
    assert "compare must be 'previous_period', 'previous_week', 'previous_year'" in err


def test_report_compares_several_periods_and_cohorts(
    env: SandboxHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = enterprise_args(env)[:-2]
    out = tmp_path / "several.csv"
    assert run_cli([*args, "--compare", "previous_week,previous_year_dow", "--csv", str(out)]) == 0
    written = pd.read_csv(out)
    assert list(written["period"].drop_duplicates()) == ["previous_week", "previous_year_dow"]
    assert list(written.columns[-6:]) == [
        "period", "compare_time_stamp", "compare_value", "change", "change_pct", "compare_partial"
    ]  # fmt: skip
    msisdns = [s.msisdn for s in env.network.sims_of(env.account_id)][:2]
    cohorts = [
        "report", "--preset", "time_usage_subscriber", "--account-id", env.account_id,
        "--msisdn", msisdns[0], "--start", START, "--end", END,
        "--compare-by", f"msisdn={msisdns[0]},{msisdns[1]}", "--json", str(tmp_path / "c.json"),
    ]  # fmt: skip
    assert run_cli(cohorts) == 0
    rows = pd.read_json(tmp_path / "c.json", dtype={"msisdn": str, "cohort": str})
    assert set(rows["cohort"]) == {msisdns[1]} and set(rows["msisdn"]) == {msisdns[0]}
    capsys.readouterr()
    assert run_cli([*args, "--compare-by", "msisdn"]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == "edgereports: error: --compare-by must look like customer_site_id=S1,S2, got 'msisdn'\n"
    )
    assert run_cli([*args, "--partial", "prorate"]) == 2
    assert "partial='prorate' scales the other period" in capsys.readouterr().err


def test_parse_compare() -> None:
    from edgereports.cli.report import parse_compare

    assert parse_compare(None) is None
    assert parse_compare("previous_year") == "previous_year"
    assert parse_compare("2024-01-01 .. 2024-02-01") == ("2024-01-01", "2024-02-01")
    assert parse_compare("previous_week, 2023-01-01..2023-01-08") == [
        "previous_week",
        ("2023-01-01", "2023-01-08"),
    ]
