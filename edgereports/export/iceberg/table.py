"""One report's Iceberg table: partitioned by ``day``, its marks and description in properties.

Writing a window streams its days: each day's rows become one Parquet data file under the
table's ``data/day=YYYY-MM-DD/`` (a day's rows in memory at a time, no copy of the window).
One transaction then deletes the window's days (or, when only some fan-out values are
written, those values' rows of them), adds the new files in one snapshot and sets the
table's marks; the catalog commits it all or nothing. A commit that lost a race with another
writer is done again on the table as it is then, with the same files. Files written for a
commit that never happened are no table's: maintenance removes them once they are older than
the job's retention (:mod:`.maintain`).

Every commit rewrites the table's metadata with all the snapshots it keeps (and ``pyiceberg``
copies it a few dozen times a transaction), so a write keeps the newest
:data:`KEEP_SNAPSHOTS` snapshots and expires the others, and the table's :data:`PROPERTIES`
bound its manifests and its log of metadata files: a unit costs the same however old the
table is. A reader holding an expired snapshot goes on reading: its files stay until
maintenance deletes the unused ones older than the retention.
"""

from __future__ import annotations

import json
import random
import time
import uuid
import warnings
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

from ..._dependencies import lazy_import
from ..._version import __version__
from ...schema import schema_for
from ..days import DAY_COLUMN, DayRows, conform, with_day
from ..described import check_identity, describe_report, recorded_of, table_dimensions, table_schema
from ..destination import Recorded
from ..job import Job
from ..ledger import Marks, is_day_key, kept_marks, removal_marks
from ..reports import ReportJob
from ..summary import Written
from ..values import Values
from .catalog import NAMESPACE, catalog_of

pa = lazy_import("pyarrow")
pq = lazy_import("pyarrow.parquet")
_expr = lazy_import("pyiceberg.expressions", pip="edgereports[iceberg]")
_exceptions = lazy_import("pyiceberg.exceptions", pip="edgereports[iceberg]")
_snapshot_updates = lazy_import("pyiceberg.table.update.snapshot", pip="edgereports[iceberg]")

__all__ = ["IcebergReport", "open_table", "recorded_description"]

#: The table properties that hold the report's description and the table's marks.
DESCRIPTION = "edgereports.description"
MARKS = "edgereports.marks"
#: The snapshot property that holds what a write records of itself.
FACTS = "edgereports"
#: The table properties the export sets: no retry inside ``pyiceberg`` (the export redoes a
#: refused transaction itself, its marks merged with those committed meanwhile); and what keeps
#: a commit's cost flat as the table ages: appends that merge the manifests once there are ten
#: (``pyiceberg``'s default keeps one more for every commit, which every later commit reads and
#: writes again), and a log of the last ten metadata files (the older ones deleted).
PROPERTIES = {
    "commit.retry.num-retries": "0",
    "commit.manifest-merge.enabled": "true",
    "commit.manifest.min-count-to-merge": "10",
    "write.metadata.previous-versions-max": "10",
    "write.metadata.delete-after-commit.enabled": "true",
}
#: Attempts of a commit that lost a race with another writer.
COMMIT_ATTEMPTS = 8
#: The snapshots a write keeps (the newest; maintenance expires those past the retention).
KEEP_SNAPSHOTS = 10
#: The compression of the data files (Iceberg's default codec).
COMPRESSION = "zstd"


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
        return recorded_of(recorded_description(self.table))

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
        """Write each day's rows as a data file, then replace the days of ``rows`` (the rows
        of ``values`` only, when given) with them in one transaction, with ``marks``."""
        days = rows.days
        where = _expr.And(
            _expr.GreaterThanOrEqual(DAY_COLUMN, days[0].isoformat()),
            _expr.LessThanOrEqual(DAY_COLUMN, days[-1].isoformat()),
        )
        for dim, vals in (values or {}).items():
            where = _expr.And(where, _expr.In(dim, [str(v) for v in vals]))
        dims = tuple(dict.fromkeys((*table_dimensions(self.report), *rows.dimensions)))
        bare = schema_for(self.report.shape).arrow_schema(dims)
        if not _has_columns(self.table, bare):  # a dimension the report did not ask for
            self._commit(lambda tx: _widen(tx, bare))
        target = _file_schema(self.table)
        paths = [  # one day's rows in memory at a time
            self._write_file(day, conform(with_day(part, day), target))
            for day, part in rows.tables()
        ]
        facts = _facts(metadata)

        def transaction(tx: Any) -> None:
            with warnings.catch_warnings():  # a first write of its days deletes nothing
                warnings.filterwarnings("ignore", "Delete operation did not match")
                tx.delete(where, snapshot_properties=facts)
            if paths:  # fresh names: nothing to look up in the table's files
                tx.add_files(paths, snapshot_properties=facts, check_duplicate_files=False)
            tx.set_properties({MARKS: _merged(self, marks)})
            _expire_older(tx, KEEP_SNAPSHOTS)

        added = self._commit(transaction, facts)
        filled = sum(1 for d in days if rows.count(d))
        return Written(rows.rows, filled, len(days) - filled, added, dims)

    def _write_file(self, day: date, table: Any) -> str:
        """Write one day's rows as a new data file under the table's location; its path."""
        path = f"{self.table.location().rstrip('/')}/data/{DAY_COLUMN}={day.isoformat()}/"
        path += f"{uuid.uuid4()}.parquet"
        with self.table.io.new_output(path).create(overwrite=True) as stream:
            pq.write_table(table, stream, compression=COMPRESSION)
        return path

    def remove_outside(self, begin: datetime, end: datetime, *, metadata: Mapping[str, Any]) -> int:
        """Delete the days outside ``[begin, end)`` in one transaction."""
        first, last = begin.astimezone(UTC).date(), (end - timedelta(microseconds=1)).date()
        held = days_held(self.table)
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
            **describe_report(self.report),
            "values": {d: list(v) for d, v in held.items()},
            "retired": {d: list(v) for d, v in retired.items()},
        }
        text = json.dumps(description, sort_keys=True)
        self._commit(lambda tx: tx.set_properties({DESCRIPTION: text}))

    def refresh(self) -> None:
        """Load the commits made since."""
        self.table.refresh()

    def _commit(
        self, transaction: Callable[[Any], None], facts: Mapping[str, str] | None = None
    ) -> int:
        """Run ``transaction`` and commit it; one that lost a race is done again on the table
        as it is then (the marks merged anew: ``pyiceberg``'s own retry, which would set the
        properties as first computed, is off for the export's tables). Returns the bytes of
        the data files added by its snapshots (those carrying ``facts``): the new files, and
        those a delete rewrote without some rows."""
        mine = None if facts is None else facts[FACTS]
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
                summary = snapshot.summary
                if snapshot.snapshot_id in before or summary is None or mine is None:
                    continue
                if summary.get(FACTS) == mine:  # not another writer's, committed meanwhile
                    added += int(summary.get("added-files-size", 0) or 0)
            return added
        return 0  # pragma: no cover - the loop returns or raises


def _expire_older(tx: Any, keep: int) -> None:
    """Expire the table's snapshots but the newest ``keep`` (in ``tx``): every commit writes
    the table's metadata with all its snapshots, so their number bounds a write's cost. A
    reader of an expired snapshot goes on: its files stay until maintenance deletes those no
    snapshot uses that are older than the retention."""
    metadata = tx.table_metadata
    protected = {ref.snapshot_id for ref in metadata.refs.values()}
    ordered = sorted(metadata.snapshots, key=lambda s: s.timestamp_ms, reverse=True)
    older = [s.snapshot_id for s in ordered[keep:] if s.snapshot_id not in protected]
    if older:
        with _snapshot_updates.ExpireSnapshots(tx) as expire:
            expire.by_ids(older)


def _widen(tx: Any, schema: Any) -> None:
    """Add the columns of ``schema`` the table lacks (a dimension the service echoed)."""
    with tx.update_schema() as update:
        update.union_by_name(schema)


def _file_schema(table: Any) -> Any:
    """The Arrow schema of the table's data files as this package writes them: the table's
    columns without Iceberg's field ids (the table maps the files' columns by name)."""
    fields = [f.remove_metadata() for f in table.schema().as_arrow()]
    return pa.schema(fields)


def _merged(table: IcebergReport, marks: Marks) -> str:
    """The table's marks with ``marks`` set (raised, unless exact), as the property's text."""
    merged = table._marks()
    for key, value in marks.values.items():
        old = merged.get(key)
        merged[key] = value if marks.exact or old is None else max(old, value)
    return json.dumps(kept_marks(table.report, merged), sort_keys=True)


def days_held(table: Any) -> set[date]:
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
    """The snapshot properties of a write: ``metadata`` but the request (every snapshot
    kept is in every metadata file: a fleet's request would be copied into each; the table's
    description holds the report's), when, by which version, and an id that tells its
    snapshots from those of other writers."""
    written = datetime.now(UTC).isoformat(timespec="seconds")
    kept = {k: v for k, v in metadata.items() if k != "request"}
    facts = {"written_at": written, **kept, "toolkit_version": __version__}
    return {FACTS: json.dumps({**facts, "commit": uuid.uuid4().hex})}


def recorded_description(table: Any) -> dict[str, Any]:
    """What the table's description property records (report, shape, definition, API
    version, values), or nothing."""
    try:
        recorded = json.loads(table.properties.get(DESCRIPTION, "{}"))
    except ValueError:
        return {}
    return recorded if isinstance(recorded, dict) else {}


def open_table(job: Job, report: ReportJob, *, create: bool) -> IcebergReport | None:
    """Open (or create) the report's table in the job's catalog; it must hold this report's
    data (``None``: missing and not created).

    Raises:
        ConfigError: the table holds another report's data.
    """
    catalog = catalog_of(job, job.storage_options())
    identifier = (NAMESPACE, report.name)
    location = job.location(report.name)
    try:
        table = catalog.load_table(identifier)
    except _exceptions.NoSuchTableError:
        if not create:
            return None
        description = json.dumps(describe_report(report), sort_keys=True)
        try:  # made whole, partitioned, in one commit: units may race to make it
            with (
                catalog.create_table_transaction(
                    identifier,
                    schema=table_schema(report, table_dimensions(report)),
                    location=location,
                    properties={DESCRIPTION: description, MARKS: "{}", **PROPERTIES},
                ) as tx,
                tx.update_spec() as spec,
            ):
                spec.add_identity(DAY_COLUMN)
        except (_exceptions.TableAlreadyExistsError, _exceptions.CommitFailedException):
            pass  # another unit made it first: the load below finds it (or says why not)
        table = catalog.load_table(identifier)
    check_identity(recorded_description(table).get("definition"), report, "Iceberg table", location)
    opened = IcebergReport(table, report, location)
    if any(table.properties.get(k) != v for k, v in PROPERTIES.items()):
        opened._commit(lambda tx: tx.set_properties(PROPERTIES))  # a table made before
    return opened
