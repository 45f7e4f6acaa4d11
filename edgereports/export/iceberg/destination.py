"""Iceberg as a destination: a table per report, partitioned by ``day``, in a SQL catalog.

Writing a window is one transaction: a delete of its days (and of the fan-out values written,
when only some are), an append of its rows a group of days at a time (so no copy of the whole
window is held), and the table's marks and description in its properties; the catalog commits
it all or nothing. A commit that lost a race with another writer is done again on the table
as it is then. Maintenance rewrites each day of several files as one and expires the
snapshots older than the job's ``retention``.
"""

from __future__ import annotations

import contextlib
import json
import random
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from ..._dependencies import lazy_import
from ..._version import __version__
from ...errors import ConfigError, redact
from ...query.versions import stamps_at_end
from ...schema import schema_for
from ..bounds import bounds_filter, read_bounds
from ..days import DAY_COLUMN, DayRows, conform, with_day
from ..destination import ReadBack, Recorded
from ..formats import FORMATS
from ..job import Job
from ..ledger import Marks, is_day_key, kept_marks, removal_marks
from ..reports import ReportJob
from ..summary import Maintenance, Written
from ..values import Values, read_values, split_definition
from .catalog import NAMESPACE, catalog_of, file_io_properties, require_pyiceberg

pa = lazy_import("pyarrow")
pc = lazy_import("pyarrow.compute")
_expr = lazy_import("pyiceberg.expressions", pip="edgereports[iceberg]")
_exceptions = lazy_import("pyiceberg.exceptions", pip="edgereports[iceberg]")
_tables = lazy_import("pyiceberg.table", pip="edgereports[iceberg]")

__all__ = ["IcebergDestination", "IcebergReport"]

#: The table properties that hold the report's description and the table's marks.
DESCRIPTION = "edgereports.description"
MARKS = "edgereports.marks"
#: Attempts of a commit that lost a race with another writer.
COMMIT_ATTEMPTS = 8
#: The rows appended at once: a window is appended a group of whole days at a time.
GROUP_ROWS = 250_000


class IcebergReport:
    """One report's Iceberg table (a :class:`~edgereports.export.destination.Table`)."""

    def __init__(self, table: Any, report: ReportJob, location: str) -> None:
        self.table = table
        self.report = report
        self.location = location

    def _marks(self) -> dict[str, int]:
        raw = json.loads(self.table.properties.get(MARKS, "{}"))
        return {str(k): int(v) for k, v in raw.items()} if isinstance(raw, dict) else {}

    def mark(self, key: str) -> int | None:
        """The mark ``key`` of the table's properties."""
        return self._marks().get(key)

    def recorded(self) -> Recorded:
        """The definition and values the table's properties record."""
        recorded = _recorded(self.table)
        definition = recorded.get("definition")
        held = read_values(recorded.get("values"))
        if held is None and isinstance(definition, dict):
            held = split_definition(definition)[1]
        retired = read_values(recorded.get("retired")) or {}
        return Recorded(definition if isinstance(definition, dict) else None, held, retired)

    def damaged(self) -> list[date]:
        """None: a commit is all or nothing."""
        return []

    def write(
        self,
        rows: DayRows,
        *,
        values: Mapping[str, Sequence[str]] | None,
        marks: Marks,
        metadata: Mapping[str, Any],
    ) -> Written:
        """Replace the days of ``rows`` (the rows of ``values`` only, when given) in one
        transaction, appending a group of days at a time, with ``marks``."""
        days = rows.days
        where = _expr.And(
            _expr.GreaterThanOrEqual(DAY_COLUMN, days[0].isoformat()),
            _expr.LessThanOrEqual(DAY_COLUMN, days[-1].isoformat()),
        )
        for dim, vals in (values or {}).items():
            where = _expr.And(where, _expr.In(dim, [str(v) for v in vals]))
        target = self.table.schema().as_arrow()
        dims = tuple(dict.fromkeys((*_dimensions(self.report), *rows.dimensions)))
        bare = schema_for(self.report.shape).arrow_schema(dims)

        def transaction(tx: Any) -> None:
            if not _has_columns(self.table, bare):  # a dimension the report did not ask for
                with tx.update_schema() as update:
                    update.union_by_name(bare)
            with warnings.catch_warnings():  # a first write of its days deletes nothing
                warnings.filterwarnings("ignore", "Delete operation did not match")
                tx.delete(where, snapshot_properties=_facts(metadata))
            schema = _schema(self.report, dims) if not _has_columns(self.table, bare) else target
            for group in _groups(rows, bare, schema):
                tx.append(group, snapshot_properties=_facts(metadata))
            tx.set_properties({MARKS: _merged(self, marks)})

        added = self._commit(transaction)
        filled = sum(1 for d in days if rows.count(d))
        return Written(rows.rows, filled, len(days) - filled, added, dims)

    def remove_outside(self, begin: datetime, end: datetime, *, metadata: Mapping[str, Any]) -> int:
        """Delete the days outside ``[begin, end)`` in one transaction."""
        first, last = begin.astimezone(UTC).date(), (end - timedelta(microseconds=1)).date()
        held = _days_held(self.table)
        outside = sorted({d for d in held if d < first or d > last})
        marked = {
            d
            for d in (is_day_key(self.report, k) for k in self._marks())
            if d is not None and (d < first or d > last)
        }
        removal = removal_marks(self.report, sorted(set(outside) | marked), end)
        where = _expr.Or(
            _expr.LessThan(DAY_COLUMN, first.isoformat()),
            _expr.GreaterThan(DAY_COLUMN, last.isoformat()),
        )

        def transaction(tx: Any) -> None:
            tx.delete(where, snapshot_properties=_facts(metadata))
            tx.set_properties({MARKS: _merged(self, removal)})

        self._commit(transaction)
        return len(outside)

    def record_values(self, held: Values, retired: Values) -> None:
        """Record the values in the table's description (one commit)."""
        description = {
            **_description(self.report),
            "values": {d: list(v) for d, v in held.items()},
            "retired": {d: list(v) for d, v in retired.items()},
        }
        text = json.dumps(description, sort_keys=True)
        self._commit(lambda tx: tx.set_properties({DESCRIPTION: text}))

    def refresh(self) -> None:
        """Load the commits made since."""
        self.table.refresh()

    def _commit(self, transaction: Callable[[Any], None]) -> int:
        """Run ``transaction`` and commit it; one that lost a race is done again on the table
        as it is then. Returns the bytes of the data files it added."""
        for attempt in range(COMMIT_ATTEMPTS):
            before = {s.snapshot_id for s in self.table.snapshots()}
            try:
                with self.table.transaction() as tx:
                    transaction(tx)
            except _exceptions.CommitFailedException:
                if attempt == COMMIT_ATTEMPTS - 1:
                    raise
                time.sleep(random.uniform(0.05, 0.2) * 2**attempt)  # jitter
                self.table.refresh()
                continue
            added = 0
            for snapshot in self.table.snapshots():
                if snapshot.snapshot_id not in before and snapshot.summary is not None:
                    added += int(snapshot.summary.get("added-files-size", 0) or 0)
            return added
        return 0  # pragma: no cover - the loop returns or raises


def _groups(rows: DayRows, bare: Any, schema: Any) -> Iterator[Any]:
    """The rows of whole days, with ``day``, about :data:`GROUP_ROWS` at a time."""
    group: list[Any] = []
    count = 0
    for day, part in rows.tables():
        group.append(conform(with_day(conform(part, bare), day), schema))
        count += part.num_rows
        if count >= GROUP_ROWS:
            yield pa.concat_tables(group)
            group, count = [], 0
    if group:
        yield pa.concat_tables(group)


def _merged(table: IcebergReport, marks: Marks) -> str:
    """The table's marks with ``marks`` set (raised, unless exact), as the property's text."""
    merged = table._marks()
    for key, value in marks.values.items():
        old = merged.get(key)
        merged[key] = value if marks.exact or old is None else max(old, value)
    return json.dumps(kept_marks(table.report, merged), sort_keys=True)


def _days_held(table: Any) -> set[date]:
    """The days with data files in the table's current snapshot."""
    if table.current_snapshot() is None:
        return set()
    files = table.inspect.files()
    if "partition" not in files.column_names:
        return set()
    return {p[DAY_COLUMN] for p in files.column("partition").to_pylist() if p.get(DAY_COLUMN)}


def _has_columns(table: Any, schema: Any) -> bool:
    names = set(table.schema().column_names)
    return all(f.name in names for f in schema)


def _facts(metadata: Mapping[str, Any]) -> dict[str, str]:
    written = datetime.now(UTC).isoformat(timespec="seconds")
    return {
        "edgereports": json.dumps(
            {"written_at": written, **metadata, "toolkit_version": __version__}
        )
    }


def _recorded(table: Any) -> dict[str, Any]:
    try:
        recorded = json.loads(table.properties.get(DESCRIPTION, "{}"))
    except ValueError:
        return {}
    return recorded if isinstance(recorded, dict) else {}


def _dimensions(report: ReportJob) -> tuple[str, ...]:
    return () if report.shape == "sim_count" else tuple(report.report.dimensions or ())


def _description(report: ReportJob) -> dict[str, Any]:
    definition = json.loads(json.dumps(report.definition()))
    return {
        "report": report.name,
        "shape": report.shape,
        "definition": definition,
        "api_version": report.report.api_version,
    }


def _schema(report: ReportJob, dims: tuple[str, ...]) -> Any:
    base = schema_for(report.shape).arrow_schema(dims)
    return base.append(pa.field(DAY_COLUMN, pa.date32(), nullable=False))


def _open(job: Job, report: ReportJob, *, create: bool) -> IcebergReport | None:
    """Open (or create) the report's table in the job's catalog."""
    catalog = catalog_of(job, job.storage_options())
    identifier = (NAMESPACE, report.name)
    location = job.location(report.name)
    try:
        table = catalog.load_table(identifier)
    except _exceptions.NoSuchTableError:
        if not create:
            return None
        description = json.dumps(_description(report), sort_keys=True)
        try:
            table = catalog.create_table(
                identifier,
                schema=_schema(report, _dimensions(report)),
                location=location,
                properties={DESCRIPTION: description, MARKS: "{}"},
            )
            with table.update_spec() as spec:
                spec.add_identity(DAY_COLUMN)
        except _exceptions.TableAlreadyExistsError:  # another unit made it first
            table = catalog.load_table(identifier)
    recorded = _recorded(table).get("definition")
    identity = split_definition(_description(report)["definition"])[0]
    if recorded is not None and split_definition(recorded)[0] != identity:
        raise ConfigError(
            f"report {report.name!r} asks for other data than the Iceberg table at "
            f"{redact(location)} holds (its request changed: metrics, dimensions, filters or "
            "granularity); give the changed report a new name, or drop the table"
        )
    return IcebergReport(table, report, location)


def _version_of(name: str) -> int:
    head = name.split("-", 1)[0]
    return int(head) if head.isdigit() else -1


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
        return _open(job, report, create=create)

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
        recorded = _recorded(table)
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
        """Rewrite each day of several data files as one, expire the snapshots older than the
        retention (their files no longer used are deleted)."""
        started = time.monotonic()
        opened = _open(job, report, create=False)
        if opened is None:
            return Maintenance(report.name, 0, 0, 0, 0, time.monotonic() - started)
        table = opened.table
        files = table.inspect.files()
        before = files.num_rows
        per_day: dict[date, int] = {}
        for p in files.column("partition").to_pylist():
            per_day[p[DAY_COLUMN]] = per_day.get(p[DAY_COLUMN], 0) + 1
        for day, count in sorted(per_day.items()):
            if count > 1:
                _compact(opened, day)
        older = datetime.now(UTC) - job.retention
        snapshots = len(table.snapshots())
        table.maintenance.expire_snapshots().older_than(older).commit()
        table.refresh()
        expired = snapshots - len(table.snapshots())
        after = table.inspect.files()
        rows = sum(after.column("record_count").to_pylist())
        return Maintenance(
            report.name, before, after.num_rows, expired, rows, time.monotonic() - started
        )


def _compact(opened: IcebergReport, day: date) -> None:
    """Rewrite one day's rows as one data file (one transaction; the rows unchanged)."""
    where = _expr.EqualTo(DAY_COLUMN, day.isoformat())

    def transaction(tx: Any) -> None:
        rows = opened.table.scan(row_filter=where).to_arrow()
        tx.overwrite(rows.cast(opened.table.schema().as_arrow()), overwrite_filter=where)

    opened._commit(transaction)
