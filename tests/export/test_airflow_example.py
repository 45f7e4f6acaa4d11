"""The Airflow example runs for real: ``airflow dags test`` of its DAG, in Airflow's own
environment (``make airflow``: Airflow 3 does not share an environment with the project's other
tools), maps one task per unit of the last three days and writes them to a Delta table on an
S3-compatible server (moto on loopback) from the sandbox."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from edgereports.export import load_job, read_export
from edgereports.sandbox import serve
from tests.export.conftest import NOW, canonical, client_for, job_text, whole_fetch

ROOT = Path(__file__).resolve().parents[2]
AIRFLOW = ROOT / ".venv-airflow" / "bin" / "airflow"
EXAMPLE = ROOT / "examples" / "airflow_units.py"
MIDNIGHT = NOW.replace(hour=0, minute=0)

pytestmark = [
    pytest.mark.skipif(
        not AIRFLOW.exists(), reason="Airflow's environment is missing: run make airflow"
    ),
    pytest.mark.slow,  # a DAG run in Airflow's own environment
]


@pytest.fixture
def sb() -> Iterator[Any]:
    with serve(seed=0, devices=8, clock=NOW) as handle:
        yield handle


def _airflow(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(AIRFLOW), *args], env=env, capture_output=True, text=True, timeout=240, check=False
    )


def test_the_airflow_dag_runs_one_task_per_unit(tmp_path: Path, sb: Any, s3: str) -> None:
    msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:2]
    job_path = tmp_path / "job.toml"
    job_path.write_text(job_text(s3, sb.account_id, msisdns, format='"delta"'), encoding="utf-8")
    dags = tmp_path / "dags"
    dags.mkdir()
    source = EXAMPLE.read_text(encoding="utf-8")
    shipped = 'JOB = "/etc/edgereports/nightly.toml"'
    assert shipped in source
    (dags / "airflow_units.py").write_text(source.replace(shipped, f'JOB = "{job_path}"'))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EDGEREPORTS_", "AIRFLOW"))}
    env.update(
        EDGEREPORTS_API_KEY=sb.api_key,
        EDGEREPORTS_REPORTING_URL=sb.reporting_url,
        AIRFLOW_HOME=str(tmp_path / "airflow"),
        AIRFLOW__CORE__DAGS_FOLDER=str(dags),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
    )
    migrated = _airflow(env, "db", "migrate")
    assert migrated.returncode == 0, migrated.stderr[-2000:]
    run = _airflow(env, "dags", "test", "edgereports_units", MIDNIGHT.isoformat())
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    assert sb.api_key not in run.stdout + run.stderr
    job = load_job(job_path)
    start = MIDNIGHT - timedelta(days=3)
    for report in job.reports:  # each report's last three UTC days, one mapped task each
        got = canonical(read_export(s3, report.name), report.time_column)
        expected = whole_fetch(client_for(sb), report, start, MIDNIGHT)
        assert len(got) > 0, report.name
        pd.testing.assert_frame_equal(got, expected)
