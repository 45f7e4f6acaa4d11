"""``edgereports export JOB --maintain``: fewer files, the same rows, readers unaffected."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from edgereports.export import load_job, maintain, read_export, run_export, run_unit
from edgereports.sandbox import serve
from tests.export.conftest import NOW, canonical, client_for, run_cli, write_job


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    with serve(seed=0, devices=8, clock=NOW) as handle:
        yield handle


def frame(output: str | Path) -> pd.DataFrame:
    return canonical(read_export(output, "usage"), "time_stamp")


def test_maintain_compacts_a_delta_table_being_read_and_vacuums_past_the_retention(
    tmp_path: Path, sb: Any
) -> None:
    job = write_job(tmp_path, sb, subscribers=2, start="2024-03-01", format='"delta"')
    client = client_for(sb)
    for day in range(1, 10):  # one file per day, and each unit run twice: dead files
        for _ in range(2):
            assert run_unit(job, "usage", f"2024-03-{day:02d}", client=client, now=NOW).ok
    assert run_export(job, only="usage", client=client, now=NOW).ok  # the watermark
    # a third subscriber: backfilled alone, a second file in each day before the lookback
    job = write_job(tmp_path, sb, subscribers=3, start="2024-03-01", format='"delta"')
    assert job.source is not None
    summary = run_export(job, only="usage", client=client, now=NOW)
    assert summary.ok and summary.reports[0].plan.backfill
    location = job.location("usage")
    before = frame(job.output)
    old = DeltaTable(location)  # a reader's snapshot from before
    files_before = len(old.file_uris())
    assert files_before > 9

    reads: list[pd.DataFrame] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            done.extend(maintain(job, only="usage"))
        except BaseException as exc:  # reported below
            errors.append(exc)

    done: list[Any] = []
    worker = threading.Thread(target=work)
    worker.start()
    while worker.is_alive() or not reads:  # readers keep reading while it runs
        reads.append(frame(job.output))
    worker.join()
    assert not errors, errors
    for got in reads:
        pd.testing.assert_frame_equal(got, before)
    [result] = done
    assert (result.files_before, result.rows) == (files_before, len(before))
    assert result.files_after == 9  # one a day
    assert len(DeltaTable(location).file_uris()) == result.files_after
    # the old snapshot still reads: the files it names are younger than the retention (7 d)
    old_rows = old.to_pyarrow_table().num_rows
    assert old_rows == len(before)

    # retention 0 h: the files the table no longer uses go, the rows stay
    text = job.source.read_text(encoding="utf-8")
    job.source.write_text('retention = "0h"\n' + text, encoding="utf-8")
    files_on_disk = len(list(Path(location).rglob("*.parquet")))
    cli = run_cli(job.source, "--maintain", "--only", "usage", sb=sb)
    assert cli.returncode == 0, cli.stderr
    assert "usage: " in cli.stdout and "removed" in cli.stdout
    left = len(list(Path(location).rglob("*.parquet")))
    assert left < files_on_disk
    pd.testing.assert_frame_equal(frame(job.output), before)
    assert run_export(load_job(job.source), only="usage", client=client, now=NOW).ok


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
