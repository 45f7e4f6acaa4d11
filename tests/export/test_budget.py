"""One request budget per API key and host: processes share ``rate_limit`` through a file.

Two unit processes against the sandbox in rate-limit mode at 20 requests per second, each
job's ``rate_limit`` at 18 (90%): the budget belongs to the key, so two processes of one job,
and two processes of two job files with one key, stay within the limit between them and no
request is answered 429. The same two jobs with their budgets in two directories (a budget
each, 36 requests per second between them) are refused at once: the sharing is what keeps them
under.
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
from edgereports.export.client import make_client
from edgereports.http import SharedPacer, budget_file
from edgereports.sandbox import Limits, serve
from tests.export.conftest import NOW

LIMIT = 20
COMMAND = [sys.executable, "-m", "edgereports.cli", "export"]
UNITS = [("2024-02-26", "2024-03-02"), ("2024-03-02", "2024-03-07")]


@pytest.fixture
def sb() -> Iterator[Any]:
    with serve(seed=0, devices=8, clock=NOW, limits=Limits(requests_per_second=LIMIT)) as h:
        yield h


def job_file(path: Path, sb: Any, output: Path, budget_dir: str = "budgets") -> Path:
    """Four subscribers per DAY in one-day windows: one request per subscriber and day."""
    msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:4]
    listed = ", ".join(f'"{m}"' for m in msisdns)
    path.write_text(
        f"""
output = "{output}"
max_workers = 4
rate_limit = {0.9 * LIMIT}
budget_dir = "{budget_dir}"
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


@pytest.mark.slow
def test_two_processes_of_one_job_share_its_budget_and_get_no_429(tmp_path: Path, sb: Any) -> None:
    job = job_file(tmp_path / "job.toml", sb, tmp_path / "out")
    done = run_units(sb, [job, job])
    assert [d.returncode for d in done] == [0, 0], [d.stderr for d in done]
    assert sb.request_count() == 2 * 5 * 4  # two units x 5 days x 4 subscribers, no retry
    assert sb.rate_limited() == 0
    path = budget_file(sb.api_key, sb.reporting_url, tmp_path / "budgets")
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([path.name, "salt"])
    for file in path.parent.iterdir():
        assert sb.api_key not in file.read_bytes().decode("latin-1")


@pytest.mark.slow
def test_two_job_files_with_one_key_share_its_budget_and_get_no_429(
    tmp_path: Path, sb: Any
) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    jobs = [
        job_file(tmp_path / "one" / "job.toml", sb, tmp_path / "out1", str(tmp_path / "b")),
        job_file(tmp_path / "two" / "job.toml", sb, tmp_path / "out2", str(tmp_path / "b")),
    ]
    done = run_units(sb, jobs)
    assert [d.returncode for d in done] == [0, 0], [d.stderr for d in done]
    assert sb.request_count() == 2 * 5 * 4
    assert sb.rate_limited() == 0


@pytest.mark.slow
def test_two_jobs_with_a_budget_each_go_over_the_limit(tmp_path: Path, sb: Any) -> None:
    jobs = [
        job_file(tmp_path / f"job{i}.toml", sb, tmp_path / f"out{i}", f"budgets{i}") for i in (1, 2)
    ]
    done = run_units(sb, jobs)
    assert [d.returncode for d in done] == [0, 0], [d.stderr for d in done]  # retried
    assert sb.rate_limited() > 0


def test_the_budget_directory_comes_from_the_job_else_the_environment(
    tmp_path: Path, sb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", sb.reporting_url)
    monkeypatch.setenv("EDGEREPORTS_API_KEY", sb.api_key)
    monkeypatch.setenv("EDGEREPORTS_BUDGET_DIR", str(tmp_path / "from-env"))
    job = load_job(job_file(tmp_path / "job.toml", sb, tmp_path / "out", "relative/budgets"))
    assert job.budget_dir == tmp_path / "relative" / "budgets"  # relative to the job file
    expected = budget_file(sb.api_key, sb.reporting_url, tmp_path / "relative" / "budgets")
    with make_client(job) as client:
        pacer = client._http.pacer
        assert isinstance(pacer, SharedPacer) and pacer.path == expected
    plain = tmp_path / "plain.toml"
    plain.write_text(
        job_file(tmp_path / "x.toml", sb, tmp_path / "out")
        .read_text()
        .replace('budget_dir = "budgets"\n', ""),
        encoding="utf-8",
    )
    with make_client(load_job(plain)) as client:
        pacer = client._http.pacer
        assert isinstance(pacer, SharedPacer) and pacer.path.parent == tmp_path / "from-env"


@pytest.mark.parametrize("bad", ["", "  ", 5, ["a"]])
def test_a_budget_dir_that_is_not_a_directory_name_is_refused(tmp_path: Path, bad: object) -> None:
    from edgereports.errors import ConfigError
    from edgereports.export.job import parse_job

    data = {"output": "out", "budget_dir": bad, "reports": [{"name": "s", "preset": "x"}]}
    with pytest.raises(ConfigError, match=r"budget_dir must name a directory"):
        parse_job(data, source=tmp_path / "job.toml")
