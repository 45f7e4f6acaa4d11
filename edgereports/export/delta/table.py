"""The Delta Lake format of the export: one transactional table per report, local or on S3.

``OUTPUT/<report>`` is a Delta table (the optional extra ``edgereports[delta]``), partitioned by
``day`` (the UTC day of the bucket, a ``date`` column), with the pinned frame schema of
:mod:`edgereports.schema`. ``OUTPUT`` is a local directory or an object-store URI
(``s3://bucket/prefix``; settings and credentials: ``storage.py``).

Writing the UTC days ``[start, end)`` of a report is one commit: an overwrite with the
predicate ``day >= start AND day < end``, so a unit replaces exactly its days, whatever ran
before, and a reader sees the old days or the new ones. The commit also records, for each day,
an application transaction (``edgereports/<report>/<day>``) whose version is the end of the
data written for that day in epoch seconds: the table itself says which days are complete, so
an empty day is known to have run, and no state file or lock is needed between machines.
Concurrent commits of disjoint days succeed; a commit that loses a race is retried with
backoff. The table is created (empty, with its schema and the report's definition as its
description) before any unit writes.
"""

from __future__ import annotations

import contextlib
import json
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ... import schema
from ..._dependencies import lazy_import
from ..._version import __version__
from ...errors import ConfigError, redact
from ...query.timegrid import BUCKETS
from ..bounds import bounds_filter, bucket_start
from ..fanout import Values, read_values, split_definition
from ..plan import ExportWindow, floor_day, midnight
from ..reports import ReportJob
from ..summary import Written

# the optional extra edgereports[delta]: loaded (and checked by require_deltalake) on
# first use, so the job file and the Parquet format never need it
deltalake = lazy_import("deltalake", pip="edgereports[delta]")
_delta_errors = lazy_import("deltalake.exceptions", pip="edgereports[delta]")
pa = lazy_import("pyarrow")
pc = lazy_import("pyarrow.compute")
ds = lazy_import("pyarrow.dataset")
if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_import("pandas")

__all__ = [
    "DELTA_LOG",
    "INSTALL_HINT",
    "held_values",
    "open_table",
    "read_delta",
    "record_values",
    "remove_outside",
    "require_deltalake",
    "retired_values",
    "shard_marks",
    "table_watermark",
    "write_days",
]

INSTALL_HINT = "pip install 'edgereports[delta]'"
#: The directory that makes a directory a Delta table.
DELTA_LOG = "_delta_log"
#: Attempts of a commit that lost a race with another writer.
COMMIT_ATTEMPTS = 8
#: Commits between checkpoints of the tables the export creates: opening a table (each run
#: does a few times) replays at most this many commits after the last checkpoint.
CHECKPOINT_INTERVAL = 10
_DAY = BUCKETS["DAY"]  # the export's unit: a UTC day
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


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
) -> Any | None:
    """Open the report's table, creating it empty first when missing (and ``create``).

    A run opens each table once and reads its state (definition, values, watermark) from that
    one snapshot.

    Returns:
        The table (a ``deltalake.DeltaTable``), or ``None`` when it is missing and not created.

    Raises:
        ConfigError: a table is there, written by another report (its identity differs).
    """
    deltalake = require_deltalake()
    options = _options(storage_options)
    if not deltalake.DeltaTable.is_deltatable(location, options):
        if not create:
            return None
        empty = _arrow_schema(report, _dimensions(report)).empty_table()
        # several processes creating it at once: one wins, the others find it made
        with contextlib.suppress(deltalake.exceptions.CommitFailedError):
            deltalake.write_deltalake(
                location,
                empty,
                partition_by=["day"],
                mode="ignore",
                name=report.name,
                description=json.dumps(_description(report), sort_keys=True),
                configuration={"delta.checkpointInterval": str(CHECKPOINT_INTERVAL)},
                storage_options=options,
            )
        table = deltalake.DeltaTable(location, storage_options=options)
        if table.version() == 0:  # a checkpoint from the start, then every CHECKPOINT_INTERVAL
            table.create_checkpoint()
    else:
        table = deltalake.DeltaTable(location, storage_options=options)
    # the identity (metrics, dimensions, granularity, filters other than the fan-out values)
    recorded = _recorded(table).get("definition")
    identity = split_definition(_description(report)["definition"])[0]
    if recorded is not None and split_definition(recorded)[0] != identity:
        raise ConfigError(
            f"report {report.name!r} asks for other data than the Delta table at "
            f"{redact(location)} holds (its request changed: metrics, dimensions, filters or "
            "granularity); give the changed report a new name, or remove the table"
        )
    return table


def held_values(table: Any) -> Values | None:
    """The fan-out values the table holds whole from the report's start (``None``: unknown)."""
    recorded = _recorded(table)
    values = read_values(recorded.get("values"))
    if values is not None:
        return values
    definition = recorded.get("definition")
    return split_definition(definition)[1] if isinstance(definition, dict) else None


def retired_values(table: Any) -> Values:
    """The fan-out values whose rows the table keeps, though no run fetches them any more."""
    return read_values(_recorded(table).get("retired")) or {}


def record_values(table: Any, report: ReportJob, values: Values, retired: Values) -> None:
    """Record the fan-out values the table now holds whole, and those it keeps the rows of
    (in its description; one commit)."""
    require_deltalake()
    description = {
        **_description(report),
        "values": {d: list(v) for d, v in values.items()},
        "retired": {d: list(v) for d, v in retired.items()},
    }
    text = json.dumps(description, sort_keys=True)
    table.update_incremental()
    _retried(table, lambda: table.alter.set_table_description(text))


def table_watermark(table: Any | None, report: ReportJob) -> datetime | None:
    """The end of the contiguous data the table holds from the report's start (or ``None``).

    Read from the table's application transactions: the contiguous end recorded by the last
    commit that extended it (:func:`contiguous_id`, a lower bound), then day after day from
    there: a day written complete moves it to the day's end, a day written in part to the end of
    its data (a day a full refresh removed is recorded as written up to its own start: it stops
    there). A table whose units ran in order is read in two look-ups, however old it is.
    """
    if table is None:
        return None
    known = table.transaction_version(contiguous_id(report))
    mark: datetime | None = None if known is None else _EPOCH + timedelta(seconds=int(known))
    if mark is None or mark <= report.start:
        mark, day = None, report.start
    else:
        day = floor_day(mark)
    while True:
        version = table.transaction_version(_app_id(report, day.date()))
        if version is None:
            end = _sharded_range(table, report, day)  # written by shard units?
            if end is None:
                return mark
            version = _seconds(end)
        mark = _EPOCH + timedelta(seconds=int(version))
        if mark < day + _DAY:
            return mark
        day = max(day + _DAY, floor_day(mark))


def shard_marks(
    report: ReportJob, start: datetime, end: datetime, shard: int, shards: int
) -> list[tuple[str, int]]:
    """The application transactions a shard unit of ``[start, end)`` records: its shard as
    written, and where the range ends and how many shards it has (``end`` seconds x 1000 +
    shards), so a later run can tell the range whole once every shard is in."""
    seconds = _seconds(end)
    return [
        (_shard_id(report, start, shards, shard), seconds),
        (_range_id(report, start), seconds * _SHARD_BASE + shards),
    ]


_SHARD_BASE = 1000  # shards per range at most, in the range's record


def _range_id(report: ReportJob, start: datetime) -> str:
    return f"edgereports/{report.name}/sharded/{start.date().isoformat()}"


def _shard_id(report: ReportJob, start: datetime, shards: int, shard: int) -> str:
    return f"edgereports/{report.name}/sharded/{start.date().isoformat()}/{shards}/{shard}"


def _sharded_range(table: Any, report: ReportJob, day: datetime) -> datetime | None:
    """The end of the range from ``day`` that shard units wrote whole (every shard), or None."""
    record = table.transaction_version(_range_id(report, day))
    if record is None:
        return None
    seconds, shards = divmod(int(record), _SHARD_BASE)
    for k in range(shards):
        if (table.transaction_version(_shard_id(report, day, shards, k)) or 0) < seconds:
            return None
    return _EPOCH + timedelta(seconds=seconds)


def contiguous_id(report: ReportJob) -> str:
    """The application id whose version is the recorded contiguous end (epoch seconds)."""
    return f"edgereports/{report.name}/from/{report.start.date().isoformat()}"


def write_days(
    table: Any,
    frame: pd.DataFrame,
    report: ReportJob,
    start: datetime,
    end: datetime,
    *,
    metadata: Mapping[str, Any],
    contiguous: datetime | None = None,
    values: Mapping[str, Sequence[str]] | None = None,
    record_days: bool = True,
    marks: Sequence[tuple[str, int]] = (),
) -> Written:
    """Replace the UTC days of ``[start, end)`` of the table with the rows of ``frame``.

    One commit: an overwrite with a predicate on ``day`` (and on the fan-out values written,
    when ``values`` is given: the rows of other values stay), recording each day as written
    up to ``end`` (or its own end). Rows outside ``[start, end)`` are dropped.

    Args:
        frame: the frame fetched for ``[start, end)`` (a schema frame of the report's shape).
        start: a UTC midnight.
        end: the end of the data fetched (a UTC midnight, or inside the last day).
        metadata: JSON-ready facts stored in the commit (request, window; no secret).
        contiguous: the end of the data held contiguously from the report's start once this
            commit is in (``None`` when this write does not extend it).
        values: replace only the rows of these fan-out values (by dimension); a backfill of
            added values (the days stay recorded as they were), or a write that keeps the
            history of removed values.
        record_days: record the days as written (False for a backfill of added values: the
            days' other values were written before, and the days stay as complete as they were).

    Raises:
        ConfigError: ``deltalake`` is missing.
        OSError, ValueError: the store or the data refused the write (nothing was committed).
    """
    require_deltalake()

    data = _arrow_table(frame, report, start, end)
    days = ExportWindow(start, end).days()
    txns = []
    if record_days:
        txns = [
            deltalake.Transaction(_app_id(report, d), _seconds(min(end, midnight(d) + _DAY)))
            for d in days
        ]
    if contiguous is not None:
        txns.append(deltalake.Transaction(contiguous_id(report), _seconds(contiguous)))
    txns += [deltalake.Transaction(app, version) for app, version in marks]
    predicate = f"day >= '{days[0].isoformat()}' AND day <= '{days[-1].isoformat()}'"
    for dim, vals in (values or {}).items():
        listed = ", ".join("'" + str(v).replace("'", "''") + "'" for v in vals)
        predicate += f" AND {dim} IN ({listed})"
    _commit(table, data, predicate, txns, metadata)
    filled = len(set(data.column("day").to_pylist()))
    size = _size_of_days(table, days) if filled else 0
    return Written(rows=data.num_rows, files=filled, removed=len(days) - filled, bytes=size)


def _size_of_days(table: Any, days: list[date]) -> int:
    """The bytes of the table's data files in the partitions of ``days`` (what a commit that
    replaced those days wrote), from the snapshot the commit left the table at."""
    wanted = {d.isoformat() for d in days}
    actions = table.get_add_actions(flatten=True)
    names = actions.schema.names
    if "partition.day" not in names or "size_bytes" not in names:
        return 0
    parts = actions.column("partition.day").to_pylist()
    sizes = actions.column("size_bytes").to_pylist()
    return sum(int(n) for d, n in zip(parts, sizes, strict=True) if str(d) in wanted)


def remove_outside(
    table: Any,
    report: ReportJob,
    begin: datetime,
    end: datetime,
    *,
    metadata: Mapping[str, Any],
) -> int:
    """Remove every day outside ``[begin, end)`` (a full refresh: the table holds that range).

    One commit: an overwrite of the days outside the range with no rows, recording each of
    them as written up to its own start (removed), so the watermark stops before them.

    Returns:
        The days removed (with rows, or recorded as written by an earlier commit).

    Raises:
        OSError, ValueError: the store refused the commit (nothing was committed).
    """
    require_deltalake()

    table.update_incremental()
    first, last = begin.astimezone(UTC).date(), (end - timedelta(microseconds=1)).date()
    outside = {d for d in _written_days(table) if d < first or d > last}
    outside |= {
        d
        for d in (date.fromisoformat(str(p["day"])) for p in table.partitions())
        if d < first or d > last
    }
    removed = sorted(d for d in outside if (table.transaction_version(_app_id(report, d)) or 0) > 0)
    if not outside:
        return 0
    empty = _arrow_schema(report, _dimensions(report)).empty_table()
    txns = [deltalake.Transaction(_app_id(report, d), _seconds(midnight(d))) for d in removed]
    # the table now holds [begin, end)
    txns.append(deltalake.Transaction(contiguous_id(report), _seconds(end)))
    predicate = f"day < '{first.isoformat()}' OR day > '{last.isoformat()}'"
    _commit(table, empty, predicate, txns, metadata)
    return len(outside)


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
    data: Any,
    predicate: str,
    txns: list[Any],
    metadata: Mapping[str, Any],
) -> None:
    """Overwrite the rows matching ``predicate`` with ``data``, recording ``txns`` (one
    commit)."""
    deltalake = require_deltalake()
    written = datetime.now(UTC).isoformat(timespec="seconds")
    facts = {"written_at": written, **metadata, "toolkit_version": __version__}
    info = {"edgereports": json.dumps(facts)}
    properties = deltalake.CommitProperties(custom_metadata=info, app_transactions=txns)
    _retried(
        table,
        lambda: deltalake.write_deltalake(
            table,
            data,
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
) -> tuple[Any, str, dict[str, Any]]:
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
    definition = _recorded(table).get("definition") or {}
    start = bucket_start(start, shape, definition)
    expr = bounds_filter(start, end, shape, dataset.schema.field(key).type)
    if start is not None:
        expr = _and(expr, ds.field("day") >= start.astimezone(UTC).date())
    if end is not None:
        expr = _and(expr, ds.field("day") <= (end - timedelta(microseconds=1)).date())
    found = dataset.to_table(filter=expr)
    return found.drop_columns(["day"]), shape, definition


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


def _dimensions(report: ReportJob) -> tuple[str, ...]:
    return () if report.shape == "sim_count" else tuple(report.report.dimensions or ())


def _description(report: ReportJob) -> dict[str, Any]:
    definition = json.loads(json.dumps(report.definition()))
    return {"report": report.name, "shape": report.shape, "definition": definition}


def _arrow_schema(report: ReportJob, dims: tuple[str, ...]) -> Any:
    base = schema.schema_for(report.shape).arrow_schema(dims)
    return base.append(pa.field("day", pa.date32(), nullable=False))


def _arrow_table(frame: pd.DataFrame, report: ReportJob, start: datetime, end: datetime) -> Any:
    """The frame's rows inside ``[start, end)``, sorted, in the table's schema, with ``day``."""
    spec = schema.schema_for(report.shape)
    frame = spec.validate(frame)
    dims = tuple(dict.fromkeys((*_dimensions(report), *spec.dimensions_of(frame))))
    missing = {  # a dimension the service did not echo this time: null
        name: pd.Series(pd.NA, index=frame.index, dtype=schema.STRING)
        for name in dims
        if name not in frame
    }
    frame = frame.assign(**missing) if missing else frame
    key = report.time_column
    lo, hi = pd.Timestamp(start), pd.Timestamp(end)
    if key == "date":
        lo, hi = lo.tz_localize(None), hi.tz_localize(None)
    frame = frame[(frame[key] >= lo) & (frame[key] < hi)]
    order = [c for c in (key, *dims, "metric", "aggregation", "percentile") if c in frame]
    frame = frame.sort_values(order, kind="stable", na_position="first")
    base = spec.arrow_schema(dims)
    table = pa.Table.from_pandas(frame[base.names], schema=base, preserve_index=False)
    day = pc.cast(table.column(key), pa.date32())
    return table.append_column(pa.field("day", pa.date32(), nullable=False), day)


def _seconds(when: datetime) -> int:
    return int((when - _EPOCH).total_seconds())


def _app_id(report: ReportJob, day: date) -> str:
    return f"edgereports/{report.name}/{day.isoformat()}"
