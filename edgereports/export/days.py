"""A window's rows cut into UTC days by the time grid, for every destination.

The shared layer places each row on the UTC day of the bucket it covers (a v1 row's stamp is
its bucket's start; a v2 row's stamp ends the piece it covers, so a stamp at midnight belongs
to the day before: :func:`~edgereports.query.timegrid.row_bucket_micros`), keeps the rows the
window owns (:func:`~edgereports.query.timegrid.owned_mask`), and hands a destination each
day's rows sorted and cast to the report's Arrow schema, one day at a time: the copies made
are a day's rows, not the window's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from .._dependencies import lazy_import
from ..query.timegrid import BUCKETS, epoch_micros, micros, owned_mask, row_bucket_micros
from ..schema import schema_for

np = lazy_import("numpy")
pa = lazy_import("pyarrow")
pc = lazy_import("pyarrow.compute")

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DAY_COLUMN", "DayRows", "conform", "split_days", "with_day"]

#: The partition column of the table formats (the UTC day of the bucket).
DAY_COLUMN = "day"
_DAY_US = micros(BUCKETS["DAY"])
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


@dataclass
class DayRows:
    """One window's rows, by UTC day.

    Attributes:
        days: every UTC day the window covers, oldest first (a day without rows is empty now).
        schema: the Arrow schema of the rows (the frame's columns, without ``day``).
        shape: ``"timeseries"`` or ``"sim_count"``.
        dimensions: the dimension columns of the frame.
        rows: the rows of all days.
    """

    days: list[date]
    schema: Any
    shape: str
    dimensions: tuple[str, ...]
    rows: int
    _table: Any
    _order: Any  # row indexes, grouped by day
    _bounds: dict[date, tuple[int, int]]
    #: the order of a day's rows: bucket, dimensions, metric, aggregation, percentile
    sort_keys: list[tuple[str, str, str]]

    def count(self, day: date) -> int:
        """The rows of ``day``."""
        lo, hi = self._bounds.get(day, (0, 0))
        return hi - lo

    def table(self, day: date) -> Any:
        """The rows of ``day``, sorted (bucket, dimensions, metric), in :attr:`schema`."""
        system = pa.system_memory_pool()  # freed at once (Arrow's default pool keeps pages)
        lo, hi = self._bounds.get(day, (0, 0))
        part = pc.take(self._table, pa.array(self._order[lo:hi]), memory_pool=system)
        part = conform(part, self.schema, system)
        order = pc.sort_indices(part, sort_keys=self.sort_keys, memory_pool=system)
        return pc.take(part, order, memory_pool=system)

    def tables(self, days: Sequence[date] | None = None) -> Iterator[tuple[date, Any]]:
        """Each day with rows (of ``days``, default all) and its rows (:meth:`table`), one
        day at a time."""
        for day in self.days if days is None else days:
            if self.count(day):
                yield day, self.table(day)

    def spans(self, rows: int, days: int) -> list[list[date]]:
        """The days in runs of consecutive days, each of at most ``days`` days and about
        ``rows`` rows (whole days: a larger day is a run of its own), oldest first; together
        they are :attr:`days`."""
        out: list[list[date]] = []
        held = 0
        for day in self.days:
            count = self.count(day)
            if not out or len(out[-1]) >= days or (held and held + count > rows):
                out.append([])
                held = 0
            out[-1].append(day)
            held += count
        return out


def split_days(
    frame: pd.DataFrame,
    shape: str,
    days: list[date],
    start: datetime,
    end: datetime,
    *,
    stamps_at_end: bool = False,
) -> DayRows:
    """Cut a window's frame into the UTC days of the buckets its rows cover.

    Args:
        frame: the window's frame (a schema frame of ``shape``).
        days: the UTC days the window covers.
        start: the window's start; ``end``: its end. Rows outside the window are left to
            their own window (v1: ``[start, end)``; v2: ``(start, end]``).
        stamps_at_end: the stamps end the pieces they cover (v2).

    Raises:
        ValueError: the frame does not fit the schema of ``shape``, or holds rows of a day
            outside ``days``.
    """
    spec = schema_for(shape)
    dims = spec.dimensions_of(frame)
    if dict(frame.dtypes) != spec.dtypes(dims) or list(frame.columns) != spec.columns(dims):
        frame = spec.validate(frame)  # conforming frames (the client's) are used as they are
    key = "time_stamp" if shape == "timeseries" else "date"
    # bucket stamps as UTC microseconds (tz-aware columns convert to UTC, naive dates are UTC)
    stamps = frame[key].to_numpy(dtype="datetime64[us]").view("int64")
    # the frame's own columns (pyarrow strings and numpy arrays: no copy)
    table = _indexed(pa.Table.from_pandas(frame, preserve_index=False))
    inside = owned_mask(
        stamps,
        epoch_micros(start),
        epoch_micros(end),
        first=False,
        last=False,
        at_end=stamps_at_end,
    )
    rows = np.flatnonzero(inside)
    numbers = row_bucket_micros(stamps[rows], BUCKETS["DAY"], at_end=stamps_at_end) // _DAY_US
    order = np.argsort(numbers, kind="stable")
    rows, numbers = rows[order], numbers[order]
    wanted = {d.toordinal() - _EPOCH_ORDINAL: d for d in days}
    found = np.unique(numbers)
    stray = sorted(date.fromordinal(int(n) + _EPOCH_ORDINAL) for n in found if int(n) not in wanted)
    if stray:
        raise ValueError(f"rows of day(s) {stray} fall outside the window's days")
    bounds = {}
    for n in found:
        lo = int(np.searchsorted(numbers, n, side="left"))
        hi = int(np.searchsorted(numbers, n, side="right"))
        bounds[wanted[int(n)]] = (lo, hi)
    names = set(table.column_names)
    sort_keys = [
        (c, "ascending", "at_start")
        for c in (key, *dims, "metric", "aggregation", "percentile")
        if c in names
    ]
    return DayRows(
        days=list(days),
        schema=spec.arrow_schema(dims),
        shape=shape,
        dimensions=tuple(dims),
        rows=len(rows),
        _table=table,
        _order=rows,
        _bounds=bounds,
        sort_keys=sort_keys,
    )


def _indexed(table: Any) -> Any:
    """``table`` with each text column of several chunks (a frame's slices of one array per
    value) dictionary-encoded into one chunk: a take from a column of many chunks joins them
    first, for every day, where a day's take of codes copies its own rows alone."""
    pool = pa.system_memory_pool()
    columns = []
    for column in table.columns:
        if column.num_chunks > 1 and pa.types.is_large_string(column.type):
            coded = pc.dictionary_encode(column, memory_pool=pool)
            column = coded.unify_dictionaries(pool).combine_chunks(pool)
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names)


def conform(table: Any, target: Any, pool: Any = None) -> Any:
    """``table`` with the columns, types and nullability of ``target``; a column it lacks (a
    dimension the service did not echo this time) is null."""
    columns = []
    for field in target:
        if field.name in table.column_names:
            column = table.column(field.name)
            if column.type != field.type:
                column = pc.cast(column, field.type, memory_pool=pool)
        else:
            column = pa.nulls(table.num_rows, field.type)
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=target)


def with_day(table: Any, day: date) -> Any:
    """``table`` with the partition column ``day`` (a ``date32``) holding ``day``."""
    column = pa.array([day] * table.num_rows, type=pa.date32())
    return table.append_column(pa.field(DAY_COLUMN, pa.date32(), nullable=False), column)
