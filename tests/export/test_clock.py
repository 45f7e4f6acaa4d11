"""An export job on the service's clock: a relative start, and a dry run that plans up to the
service's present (the sandbox's, in 2024), not this machine's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from edgereports.export import run_export
from edgereports.sandbox import serve
from tests.export.conftest import NOW, client_for, run_cli, write_job


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    with serve(seed=0, devices=8, clock=NOW) as handle:
        yield handle


def test_a_relative_start_counts_back_from_the_service_today(tmp_path: Path, sb: Any) -> None:
    job = write_job(tmp_path, sb, subscribers=1, start='"5d"')
    with client_for(sb) as client:
        summary = run_export(job, client=client, only=["usage"])
    assert summary.ok, summary
    (result,) = summary.reports
    # the sandbox's today is 10 March 2024: five whole days before it, and today so far
    assert result.plan.windows[0].start.isoformat() == "2024-03-05T00:00:00+00:00"
    assert result.plan.windows[-1].end <= NOW


def test_a_dry_run_plans_up_to_the_service_present(tmp_path: Path, sb: Any) -> None:
    job = write_job(tmp_path, sb, subscribers=1, start='"3d"')
    assert job.source is not None
    dry = run_cli(job.source, "--dry-run", sb=sb)
    assert dry.returncode == 0, dry.stderr
    assert "2024-03-07" in dry.stdout  # three days before the service's today
    assert "2026" not in dry.stdout and "2025" not in dry.stdout, dry.stdout
    assert not job.output.exists()
