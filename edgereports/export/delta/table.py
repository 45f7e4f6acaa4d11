"""The Delta Lake format of the export: one transactional table per report, local or on S3.

``OUTPUT/<report>`` is a Delta table (the optional extra ``edgereports[delta]``), partitioned by
``day`` (the UTC day of the bucket, a ``date`` column), with the pinned frame schema of
:mod:`edgereports.schema`. ``OUTPUT`` is a local directory or an object-store URI
(``s3://bucket/prefix``; settings and credentials: ``storage.py``).

Writing the UTC days ``[start, end)`` of a report is a commit (or a few: below): an overwrite
with the predicate ``day >= start AND day < end``, so a unit replaces exactly its days, whatever
ran before, and a reader sees the old days or the new ones. The commit also records, for each day,
an application transaction (``edgereports/<report>/<day>``) whose version is the end of the
data written for that day in epoch seconds: the table itself says which days are complete, so
an empty day is known to have run, and no state file or lock is needed between machines.
Concurrent commits of disjoint days succeed; a commit that loses a race is retried with
backoff. The table is created (empty, with its schema and the report's definition as its
description) before any unit writes.

Each window is streamed into its commits a day at a time (an Arrow record batch reader over
the days' rows). ``deltalake`` keeps what a commit writes in memory until the commit ends, with
a writer per day, so a window of more than :data:`COMMIT_ROWS` rows or :data:`COMMIT_DAYS`
days is written in several commits of whole consecutive days; each replaces its days whole (a
reader sees a day old or new, never a mix), and the last records the marks, so a window cut
short is fetched again by the next run.
"""

from __future__ import annotations

import contextlib
import json
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

from ... import schema
from ..._dependencies import lazy_import
from ..._version import __version__
from ...errors import ConfigError, redact
from ...query.versions import stamps_at_end
from ..bounds import bounds_filter, read_bounds
from ..days import DAY_COLUMN, DayRows, conform, with_day
from ..described import check_identity, describe_report, recorded_of, table_dimensions, table_schema
from ..destination import ReadBack, Recorded
from ..ledger import Marks, removal_marks
from ..plan import ExportWindow
from ..reports import ReportJob
from ..summary import Written
from ..values import Values

# the optional extra edgereports[delta]: loaded (and checked by require_deltalake) on
# first use, so the job file and the Parquet format never need it
deltalake = lazy_import("deltalake", pip="edgereports[delta]")
_delta_errors = lazy_import("deltalake.exceptions", pip="edgereports[delta]")
_delta_fs = lazy_import("deltalake.fs", pip="edgereports[delta]")
pa = lazy_import("pyarrow")
pc = lazy_import("pyarrow.compute")
ds = lazy_import("pyarrow.dataset")

__all__ = [
    "CHECKPOINT_INTERVAL",
    "DELTA_LOG",
    "INSTALL_HINT",
    "DeltaReport",
    "open_table",
    "read_delta",
    "require_deltalake",
    "table_errors",
]

INSTALL_HINT = "pip install 'edgereports[delta]'"
#: The directory that makes a directory a Delta table.
DELTA_LOG = "_delta_log"
#: Attempts of a commit that lost a race with another writer.
COMMIT_ATTEMPTS = 8
#: The rows and days of a commit at most (whole days; a larger day is a commit of its own):
#: ``deltalake`` holds what one commit writes until it ends, with a writer per day, so a
#: larger window is written in several commits, each replacing whole days, the last
#: recording the marks.
COMMIT_ROWS = 50_000
COMMIT_DAYS = 31
#: Commits between checkpoints of the tables the export creates: opening a table (each run
#: does a few times) replays at most this many commits after the last checkpoint.
CHECKPOINT_INTERVAL = 10


def require_deltalake() -> Any:
    """Import :mod:`deltalake` (the ``delta`` extra), or say in one line how to install it.

    Raises:
        ConfigError: the package is not installed.
    """
    try:
        deltalake.DeltaTable  # noqa: B018 - the first attribute read imports the package
    except ImportError:
        raise ConfigError(f'format = "delta" needs the deltalake package: {INSTALL_HINT}') from None
    return deltalake


@contextlib.contextmanager
def table_errors(location: str, secrets: Sequence[str]) -> Iterator[None]:
    """Opening or reading a table: a store that fails stays an ``OSError``, a table that
    cannot be read becomes a :class:`ConfigError`; both with one message, redacted (the store's
    secrets too), without the backtrace ``RUST_BACKTRACE`` appends."""
    deltalake = require_deltalake()
    try:
        yield
    except (OSError, deltalake.exceptions.DeltaError) as exc:
        text = redact(str(exc).split("\n   0: ")[0].strip(), secrets)
        if isinstance(exc, OSError):
            raise OSError(text) from None
        raise ConfigError(
            f"the Delta table at {redact(location)} cannot be read ({text}); repair or remove "
            "it, or give the job another output"
        ) from None


def open_table(
    location: str,
    report: ReportJob,
    storage_options: Mapping[str, str] | None = None,
    *,
    create: bool = True,
) -> DeltaReport | None:
    """Open the report's table, creating it empty first when missing (and ``create``).

    A run opens each table once and reads its state (definition, values, watermark) from that
    one snapshot.

    Returns:
        The table, or ``None`` when it is missing and not created.

    Raises:
        ConfigError: a table is there, written by another report (its identity differs).
    """
    deltalake = require_deltalake()
    options = _options(storage_options)
    if not deltalake.DeltaTable.is_deltatable(location, options):
        if not create:
            return None
        empty = table_schema(report, table_dimensions(report)).empty_table()
        # several processes creating it at once: one wins, the others find it made
        with contextlib.suppress(deltalake.exceptions.CommitFailedError):
            deltalake.write_deltalake(
                location,
                empty,
                partition_by=["day"],
                mode="ignore",
                name=report.name,
                description=json.dumps(describe_report(report), sort_keys=True),
                configuration={"delta.checkpointInterval": str(CHECKPOINT_INTERVAL)},
                storage_options=options,
            )
        table = deltalake.DeltaTable(location, storage_options=options)
        if table.version() == 0:  # a checkpoint from the start, then every CHECKPOINT_INTERVAL
            table.create_checkpoint()
    else:
        table = deltalake.DeltaTable(location, storage_options=options)
    check_identity(_recorded(table).get("definition"), report, "Delta table", location)
    return DeltaReport(table, report, location, options)


class DeltaReport:
    """One report's Delta table (a :class:`~edgereports.export.destination.Table`)."""

    def __init__(
        self,
        table: Any,
        report: ReportJob,
        location: str,
        options: Mapping[str, str] | None = None,
    ) -> None:
        self.table = table
        self.report = report
        self.location = location
        self.options = options

    def mark(self, key: str) -> int | None:
        """The version of the application transaction ``key``."""
        version = self.table.transaction_version(key)
        return None if version is None else int(version)

    def recorded(self) -> Recorded:
        """The definition and values the table's description records."""
        return recorded_of(_recorded(self.table))

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
        """Replace the days of ``rows`` in one commit: an overwrite with a predicate on
        ``day`` (and on the fan-out values written, when ``values`` is given: the rows of
        other values stay), streaming the rows a day at a time, with ``marks`` as
        application transactions."""
        require_deltalake()
        dims = tuple(dict.fromkeys((*table_dimensions(self.report), *rows.dimensions)))
        target = table_schema(self.report, dims)
        bare = schema.schema_for(self.report.shape).arrow_schema(dims)
        txns = [deltalake.Transaction(app, version) for app, version in marks.values.items()]
        spans = rows.spans(COMMIT_ROWS, COMMIT_DAYS)
        added = 0
        for i, days in enumerate(spans):

            def batches(days: list[date] = days) -> Any:
                def each() -> Iterator[Any]:
                    for day, part in rows.tables(days):
                        yield from with_day(conform(part, bare), day).to_batches()

                return pa.RecordBatchReader.from_batches(target, each())

            predicate = f"day >= '{days[0].isoformat()}' AND day <= '{days[-1].isoformat()}'"
            for dim, vals in (values or {}).items():
                listed = ", ".join("'" + str(v).replace("'", "''") + "'" for v in vals)
                predicate += f" AND {dim} IN ({listed})"
            last = i == len(spans) - 1  # the marks say the window is written: with its end
            _commit(self.table, batches, predicate, txns if last else [], metadata)
            added += _added_bytes(self.table, self.options)
        filled = sum(1 for d in rows.days if rows.count(d))
        return Written(
            rows=rows.rows,
            files=filled,
            removed=len(rows.days) - filled,
            bytes=added,
            dimensions=dims,
        )

    def remove_outside(self, begin: datetime, end: datetime, *, metadata: Mapping[str, Any]) -> int:
        """Remove every day outside ``[begin, end)`` in one commit: an overwrite of those
        days with no rows, recording each as written up to its own start."""
        require_deltalake()
        table = self.table
        table.update_incremental()
        first, last = begin.astimezone(UTC).date(), (end - timedelta(microseconds=1)).date()
        outside = {d for d in _written_days(table) if d < first or d > last}
        outside |= {
            d
            for d in (date.fromisoformat(str(p["day"])) for p in table.partitions())
            if d < first or d > last
        }
        if not outside:
            return 0
        marks = removal_marks(self.report, sorted(outside), end)
        txns = [deltalake.Transaction(app, version) for app, version in marks.values.items()]
        empty = table_schema(self.report, table_dimensions(self.report))
        predicate = f"day < '{first.isoformat()}' OR day > '{last.isoformat()}'"
        _commit(table, lambda: empty.empty_table(), predicate, txns, metadata)
        return len(outside)

    def record_values(self, held: Values, retired: Values) -> None:
        """Record the values in the table's description (one commit)."""
        require_deltalake()
        description = {
            **describe_report(self.report),
            "values": {d: list(v) for d, v in held.items()},
            "retired": {d: list(v) for d, v in retired.items()},
        }
        text = json.dumps(description, sort_keys=True)
        self.table.update_incremental()
        _retried(self.table, lambda: self.table.alter.set_table_description(text))

    def refresh(self) -> None:
        """Load the commits made since."""
        self.table.update_incremental()


def _added_bytes(table: Any, options: Mapping[str, str] | None) -> int:
    """The bytes of the data files the table's latest commit (this process's: the table is at
    the version it committed) added, as its log entry lists them; other writers' commits
    are entries of their own."""
    store = _delta_fs.DeltaStorageHandler(table.table_uri, _options(options))
    with store.open_input_stream(f"{DELTA_LOG}/{table.version():020d}.json") as stream:
        lines = stream.read().decode("utf-8").splitlines()
    added = 0
    for line in lines:
        action = json.loads(line) if line.strip() else {}
        if isinstance(action.get("add"), dict):
            added += int(action["add"].get("size") or 0)
    return added


def _written_days(table: Any) -> set[date]:
    """The days the table's commits recorded a window over (from its history)."""
    days: set[date] = set()
    for commit in table.history():
        try:
            window = json.loads(commit.get("edgereports", "{}")).get("window")
            lo, hi = (datetime.fromisoformat(w) for w in window)
        except (TypeError, ValueError, AttributeError):
            continue
        days.update(ExportWindow(lo, hi).days())
    return days


def _commit(
    table: Any,
    data: Callable[[], Any],
    predicate: str,
    txns: list[Any],
    metadata: Mapping[str, Any],
) -> None:
    """Overwrite the rows matching ``predicate`` with what ``data()`` gives, recording
    ``txns`` (one commit; ``data`` is called again for a retry)."""
    deltalake = require_deltalake()
    written = datetime.now(UTC).isoformat(timespec="seconds")
    facts = {"written_at": written, **metadata, "toolkit_version": __version__}
    info = {"edgereports": json.dumps(facts)}
    properties = deltalake.CommitProperties(custom_metadata=info, app_transactions=txns)
    _retried(
        table,
        lambda: deltalake.write_deltalake(
            table,
            data(),
            mode="overwrite",
            predicate=predicate,
            schema_mode="merge",
            commit_properties=properties,
        ),
    )


def _retried(table: Any, commit: Callable[[], object]) -> None:
    """Run ``commit``; one that lost a race with another writer is retried with backoff."""
    for attempt in range(COMMIT_ATTEMPTS):
        try:
            commit()
            return
        except _delta_errors.CommitFailedError:
            if attempt == COMMIT_ATTEMPTS - 1:
                raise
            time.sleep(random.uniform(0.05, 0.2) * 2**attempt)  # jitter
            table.update_incremental()


def read_delta(
    location: str,
    start: datetime | None,
    end: datetime | None,
    storage_options: Mapping[str, str] | None = None,
) -> ReadBack:
    """Read the rows of ``[start, end)`` of a table as an Arrow table, its shape and the
    definition it records (the report's request without its range).

    The range rule of every read (:mod:`..bounds`) keeps the bucket holding ``start``; the
    ``day`` partitions outside the range are skipped and the ``day`` column is dropped.
    """
    deltalake = require_deltalake()

    table = deltalake.DeltaTable(location, storage_options=_options(storage_options))
    dataset = table.to_pyarrow_dataset()
    names = dataset.schema.names
    shape = "timeseries" if "time_stamp" in names else "sim_count"
    key = "time_stamp" if shape == "timeseries" else "date"
    recorded = _recorded(table)
    definition = recorded.get("definition") or {}
    version = str(recorded.get("api_version") or "v1")
    at_end = stamps_at_end(version)
    lo, hi = read_bounds(start, end, shape, definition, at_end=at_end)
    expr = bounds_filter(lo, hi, shape, dataset.schema.field(key).type, at_end=at_end)
    if lo is not None:  # the partitions: the UTC days of the buckets the rows cover
        expr = _and(expr, ds.field("day") >= lo.astimezone(UTC).date())
    if end is not None:
        expr = _and(expr, ds.field("day") <= (end - timedelta(microseconds=1)).date())
    found = dataset.to_table(filter=expr)
    return ReadBack(found.drop_columns([DAY_COLUMN]), shape, definition, version)


def _recorded(table: Any) -> dict[str, Any]:
    """What the table's description records (report, shape, definition), or nothing."""
    try:
        recorded = json.loads(table.metadata().description or "{}")
    except (ValueError, AttributeError):
        return {}
    return recorded if isinstance(recorded, dict) else {}


def _and(a: Any, b: Any) -> Any:
    return b if a is None else a & b


def _options(storage_options: Mapping[str, str] | None) -> dict[str, str] | None:
    return dict(storage_options) if storage_options else None
