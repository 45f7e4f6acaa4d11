"""The suite that runs every destination through the same cases.

``where`` is each destination and store: Parquet, Delta and Iceberg on a local disk (Iceberg
with its default SQLite catalog), Delta and Iceberg on an S3-compatible server (moto) on
loopback. The helpers read a table back with a second and third reader (DuckDB and polars,
besides ``read_export``) and list the files a table keeps on its store.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import pandas as pd
import pytest

from edgereports.errors import InputError
from edgereports.export import Job, load_job, read_export
from edgereports.sandbox import serve
from tests.export.conftest import BUCKET, NOW, canonical, client_for, job_text, whole_fetch

#: Every destination, on a local disk and (the table formats) on object storage.
PLACES = ["parquet", "delta", "iceberg", "delta-s3", "iceberg-s3"]


class Where(NamedTuple):
    """A destination (the job's ``format``) and where its tables go (``output``)."""

    fmt: str
    output: str

    @property
    def on_s3(self) -> bool:
        return self.output.startswith("s3://")


@pytest.fixture(params=PLACES)
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Where:
    """Every destination: on local disk, and the table formats on moto's S3."""
    if request.param.endswith("-s3"):
        return Where(request.param.removesuffix("-s3"), str(request.getfixturevalue("s3")))
    return Where(request.param, str(tmp_path / "out"))


@pytest.fixture
def sb() -> Iterator[Any]:
    """A sandbox of its own per test."""
    with serve(seed=0, devices=8, clock=NOW) as handle:
        yield handle


def job_in(tmp_path: Path, sb: Any, where: Where, subscribers: int = 2, **extra: Any) -> Job:
    """The export tests' job (usage per DAY, bytes per HOUR, SIM counts) in ``where``."""
    msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:subscribers]
    path = tmp_path / "job.toml"
    extra.setdefault("format", f'"{where.fmt}"')
    text = job_text(where.output, sb.account_id, msisdns, **extra)  # type: ignore[arg-type]
    path.write_text(text, encoding="utf-8")
    return load_job(path)


def frame_of(job: Job, name: str) -> pd.DataFrame:
    """The report's rows as ``read_export`` gives them through the job file, canonical."""
    assert job.source is not None  # through the job file: its catalog and store
    return canonical(read_export(job.source, name), job.report(name).time_column)


def assert_equal_to_fetch(
    job: Job, sb: Any, name: str, start: datetime, end: datetime
) -> pd.DataFrame:
    """The report's table equals one whole-range fetch, with no duplicate key; returns it."""
    got = frame_of(job, name)
    expected = whole_fetch(client_for(sb), job.report(name), start, end)
    assert len(got) > 0
    pd.testing.assert_frame_equal(got, expected)
    keys = [c for c in got.columns if c not in ("value", "physical", "esim")]
    assert not got.duplicated(keys).any(), name
    return got


def assert_whole_days(job: Job, sb: Any, name: str, start: datetime, end: datetime) -> int:
    """Every day the table holds equals that day of one whole-range fetch (a run cut short
    leaves days old or new, never a mix); returns the days held."""
    report = job.report(name)
    key = report.time_column
    try:
        got = frame_of(job, name)
    except InputError:  # nothing of it written yet (Parquet: no directory)
        return 0
    expected = whole_fetch(client_for(sb), report, start, end)
    days = sorted(set(got[key].dt.date))
    for day in days:
        mine = got[got[key].dt.date == day].reset_index(drop=True)
        theirs = expected[expected[key].dt.date == day].reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, theirs, obj=f"{name} {day}")
    return len(days)


# --- the other readers ------------------------------------------------------------------------


def duckdb_frame(job: Job, name: str) -> pd.DataFrame:
    """The report's table as DuckDB reads it (with ``day``)."""
    import duckdb

    location = job.location(name)
    connection = duckdb.connect()
    if job.format == "parquet":
        sql = f"SELECT * FROM read_parquet('{location}/*/*.parquet', hive_partitioning = true)"
        return connection.sql(sql).to_arrow_table().to_pandas()
    if job.format == "delta":
        from deltalake import DeltaTable

        connection.register("report", DeltaTable(location).to_pyarrow_dataset())
    else:
        connection = iceberg_table(job, name).scan().to_duckdb("report", connection)
    return connection.sql("SELECT * FROM report").to_arrow_table().to_pandas()


def polars_frame(job: Job, name: str) -> pd.DataFrame:
    """The report's table as polars reads it (with ``day``)."""
    import polars as pl

    location = job.location(name)
    if job.format == "parquet":
        frame = pl.read_parquet(f"{location}/*/*.parquet", hive_partitioning=True)
    elif job.format == "delta":
        frame = pl.read_delta(location)
    else:
        frame = pl.scan_iceberg(iceberg_table(job, name), reader_override="pyiceberg").collect()
    return frame.to_pandas()


def iceberg_table(job: Job, name: str) -> Any:
    """The report's Iceberg table, loaded from the job's catalog."""
    from edgereports.export.iceberg.catalog import catalog_of

    return catalog_of(job, job.storage_options()).load_table(("edgereports", name))


def table_bytes(job: Job, name: str) -> int:
    """The bytes of the data files a table format's current snapshot holds."""
    if job.format == "iceberg":
        table = iceberg_table(job, name)
        return sum(table.inspect.files().column("file_size_in_bytes").to_pylist())
    from deltalake import DeltaTable

    actions = DeltaTable(job.location(name)).get_add_actions(flatten=True)
    return sum(actions.column("size_bytes").to_pylist())


def records(frame: pd.DataFrame, key: str, columns: list[str]) -> list[tuple[object, ...]]:
    """Rows as plain tuples in a fixed order: bucket as a UTC timestamp, nulls as None."""
    frame = frame.copy()
    stamps = pd.to_datetime(frame[key], utc=True)
    frame[key] = stamps.dt.tz_localize(None) if key == "date" else stamps
    frame = canonical(frame[columns], key)
    return [
        tuple(None if pd.isna(v) else (float(v) if isinstance(v, int | float) else v) for v in row)
        for row in frame.itertuples(index=False)
    ]


# --- the files on a table's store -------------------------------------------------------------


class Store:
    """The files under one report's location, on a local disk or on the S3 server."""

    def __init__(self, job: Job, name: str) -> None:
        self.location = job.location(name).rstrip("/")
        self.s3 = self.location.startswith("s3://")

    def _client(self) -> Any:
        import os

        import boto3

        return boto3.client(
            "s3",
            endpoint_url=os.environ["AWS_ENDPOINT_URL"],
            aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
            region_name=os.environ["AWS_REGION"],
        )

    def files(self) -> set[str]:
        """Every file's path relative to the location."""
        if not self.s3:
            base = Path(self.location)
            return {str(p.relative_to(base)) for p in base.rglob("*") if p.is_file()}
        prefix = urlsplit(self.location).path.lstrip("/") + "/"
        pages = (
            self._client().get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
        )
        return {o["Key"][len(prefix) :] for page in pages for o in page.get("Contents", [])}

    def put(self, relative: str, data: bytes) -> None:
        """Write a file at ``relative`` (a stray file: what a killed writer leaves)."""
        if not self.s3:
            path = Path(self.location) / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            return
        key = urlsplit(self.location).path.lstrip("/") + "/" + relative
        self._client().put_object(Bucket=BUCKET, Key=key, Body=data)

    def relative(self, path: str) -> str:
        """A path the table names (absolute, or a URI), relative to the location."""
        parts = urlsplit(path)
        full = f"{parts.netloc}{parts.path}" if parts.scheme not in ("", "file") else parts.path
        base = urlsplit(self.location)
        root = f"{base.netloc}{base.path}" if self.s3 else self.location
        return full[len(root) :].lstrip("/") if full.startswith(root) else path


def data_files_used(job: Job, name: str) -> set[str]:
    """The data files the report's table uses now, relative to its location."""
    store = Store(job, name)
    location = job.location(name)
    if job.format == "parquet":
        from edgereports.export.parquet.writer import partitions

        return {store.relative(str(p)) for p in partitions(Path(location)).values()}
    if job.format == "delta":
        from deltalake import DeltaTable

        return {store.relative(uri) for uri in DeltaTable(location).file_uris()}
    table = iceberg_table(job, name)
    return {store.relative(p) for p in table.inspect.files().column("file_path").to_pylist()}


def data_files_stored(job: Job, name: str) -> set[str]:
    """The data files on the store under the report's location (not the logs' or metadata's
    own files), relative to it."""
    names = Store(job, name).files()
    return {
        n
        for n in names
        if n.endswith((".parquet", ".tmp"))
        and not n.startswith(("_delta_log/", "metadata/"))
        and "_state" not in n
    }


def midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=NOW.tzinfo)
