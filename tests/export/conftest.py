"""Helpers of the export tests: a job against a sandbox, and the frame a whole-range fetch gives."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from edgereports.export import Job, load_job, read_export
from edgereports.export.reports import ReportJob
from edgereports.reporting import ReportingClient

#: The example job file shipped in examples/.
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "export-job.toml"
#: The sandbox's "now" in these tests (a Sunday morning).
NOW = datetime(2024, 3, 10, 6, 30, tzinfo=UTC)
KEYS = ["metric", "aggregation", "percentile"]


def job_text(
    root: Path,
    account_id: str,
    msisdns: list[str],
    *,
    start: str = "2024-02-26",
    max_workers: int = 3,
    **extra: str,
) -> str:
    """A job of three reports: subscribers per DAY, subscribers per HOUR, SIM counts."""
    listed = ", ".join(f'"{m}"' for m in msisdns)
    head = "\n".join(f"{k} = {v}" for k, v in extra.items())
    return f"""
output = "{root}"
max_workers = {max_workers}
{head}

[defaults]
account_id = "{account_id}"
start = {start}
lookback = "2d"

[[reports]]
name = "usage"
preset = "time_usage_subscriber"
params = {{ msisdn = [{listed}] }}
window_days = 4

[[reports]]
name = "bytes"
preset = "byte_usage_subscriber"
params = {{ msisdn = [{listed}] }}
window_days = 3

[[reports]]
name = "sims"
preset = "active_sim_count"
window_days = 5
"""


def write_job(tmp_path: Path, sb: Any, subscribers: int = 3, **extra: Any) -> Job:
    """Write a job file for the sandbox ``sb`` and load it."""
    msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:subscribers]
    path = tmp_path / "job.toml"
    path.write_text(job_text(tmp_path / "out", sb.account_id, msisdns, **extra), encoding="utf-8")
    return load_job(path)


def client_for(sb: Any, **options: Any) -> ReportingClient:
    """A client of the sandbox (no bar; quick retries)."""
    options.setdefault("max_workers", 3)
    options.setdefault("backoff", 0.01)
    return ReportingClient(sb.api_key, sb.reporting_url, progress=False, **options)


def canonical(frame: pd.DataFrame, time_column: str) -> pd.DataFrame:
    """Rows in the order the export writes them: bucket, dimensions, metric, aggregation."""
    fixed = {
        time_column,
        "account_id",
        "metric",
        "aggregation",
        "percentile",
        "value",
        "physical",
        "esim",
    }
    dims = [c for c in frame.columns if c not in fixed]
    order = [time_column, *dims, *(c for c in KEYS if c in frame.columns)]
    out = frame.sort_values(order, kind="stable", na_position="first").reset_index(drop=True)
    out.attrs = {}
    return out


def whole_fetch(
    client: ReportingClient, report: ReportJob, start: datetime, end: datetime
) -> pd.DataFrame:
    """One fetch of ``[start, end)`` (the service may add a bucket at the end: dropped)."""
    frame = client.fetch(report.for_window(start, end))
    stamps = frame[report.time_column]
    lo, hi = pd.Timestamp(start), pd.Timestamp(end)
    if report.time_column == "date":
        lo, hi = lo.tz_localize(None), hi.tz_localize(None)
    return canonical(frame[(stamps >= lo) & (stamps < hi)], report.time_column)


def assert_complete(job: Job, client: ReportingClient, end: dict[str, datetime]) -> None:
    """Every report's dataset equals one whole-range fetch, with no duplicate key."""
    for report in job.reports:
        got = read_export(job.output, report.name)
        assert got.attrs["shape"] == report.shape
        got = canonical(got, report.time_column)
        expected = whole_fetch(client, report, report.start, end[report.name])
        assert len(got) > 0
        pd.testing.assert_frame_equal(got, expected)
        keys = [c for c in got.columns if c not in ("value", "physical", "esim")]
        assert not got.duplicated(keys).any(), report.name


# ``edgereports export`` whose run_export gets a checkpoint that kills the process at a random
# moment: a timer of a random delay (0 to 0.2 s) started when it is about to commit its N-th
# window, N drawn from 1..WINDOWS (argv[1] is SEED:WINDOWS, the rest the command's arguments)
_KILL_AT_RANDOM = """
import os, random, signal, sys, threading
from unittest import mock
import edgereports.export.run as run
from edgereports.cli.export import main
seed, _, windows = sys.argv[1].partition(":")
rng = random.Random(int(seed))
left, delay = [rng.randint(1, int(windows))], rng.uniform(0, 0.2)
def checkpoint(name):
    if name == "before-commit":
        left[0] -= 1
        if left[0] == 0:
            threading.Timer(delay, os.kill, (os.getpid(), signal.SIGKILL)).start()
real = run.run_export
patched = lambda *a, **k: real(*a, checkpoint=checkpoint, **k)
with mock.patch("edgereports.export.run_export", patched):
    sys.exit(main(sys.argv[2:]))
"""


def run_cli(
    job: Path, *args: str, sb: Any, hook: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``edgereports export JOB ARGS`` in a subprocess (``python -m edgereports.cli export``),
    connected through the environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGEREPORTS_")}
    env["EDGEREPORTS_REPORTING_URL"] = sb.reporting_url
    env["EDGEREPORTS_API_KEY"] = sb.api_key
    command = [sys.executable, "-m", "edgereports.cli", "export"]
    if hook:  # the same command, killed at a random moment (hook: SEED:WINDOWS)
        command = [sys.executable, "-c", _KILL_AT_RANDOM, hook]
    return subprocess.run(
        [*command, str(job), "--no-progress", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


# --- object storage: an S3-compatible server (moto) on loopback, for the Delta tests ----------

BUCKET = "edgereports-test"


@pytest.fixture(scope="session")
def s3_server() -> Iterator[dict[str, str]]:
    """moto's S3 server in a subprocess on 127.0.0.1 (conditional PUT honoured), one bucket.

    Yields the settings as ``deltalake``/``object_store`` read them from the environment. A
    subprocess, not moto's in-process thread: delta-rs may hold the GIL while it waits on S3.
    """
    import boto3

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    settings = {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing-secret-not-real",
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
    }
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("the moto S3 server did not start") from None
                time.sleep(0.1)
        s3 = boto3.client(
            "s3",
            endpoint_url=settings["AWS_ENDPOINT_URL"],
            aws_access_key_id=settings["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=settings["AWS_SECRET_ACCESS_KEY"],
            region_name=settings["AWS_REGION"],
        )
        s3.create_bucket(Bucket=BUCKET)
        yield settings
    finally:
        server.terminate()
        server.wait(10)


@pytest.fixture
def s3(s3_server: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """A fresh prefix of the bucket (``s3://BUCKET/<test>``), the settings in the environment."""
    for name, value in s3_server.items():
        monkeypatch.setenv(name, value)
    return f"s3://{BUCKET}/{tmp_path.name}"
