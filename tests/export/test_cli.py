"""``edgereports export`` as cron runs it: a subprocess, settings from the environment.

(Runs killed at random moments, in every destination: tests/export/destinations/test_kills.py.)
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from edgereports.export.parquet.lock import LOCK_FILE
from edgereports.sandbox import serve
from tests.export.conftest import NOW, run_cli, write_job


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    """One sandbox for this module: its clock stays put and no faults are queued."""
    with serve(seed=0, devices=8, clock=NOW) as handle:
        yield handle


@pytest.mark.slow
def test_a_second_run_exits_3_at_once_naming_the_holder(tmp_path: Path, sb: Any) -> None:
    job = write_job(tmp_path, sb)
    assert job.source is not None
    (job.output / "usage").mkdir(parents=True)
    fd = os.open(job.output / "usage" / LOCK_FILE, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, b'{"pid": 4242, "host": "cronbox", "started": "02:00", "job": "n.toml"}')
        started = time.monotonic()
        out = run_cli(job.source, "--until", "2024-03-01", sb=sb)
        assert time.monotonic() - started < 20
    finally:
        os.close(fd)
    assert out.returncode == 3
    assert "pid 4242 on cronbox since 02:00 (job n.toml)" in out.stderr
    assert not list(job.output.glob("*/day=*"))


@pytest.mark.slow
def test_exit_statuses_and_no_key_anywhere(tmp_path: Path, sb: Any) -> None:
    job = write_job(tmp_path, sb, subscribers=1)
    assert job.source is not None
    dry = run_cli(job.source, "--dry-run", "--until", "2024-03-01", sb=sb)
    assert dry.returncode == 0 and "usage: first run" in dry.stdout
    assert not job.output.exists()

    ok = run_cli(job.source, "--until", "2024-03-01", sb=sb)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith(f"export 'job' → {job.output}: ok in ")
    assert [line.split()[0] for line in ok.stdout.splitlines()[2:6]] == [
        "usage",
        "bytes",
        "sims",
        "total",
    ]
    for file in job.output.rglob("*"):
        if file.is_file():
            assert sb.api_key.encode() not in file.read_bytes(), file
    assert sb.api_key not in ok.stdout + ok.stderr

    other = job.source.with_name("other.toml")
    text = job.source.read_text(encoding="utf-8")
    other.write_text(
        text.replace("[defaults]", '[connection]\napi_key_env = "NO_SUCH"\n\n[defaults]', 1),
        encoding="utf-8",
    )
    missing = run_cli(other, "--until", "2024-03-01", sb=sb)
    assert missing.returncode == 2
    assert "no API key; set the environment variable NO_SUCH" in missing.stderr

    bad = job.source.with_name("bad.toml")
    bad.write_text('output = "x"\n[[reports]]\nname = "a"\npreset = "nope"\nstart = 2024-01-01\n')
    out = run_cli(bad, sb=sb)
    assert out.returncode == 2 and "unknown preset 'nope'" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.slow
def test_refused_key_exits_1_and_lists_the_failures(tmp_path: Path, sb: Any) -> None:
    job = write_job(tmp_path, sb, subscribers=1)
    assert job.source is not None
    wrong = dict(sb=_WrongKey(sb))
    out = run_cli(job.source, "--only", "sims", "--until", "2024-03-01", **wrong)
    assert out.returncode == 1
    assert "FAILED" in out.stdout and "AuthError" in out.stdout
    assert "wrong-key-123" not in out.stdout + out.stderr


class _WrongKey:
    """The sandbox's address with a key it refuses."""

    def __init__(self, sb: Any) -> None:
        self.reporting_url = sb.reporting_url
        self.api_key = "wrong-key-123"


def test_json_prints_the_summary_as_one_object_with_the_bytes_each_write_added(
    tmp_path: Path, sb: Any
) -> None:
    import json

    job = write_job(tmp_path, sb, subscribers=1)
    assert job.source is not None
    dry = run_cli(
        job.source, "--dry-run", "--json", "--only", "usage", "--until", "2024-03-01", sb=sb
    )
    assert dry.returncode == 0, dry.stderr
    plan = json.loads(dry.stdout)
    assert plan["dry_run"] is True and plan["reports"][0]["plan"]["reason"] == "first run"
    assert plan["reports"][0]["plan"]["windows"][0]["start"] == "2024-02-26T00:00:00+00:00"
    done = run_cli(job.source, "--json", "--until", "2024-03-01", sb=sb)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert facts["ok"] is True and [r["name"] for r in facts["reports"]] == [
        "usage",
        "bytes",
        "sims",
    ]
    on_disk = sum(p.stat().st_size for p in job.output.rglob("part.parquet"))
    assert facts["bytes_written"] == on_disk > 0  # every file written once
    assert facts["rows"] == sum(r["rows"] for r in facts["reports"]) > 0
    assert facts["reports"][0]["watermark_after"] == "2024-03-01T00:00:00+00:00"
    assert sb.api_key not in done.stdout
