"""Errors print as one line on stderr, without colour codes or raw XML when it is not a
terminal (an object store's answer is the common offender)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from edgereports.cli._errors import one_line
from edgereports.sandbox import serve
from tests.export.conftest import NOW, job_text, run_cli, s3_server  # noqa: F401 (a fixture)

S3_ANSWER = (
    "Failed to read delta log object: Generic S3 error: Error performing get request "
    's3://nowhere/t/_delta_log/_last_checkpoint: response error "request error", after 0 '
    "retries: HTTP status client error (404 Not Found) for url (http://127.0.0.1:9/nowhere)\n"
    '   0: \x1b[91m<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchBucket</Code>'
    "<Message>The specified bucket does not exist</Message><BucketName>nowhere</BucketName>"
    "<RequestId>7a62c49f</RequestId></Error>\x1b[0m\n   1: at src/lib.rs:42\n"
)


def test_one_line_collapses_lines_colour_and_xml() -> None:
    text = one_line(S3_ANSWER, colour=False)
    assert "\n" not in text and "\x1b" not in text and "<" not in text
    assert "NoSuchBucket: The specified bucket does not exist" in text
    assert one_line("a\n  b\tc", colour=False) == "a; b c"
    assert "\x1b[91m" in one_line("\x1b[91mred\x1b[0m", colour=True)


def test_the_export_to_a_missing_bucket_says_it_in_one_line(
    tmp_path: Path,
    s3_server: dict[str, str],  # noqa: F811 (the export tests' fixture, imported)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with serve(seed=0, devices=4, clock=NOW) as sb:
        msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:1]
        job = tmp_path / "job.toml"
        text = job_text("s3://no-such-bucket-here/t", sb.account_id, msisdns, format='"delta"')  # type: ignore[arg-type]
        job.write_text(text, encoding="utf-8")
        for name, value in s3_server.items():
            monkeypatch.setenv(name, value)
        done: Any = run_cli(job, "--only", "usage", "--until", "2024-03-01", sb=sb)
    assert done.returncode != 0
    err = done.stderr
    print(err, file=sys.stderr)
    assert err.count("\n") == 1, err
    assert "\x1b" not in err and "<?xml" not in err and "Traceback" not in err, err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["report", "--accept", "xml", "--account-id", "A"], "invalid choice: 'xml'"),
        (["report", "--granularity"], "expected one argument"),
        (["export"], "required: JOBFILE"),
        (["no-such-command"], "invalid choice: 'no-such-command'"),
    ],
)
def test_a_usage_error_is_one_line_and_a_pointer_to_help(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from edgereports.cli.main import main

    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err and "--help'" in err, err


REPORT = ["--preset", "time_usage_enterprise", "--account-id", "A"]
COMPARE_PREVIOUS = ["--compare", "previous_year", "--csv", "out.csv"]
COMPARE_9999 = ["--compare", "9999-12-01..9999-12-03", "--csv", "out.csv"]
# argv, what stderr says; each refused before any request, and nothing written
BAD_INPUTS: dict[str, tuple[list[str], str]] = {
    "a range in the year 9999": (
        ["report", *REPORT, "--start", "9999-12-30", "--end", "9999-12-31", "--csv", "out.csv"],
        "start_date_time '9999-12-30T00:00:00+00:00' must lie in the years 1970 to 8999",
    ),
    "a request ending in the year 9999": (
        ["query", *REPORT, "--start", "2022-07-01", "--end", "9999-12-31"],
        "end_date_time '9999-12-31T00:00:00+00:00' must lie in the years 1970 to 8999",
    ),
    "the previous year of 1970": (
        ["report", *REPORT, "--start", "1970-01-02", "--end", "1970-01-05", *COMPARE_PREVIOUS],
        "compare='previous_year' of this range reaches outside the years 1970 to 8999",
    ),
    "a compared range in the year 9999": (
        ["report", *REPORT, "--start", "2022-07-01", "--end", "2022-07-03", *COMPARE_9999],
        "compare: start_date_time '9999-12-01T00:00:00+00:00' must lie in the years 1970",
    ),
    "a sandbox port beyond 65535": (
        ["sandbox", "--port", "99999"],
        "argument --port: must be a TCP port from 0 to 65535, got '99999'",
    ),
    "a page of no days": (
        ["page", "job.toml", "--last", "0d", "--out", "page.html"],
        "--last must be a number of days, weeks or hours back, at least 1 (7d, 4w, 24h), got '0d'",
    ),
}


@pytest.mark.parametrize("case", BAD_INPUTS, ids=list(BAD_INPUTS))
def test_a_bad_input_is_one_line_exit_2_and_writes_nothing(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from edgereports.cli.main import main

    argv, said = BAD_INPUTS[case]
    job = tmp_path / "job.toml"
    job.write_text(job_text(str(tmp_path / "out"), "A", ["919876543210"]), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EDGEREPORTS_API_KEY", "a-key")
    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", "http://127.0.0.1:9")  # a closed port
    try:
        status = main(argv)
    except SystemExit as exc:  # an option argparse refuses
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.count("\n") == 1 and said in err and "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.toml"]
