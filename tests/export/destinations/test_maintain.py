"""Maintenance beside a reader, in every destination: fewer files, the same rows, readers of
the table (and, in the table formats, of an older snapshot) unaffected; with a retention of
0 hours the store keeps only the files the table uses (stray files of killed writers too)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pandas as pd

from edgereports.export import Job, load_job, maintain, run_export, run_unit
from tests.export.conftest import NOW, client_for, run_cli
from tests.export.destinations.conftest import (
    Store,
    Where,
    data_files_stored,
    data_files_used,
    frame_of,
    iceberg_table,
    job_in,
)

DAYS = ("2024-03-01", "2024-03-02", "2024-03-03")
#: Where a killed writer of each format leaves a file no table names.
STRAY = {
    "parquet": "day=2024-03-01/.part.parquet.killed.tmp",
    "delta": "day=2024-03-01/part-00000-killed.parquet",
    "iceberg": "data/day=2024-03-01/killed.parquet",
}


def old_snapshot(job: Job) -> Any:
    """A reader of the table as it is now (``None`` for Parquet: no snapshots)."""
    if job.format == "delta":
        from deltalake import DeltaTable

        table = DeltaTable(job.location("usage"))
        return lambda: table.to_pyarrow_table().num_rows
    if job.format == "iceberg":
        table = iceberg_table(job, "usage")
        snapshot = table.current_snapshot().snapshot_id
        return lambda: table.scan(snapshot_id=snapshot).to_arrow().num_rows
    return None


def test_maintain_beside_a_reader_keeps_the_rows_and_leaves_one_file_a_day(
    tmp_path: Path, sb: Any, where: Where
) -> None:
    job = job_in(tmp_path, sb, where, start="2024-03-01")
    client = client_for(sb)
    for day in (*DAYS, DAYS[0]):  # one day twice: a file the table formats dropped
        assert run_unit(job, "usage", day, client=client, now=NOW).ok
    # a third subscriber, backfilled alone: a second file in each day of the table formats
    assert run_export(job, only="usage", client=client, now=NOW, until="2024-03-04").ok
    job = job_in(tmp_path, sb, where, subscribers=3, start="2024-03-01")
    summary = run_export(job, only="usage", client=client, now=NOW, until="2024-03-04")
    assert summary.ok and summary.reports[0].plan.backfill, str(summary)
    before = frame_of(job, "usage")
    assert before["msisdn"].nunique() == 3
    older = old_snapshot(job)
    files_before = len(data_files_used(job, "usage"))

    reads: list[pd.DataFrame] = []
    done: list[Any] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            done.extend(maintain(job, only="usage"))
        except BaseException as exc:  # reported below
            errors.append(exc)

    worker = threading.Thread(target=work)
    worker.start()
    while worker.is_alive() or not reads:  # a reader keeps reading while it runs
        reads.append(frame_of(job, "usage"))
    worker.join()
    assert not errors, errors
    for got in reads:
        pd.testing.assert_frame_equal(got, before)
    [result] = done
    assert (result.files_before, result.rows) == (files_before, len(before))
    assert result.files_after == len(data_files_used(job, "usage")) == len(DAYS)  # one a day
    if older is not None:  # within the retention (7 days), an older snapshot still reads
        assert older() == len(before)

    # retention 0 h: the store keeps only what the table uses, a killed writer's file too
    store = Store(job, "usage")
    store.put(STRAY[job.format], b"left by a killed writer")
    assert job.source is not None
    text = job.source.read_text(encoding="utf-8")
    job.source.write_text('retention = "0h"\n' + text, encoding="utf-8")
    cli = run_cli(job.source, "--maintain", "--only", "usage", sb=sb)
    assert cli.returncode == 0, cli.stderr
    assert "usage: " in cli.stdout and "removed" in cli.stdout
    assert data_files_stored(job, "usage") == data_files_used(job, "usage")
    pd.testing.assert_frame_equal(frame_of(job, "usage"), before)
    assert run_export(load_job(job.source), only="usage", client=client, now=NOW).ok
