"""Iceberg as a destination: a table per report, partitioned by ``day``, in a SQL catalog.

The table and its writes are :mod:`.table`'s, its maintenance :mod:`.maintain`'s. No lock:
the catalog commits each transaction or refuses it. Reading goes through the job's catalog,
or (a local table without its job) through the table's newest metadata file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from ..._dependencies import lazy_import
from ...errors import ConfigError, redact
from ...query.versions import stamps_at_end
from ..bounds import bounds_filter, read_bounds
from ..days import DAY_COLUMN
from ..destination import ReadBack
from ..formats import FORMATS
from ..job import Job
from ..reports import ReportJob
from ..summary import Maintenance
from .catalog import NAMESPACE, catalog_of, file_io_properties, require_pyiceberg
from .maintain import maintain_table
from .table import IcebergReport, open_table, recorded_description

_expr = lazy_import("pyiceberg.expressions", pip="edgereports[iceberg]")
_exceptions = lazy_import("pyiceberg.exceptions", pip="edgereports[iceberg]")
_tables = lazy_import("pyiceberg.table", pip="edgereports[iceberg]")

__all__ = ["IcebergDestination"]


def _latest_metadata(location: str) -> str | None:
    """The newest metadata file of a local table (for a read without its catalog)."""
    found = sorted(
        (Path(location) / "metadata").glob("*.metadata.json"),
        key=lambda p: (
            int(p.name.split("-", 1)[0]) if p.name[0].isdigit() else -1,
            p.stat().st_mtime,
        ),
    )
    return str(found[-1]) if found else None


class IcebergDestination:
    """An Iceberg table per report (``format = "iceberg"``; the ``iceberg`` extra)."""

    format = FORMATS["iceberg"]

    @property
    def write_errors(self) -> tuple[type[BaseException], ...]:
        """A store's refusal, bad data, or a commit the catalog refused."""
        require_pyiceberg()
        return (OSError, ValueError, _exceptions.CommitFailedException)

    def open(
        self,
        job: Job,
        report: ReportJob,
        *,
        create: bool,
        full_refresh: bool = False,
        now: datetime | None = None,
    ) -> IcebergReport | None:
        """Open (or create) the report's table; it must hold this report's data."""
        del full_refresh, now
        return open_table(job, report, create=create)

    def lock(
        self, job: Job, reports: Sequence[ReportJob], days: Mapping[str, list[date]] | None
    ) -> contextlib.nullcontext[None]:
        """Nothing: the catalog commits each transaction or refuses it."""
        del job, reports, days
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def guard(self, location: str, secrets: Sequence[str]) -> Iterator[None]:
        """The store's and the catalog's errors as one redacted line."""
        require_pyiceberg()
        try:
            yield
        except OSError as exc:
            raise OSError(redact(str(exc), secrets)) from None
        except (_exceptions.NoSuchTableError, _exceptions.NoSuchNamespaceError) as exc:
            raise ConfigError(f"no Iceberg table at {redact(location)} ({exc})") from None

    def read(
        self,
        job: Job | None,
        location: str,
        start: datetime | None,
        end: datetime | None,
        options: Mapping[str, str] | None,
    ) -> ReadBack:
        """Read the rows of ``[start, end)``: through the job's catalog, or (a local table
        without its job) from its newest metadata file."""
        require_pyiceberg()
        if job is not None:
            name = location.rstrip("/").rsplit("/", 1)[-1]
            table = catalog_of(job, options).load_table((NAMESPACE, name))
        else:
            metadata = _latest_metadata(location)
            if metadata is None:
                raise ConfigError(f"no Iceberg table at {redact(location)}")
            table = _tables.StaticTable.from_metadata(metadata, file_io_properties(options))
        recorded = recorded_description(table)
        definition = recorded.get("definition") or {}
        version = str(recorded.get("api_version") or "v1")
        at_end = stamps_at_end(version)
        names = table.schema().column_names
        shape = "timeseries" if "time_stamp" in names else "sim_count"
        lo, hi = read_bounds(start, end, shape, definition, at_end=at_end)
        where: Any = _expr.AlwaysTrue()
        if lo is not None:  # the partitions: the UTC days of the buckets the rows cover
            first = lo.astimezone(UTC).date().isoformat()
            where = _expr.And(where, _expr.GreaterThanOrEqual(DAY_COLUMN, first))
        if end is not None:
            last = (end - timedelta(microseconds=1)).date().isoformat()
            where = _expr.And(where, _expr.LessThanOrEqual(DAY_COLUMN, last))
        found = table.scan(row_filter=where).to_arrow()
        key = "time_stamp" if shape == "timeseries" else "date"
        expr = bounds_filter(lo, hi, shape, found.schema.field(key).type, at_end=at_end)
        if expr is not None:
            found = found.filter(expr)
        return ReadBack(found.drop_columns([DAY_COLUMN]), shape, definition, version)

    def holds(self, location: str) -> bool:
        """True when ``location`` has Iceberg metadata."""
        return _latest_metadata(location) is not None

    def maintain(self, job: Job, report: ReportJob) -> Maintenance:
        """Compact each day, expire the snapshots older than the retention and delete the
        files no longer used that are older than it (:mod:`.maintain`)."""
        return maintain_table(job, report)
