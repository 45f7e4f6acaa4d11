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
