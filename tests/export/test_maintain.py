"""``edgereports export JOB --maintain``: fewer files, the same rows, readers unaffected."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from edgereports.export import maintain, read_export, run_export
from edgereports.sandbox import serve
from tests.export.conftest import NOW, canonical, client_for, run_cli, write_job


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    with serve(seed=0, devices=8, clock=NOW) as handle:
        yield handle


def frame(output: str | Path) -> pd.DataFrame:
    return canonical(read_export(output, "usage"), "time_stamp")


def test_maintain_rewrites_parquet_days_of_several_row_groups_as_one(
    tmp_path: Path, sb: Any
) -> None:
    job = write_job(tmp_path, sb, subscribers=3, start="2024-03-05")
    assert run_export(job, only="usage", client=client_for(sb), now=NOW).ok
    before = frame(job.output)
    day = job.output / "usage" / "day=2024-03-06" / "part.parquet"
    table = pq.read_table(day, partitioning=None)
    pq.write_table(table, day, row_group_size=2)  # as a writer of small groups would leave it
    assert pq.read_metadata(day).num_row_groups > 1
    (job.output / "usage" / ".part.parquet.dead.tmp").write_bytes(b"left by a killed run")
    [result] = maintain(job, only="usage")
    assert result.removed == 1 and result.rows == len(before)
    assert pq.read_metadata(day).num_row_groups == 1
    assert pq.read_table(day, partitioning=None).schema.metadata == table.schema.metadata
    pd.testing.assert_frame_equal(frame(job.output), before)
    assert isinstance(table, pa.Table)


def test_maintain_takes_no_fetch_options(tmp_path: Path, sb: Any) -> None:
    job = write_job(tmp_path, sb)
    assert job.source is not None
    cli = run_cli(job.source, "--maintain", "--dry-run", sb=sb)
    assert cli.returncode == 2 and "--maintain fetches nothing" in cli.stderr
