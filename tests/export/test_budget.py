"""One request budget per host: the processes of one job share its ``rate_limit`` through a file.

Two unit processes of one job, the sandbox in rate-limit mode at 20 requests per second and
the job's ``rate_limit`` at 18 (90%): between them they stay within the limit, so no request
is answered 429. The same two units as two jobs (a budget each, 36 requests per second
between them) are refused at once: the sharing is what keeps them under.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from edgereports.export import load_job
from edgereports.export.client import budget_file
from edgereports.sandbox import Limits, serve
from tests.export.conftest import NOW

LIMIT = 20
COMMAND = [sys.executable, "-m", "edgereports.cli", "export"]
UNITS = [("2024-02-26", "2024-03-02"), ("2024-03-02", "2024-03-07")]


@pytest.fixture
def sb() -> Iterator[Any]:
    with serve(seed=0, devices=8, clock=NOW, limits=Limits(requests_per_second=LIMIT)) as h:
        yield h


def job_file(path: Path, sb: Any, output: Path) -> Path:
    """Four subscribers per DAY in one-day windows: one request per subscriber and day."""
    msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:4]
    listed = ", ".join(f'"{m}"' for m in msisdns)
    path.write_text(
        f"""
output = "{output}"
max_workers = 4
rate_limit = {0.9 * LIMIT}
[[reports]]
name = "usage"
preset = "time_usage_subscriber"
params = {{ msisdn = [{listed}] }}
account_id = "{sb.account_id}"
start = 2024-02-26
window_days = 1
""",
        encoding="utf-8",
    )
    return path


def run_units(sb: Any, jobs: list[Path]) -> list[subprocess.CompletedProcess[str]]:
    """One unit process per (job, unit) pair, all at once."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGEREPORTS_")}
    env.update(EDGEREPORTS_REPORTING_URL=sb.reporting_url, EDGEREPORTS_API_KEY=sb.api_key)
    procs = [
        subprocess.Popen(
            [*COMMAND, str(job), "--no-progress", "--from", a, "--until", b],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for job, (a, b) in zip(jobs, UNITS, strict=True)
    ]
    done = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(p.args, p.returncode, out, err))
    return done


def test_two_processes_of_one_job_share_its_budget_and_get_no_429(tmp_path: Path, sb: Any) -> None:
    job = job_file(tmp_path / "job.toml", sb, tmp_path / "out")
    path = budget_file(load_job(job), sb.reporting_url)
    path.unlink(missing_ok=True)
    done = run_units(sb, [job, job])
    assert [d.returncode for d in done] == [0, 0], [d.stderr for d in done]
    assert sb.request_count() == 2 * 5 * 4  # two units x 5 days x 4 subscribers, no retry
    assert sb.rate_limited() == 0
    assert path.is_file() and path.stat().st_size == 8  # the schedule: one number
    assert sb.api_key not in path.read_bytes().decode("latin-1")


def test_two_jobs_with_a_budget_each_go_over_the_limit(tmp_path: Path, sb: Any) -> None:
    jobs = [job_file(tmp_path / f"job{i}.toml", sb, tmp_path / f"out{i}") for i in (1, 2)]
    for job in jobs:
        budget_file(load_job(job), sb.reporting_url).unlink(missing_ok=True)
    done = run_units(sb, jobs)
    assert [d.returncode for d in done] == [0, 0], [d.stderr for d in done]  # retried
    assert sb.rate_limited() > 0
