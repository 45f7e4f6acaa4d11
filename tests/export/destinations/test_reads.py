"""A whole export, read back by ``read_export``, DuckDB and polars, in every destination."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from edgereports.export import run_export
from tests.export.conftest import NOW, client_for
from tests.export.destinations.conftest import (
    Where,
    assert_equal_to_fetch,
    duckdb_frame,
    job_in,
    polars_frame,
    records,
)

MIDNIGHT = NOW.replace(hour=0, minute=0)


# duckdb's .df() calls DataFrame.drop(inplace=True), deprecated in pandas 3.1
@pytest.mark.filterwarnings("ignore:The inplace keyword")
def test_an_export_and_its_rerun_equal_one_whole_fetch_in_three_readers(
    tmp_path: Path, sb: Any, where: Where
) -> None:
    job = job_in(tmp_path, sb, where)
    summary = run_export(job, client=client_for(sb), now=NOW)
    assert summary.ok, str(summary)
    assert "testing-secret" not in str(summary)
    ends = {"usage": MIDNIGHT, "sims": MIDNIGHT, "bytes": NOW.replace(minute=0)}
    assert {r.name: r.watermark_after for r in summary.reports} == ends  # the tables say so
    for report in job.reports:
        key = report.time_column
        ours = assert_equal_to_fetch(job, sb, report.name, report.start, ends[report.name])
        columns = list(ours.columns)
        expected = records(ours, key, columns)
        for reader in (duckdb_frame, polars_frame):
            other = reader(job, report.name)
            day = pd.to_datetime(other[key], utc=True).dt.strftime("%Y-%m-%d")
            held = pd.to_datetime(other["day"].astype(str)).dt.strftime("%Y-%m-%d")
            assert (day == held).all()  # the partition is the bucket's day
            assert records(other, key, columns) == expected, reader.__name__

    again = run_export(job, client=client_for(sb), now=NOW)
    assert again.ok and [r.plan.reason for r in again.reports] == ["incremental"] * 3
    for report in job.reports:
        assert_equal_to_fetch(job, sb, report.name, report.start, ends[report.name])
