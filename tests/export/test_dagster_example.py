"""The Dagster example runs for real: one partition of its asset, materialized in-process, writes
its UTC day of a Delta table on an S3-compatible server (moto on loopback) from the sandbox."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd
import pytest

from edgereports.export import load_job, read_export
from edgereports.sandbox import serve
from tests.export.conftest import NOW, canonical, client_for, job_text, whole_fetch

dagster = pytest.importorskip("dagster", reason="the Dagster example needs dagster (make test)")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dagster_units.py"
DAY = NOW.replace(hour=0, minute=0) - timedelta(days=2)


@pytest.fixture
def sb() -> Iterator[Any]:
    with serve(seed=0, devices=8, clock=NOW) as handle:
        yield handle


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dagster_units", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_partition_of_the_dagster_asset_writes_its_day(
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
    example = _example()
    monkeypatch.setattr(example, "JOB", str(path))
    result = dagster.materialize(
        [example.usage_daily], partition_key=DAY.date().isoformat(), raise_on_error=False
    )
    assert result.success
    job = load_job(path)
    report = job.report("usage_daily")
    got = canonical(read_export(s3, "usage_daily"), report.time_column)
    expected = whole_fetch(client_for(sb), report, DAY, DAY + timedelta(days=1))
    assert len(got) == len(msisdns)  # one DAY bucket per subscriber
    pd.testing.assert_frame_equal(got, expected)
