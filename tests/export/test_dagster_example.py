"""The Dagster example runs for real: one partition of its asset, materialized by Dagster in a
process of its own, writes its UTC day of a Delta table on an S3-compatible server (moto on
loopback) from the sandbox.

Dagster's in-process runs set SIGTERM to what SIGINT does, and a shell that starts a job in the
background (``nohup``, ``&``, cron, many CI runners) ignores SIGINT: run in the test runner's
process, Dagster would leave it ignoring SIGTERM, and every child a later test starts would
inherit that and could not be stopped. So the run has a process of its own, and the test checks
that the runner still stops a child with SIGTERM afterwards.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from edgereports.export import load_job, read_export
from edgereports.sandbox import serve
from tests.export.conftest import NOW, canonical, client_for, job_text, whole_fetch

pytest.importorskip("dagster", reason="the Dagster example needs dagster (make test)")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dagster_units.py"
DAY = NOW.replace(hour=0, minute=0) - timedelta(days=2)

# materializes one partition of the example's asset: EXAMPLE JOB PARTITION
MATERIALIZE = """if True:
    import importlib.util, sys
    import dagster

    spec = importlib.util.spec_from_file_location("dagster_units", sys.argv[1])
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    example.JOB = sys.argv[2]
    result = dagster.materialize(
        [example.usage_daily], partition_key=sys.argv[3], raise_on_error=False
    )
    sys.exit(0 if result.success else 1)
"""


@pytest.fixture
def sb() -> Iterator[Any]:
    with serve(seed=0, devices=8, clock=NOW) as handle:
        yield handle


def _stops_on_sigterm() -> int:
    """Start a child, send it SIGTERM and return its exit status (killed after 20 s)."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        child.terminate()
        return child.wait(timeout=20)
    finally:
        child.kill()
        child.wait()


def test_a_partition_of_the_dagster_asset_writes_its_day_and_leaves_sigterm_alone(
    tmp_path: Path, sb: Any, s3: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:2]
    path = tmp_path / "job.toml"
    text = job_text(s3, sb.account_id, msisdns, format='"delta"').replace(
        'name = "usage"', 'name = "usage_daily"'
    )
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("EDGEREPORTS_API_KEY", sb.api_key)
    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", sb.reporting_url)
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell leaves a job in the background
    try:
        run = subprocess.run(
            [sys.executable, "-c", MATERIALIZE, str(EXAMPLE), str(path), DAY.date().isoformat()],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert signal.getsignal(signal.SIGTERM) == handlers[1]
        assert _stops_on_sigterm() == -signal.SIGTERM
    finally:
        signal.signal(signal.SIGINT, handlers[0])
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    job = load_job(path)
    report = job.report("usage_daily")
    got = canonical(read_export(s3, "usage_daily"), report.time_column)
    expected = whole_fetch(client_for(sb), report, DAY, DAY + timedelta(days=1))
    assert len(got) == len(msisdns)  # one DAY bucket per subscriber
    pd.testing.assert_frame_equal(got, expected)
