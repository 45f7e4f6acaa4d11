"""The edgereports command, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import edgereports as er

WORKED = {
    "start_date_time": "2022-07-07T09:50:00+05:30",
    "end_date_time": "2022-07-08T09:50:00+05:30",
    "granularity": "DAY",
    "dimension_filter_clauses": [
        {"filters": [{"dimension_name": "account_id", "operator": "EXACT", "expressions": ["A"]}]}
    ],
    "metrics": [{"name": "time_usage_seconds", "aggregation_type": "COUNT"}],
}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "edgereports.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_query_preset_prints_the_worked_example() -> None:
    out = run(
        "query",
        "--preset",
        "time_usage_enterprise",
        "--account-id",
        "A",
        "--start",
        "2022-07-07T09:50:00+05:30",
        "--end",
        "2022-07-08T09:50:00+05:30",
    )
    assert out.returncode == 0, out.stderr
    assert json.dumps(json.loads(out.stdout)) == json.dumps(WORKED)


def test_query_from_flags() -> None:
    out = run(
        "query",
        "--account-id",
        "A",
        "--last",
        "day",
        "--granularity",
        "HOUR",
        "--by",
        "msisdn",
        "--where",
        "msisdn=1,2",
        "--metric",
        "ue_connections:MAX",
        "--metric",
        "uplink_bandwidth@99.5",
        "--compact",
    )
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert (d["start_date_time"], d["end_date_time"]) == ("LAST DAY", "NOW")
    assert d["dimension_filter_clauses"][0]["filters"][1]["expressions"] == ["1", "2"]
    assert d["metrics"][1]["metric_filter_clauses"][0]["filters"][0]["comparison_value"] == 99.5
    assert er.Report.from_request(d).to_request() == d


def test_bad_input_exits_2_with_the_message() -> None:
    out = run(
        "query",
        "--account-id",
        "A",
        "--now",
        "--granularity",
        "HOUR",
        "--metric",
        "ue_connections:max",
    )
    assert out.returncode == 2
    assert "aggregation_type must be a non-empty upper-case token" in out.stderr
    assert "Traceback" not in out.stderr
    out = run("query", "--preset", "nope", "--account-id", "A")
    assert out.returncode == 2 and "unknown preset 'nope'" in out.stderr


def test_unknown_names_warn_on_stderr() -> None:
    out = run("query", "--account-id", "A", "--now", "--metric", "uplink_bandwith:AVG")
    assert out.returncode == 0
    assert "warning:" in out.stderr and "did you mean 'uplink_bandwidth'" in out.stderr


def test_help_version_and_presets() -> None:
    out = run("--help")
    assert out.returncode == 0 and "presets" in out.stdout and "examples:" in out.stdout
    out = run("--version")
    assert out.stdout.strip() == f"edgereports {er.__version__}"
    out = run("presets")
    for name in er.presets.names():
        assert name in out.stdout
    listed = json.loads(run("presets", "--json").stdout)
    assert [p["name"] for p in listed] == er.presets.names()
    # the catalogue shows the defaults: the bucket length, and NOW for a current-value preset
    lines = out.stdout.splitlines()
    byte = lines[lines.index(next(x for x in lines if x.startswith("byte_usage_subscriber"))) + 1]
    assert "[granularity=HOUR]" in byte
    assert "[start=NOW], [end=NOW], [granularity]" in out.stdout
    byte_json = next(p for p in listed if p["name"] == "byte_usage_subscriber")
    assert {"name": "granularity", "required": False, "default": "HOUR"}.items() <= next(
        q for q in byte_json["params"] if q["name"] == "granularity"
    ).items()


def test_the_command_starts_without_the_sandbox_and_still_names_its_extras() -> None:
    code = (
        "import sys\n"
        "from edgereports.cli.main import main\n"
        "m = sys.modules['edgereports.cli.main']\n"
        "assert 'edgereports.sandbox' not in sys.modules, 'the sandbox is imported at start-up'\n"
        "from edgereports.sandbox.extras import SandboxExtrasMissing\n"
        "def handler(args):\n"
        "    raise SandboxExtrasMissing('the sandbox needs flask')\n"
        "m._cmd_sandbox = handler\n"
        "sys.exit(main(['sandbox']))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == "edgereports: error: the sandbox needs flask"


def test_every_command_shows_its_help_without_pandas_pyarrow_or_numpy() -> None:
    """``edgereports --help`` and each command's and action's ``--help``, run through the
    command's entry point in one process, import none of the three: a command loads them when
    its work needs them. The sandbox's own command loads its model (numpy), not the others."""
    code = """if True:
        import argparse, contextlib, io, sys
        from edgereports.cli import build_parser, main

        def commands(parser, path):
            yield path
            for action in parser._actions:
                if isinstance(action, argparse._SubParsersAction):
                    for name, sub in action.choices.items():
                        yield from commands(sub, [*path, name])

        heavy = ("pandas", "pyarrow", "numpy")
        shown = []
        for path in commands(build_parser(), []):
            if path == ["sandbox"]:
                continue
            with contextlib.redirect_stdout(io.StringIO()) as out:
                try:
                    main([*path, "--help"])
                except SystemExit as exc:
                    shown.append((exc.code, out.getvalue().startswith("usage: edgereports")))
        print(len(shown), sorted(set(shown)), [m for m in heavy if m in sys.modules])
        with contextlib.redirect_stdout(io.StringIO()) as out:
            try:
                main(["sandbox", "--help"])
            except SystemExit as exc:
                status = exc.code
        print(status, "usage: edgereports sandbox" in out.getvalue(),
              [m for m in heavy if m in sys.modules])
    """
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    helps, sandbox = out.stdout.splitlines()
    count, rest = helps.split(" ", 1)
    assert int(count) >= 27  # the command, its 16 commands and their 11 actions, less sandbox
    assert rest == "[(0, True)] []"
    assert sandbox == "0 True ['numpy']"


@pytest.mark.slow
def test_cache_info_and_clear(tmp_path: Path) -> None:
    import os

    from edgereports.reporting import Cache

    assert Cache(tmp_path).info()["chunks"] == 0
    env = {**os.environ, "EDGEREPORTS_CACHE": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "edgereports.cli", "cache", "info", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["path"] == str(tmp_path)
    cleared = run("cache", "clear", "--dir", str(tmp_path))
    assert cleared.returncode == 0 and "removed 0 segment file(s)" in cleared.stdout
    (tmp_path / "a-file").write_text("")
    bad = run("cache", "info", "--dir", str(tmp_path / "a-file"))
    assert bad.returncode == 2 and "cache must be a writable directory" in bad.stderr
    assert "EDGEREPORTS_CACHE" in run("cache", "--help").stdout
