"""A pull's rows: each answer as an Arrow table, one ownership rule, one frame at the end.

Every answer becomes :class:`Rows`, a ``pyarrow.Table`` laid out as
``pa.Table.from_pandas`` would lay out :func:`~.api.to_frame`'s frame; a small JSON time
series is built straight from the reader's arrays, so a pull makes no pandas frame per
answer. :func:`owned` keeps the rows each window owns (a run of kept rows is a slice, no
copy), :func:`in_order` puts them in the canonical order (runs of rows moved as slices) and
:func:`frame_of` makes one pandas frame.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from .._dependencies import lazy_import
from ..errors import SchemaError
from ..query.timegrid import epoch_micros, owned_mask
from . import _arrowjson
from ._order import table_order
from ._request import RequestInfo, request_info
from ._util import SHARED_BLOCKS, compact
from .api import ARROW_MIN_BYTES, read_csv, to_frame
from .detect import detect_shape, first_byte, parse_json
from .reporting_service import is_service_answer, service_request
from .stitching import concat_frames
from .timeseries import Block, build_table, dimensions, read_blocks

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
else:
    np = lazy_import("numpy")
    pd = lazy_import("pandas")
    pa = lazy_import("pyarrow")

__all__ = [
    "Owner",
    "Rows",
    "frame_of",
    "in_order",
    "load_readers",
    "owned",
    "read_rows",
    "stamps",
    "table_of",
]

#: Answers of at least this size are parsed by pyarrow, which leaves the GIL while it parses, so
#: the answers of a pull's threads are read at once; smaller ones cost less through orjson.
PART_ARROW_MIN_BYTES = 64 * 1024
#: The ``attrs`` of a JSON time series' table.
_SERIES_ATTRS = {"shape": "timeseries", "source": "json"}
#: Each shape, by the column that holds its bucket stamp (and tells the shape).
_SHAPES = {"time_stamp": "timeseries", "start_time": "current", "date": "sim_count"}


def load_readers() -> None:
    """Import pandas and pyarrow now: a pull calls this on its own thread while its first
    answers travel, so that no worker whose answer is in waits on the import."""
    pd.DataFrame, pa.Table  # noqa: B018 - each proxy imports its package on first access


@dataclass(frozen=True)
class Rows:
    """The rows of one answer: an Arrow table, built when it is asked for (:meth:`built`).

    A pull reads its answers on worker threads and assembles them on one thread: a small
    answer's table is built there, as pyarrow hands the GIL to another thread on its calls and
    a worker thread would pay that for every answer.

    Attributes:
        make: makes the table and, when known, the length of each of its runs of rows of one
            series and metric entry (:func:`owned` and :func:`in_order` then need not look
            for them).
    """

    make: Callable[[], tuple[pa.Table, list[int] | None]]

    @classmethod
    def of(cls, table: pa.Table, runs: list[int] | None = None) -> Rows:
        """The rows of a table made already (and its runs' lengths, when known)."""
        return cls(lambda: (table, runs))

    def built(self) -> tuple[pa.Table, list[int] | None]:
        """The table and its runs' lengths (built by each call: a pull asks once)."""
        return self.make()

    def table(self) -> pa.Table:
        """The rows as a table (built by each call: a pull asks once)."""
        return self.make()[0]


def read_rows(
    body: bytes, request: Any, *, csv: bool, arrow_min_bytes: int | None = PART_ARROW_MIN_BYTES
) -> Rows:
    """One answer's rows (:class:`Rows`: the table of ``pa.Table.from_pandas`` for the frame
    :func:`~.api.to_frame` or :func:`~.api.read_csv` gives, ``attrs`` without the request).

    Raises:
        SchemaError: the body is not the JSON (or CSV) of a known shape; a JSON answer that
            does not start like JSON.
    """
    if csv:
        return Rows.of(table_of(read_csv(body, request)))
    body = body.removeprefix(b"\xef\xbb\xbf")
    head = first_byte(body)
    if head not in (b"{", b"["):
        shown = body[:120].decode("utf-8", errors="replace")
        raise SchemaError(f"the answer is not JSON: {shown!r}", where="char 0")
    small = len(body) < ARROW_MIN_BYTES and service_request(request) is None
    read = _series(body, request, arrow_min_bytes) if small and head == b"{" else None
    if read is None:
        return Rows.of(table_of(to_frame(body, request)))
    return Rows(functools.partial(build_table, *read, _SERIES_ATTRS))


def _series(
    body: bytes, request: Any, arrow_min_bytes: int | None
) -> tuple[list[Block], list[str], RequestInfo | None] | None:
    """A small JSON time series' blocks, its echoed keys (``account_id`` among them) and its
    request; None for any other answer (:func:`~.api.to_frame` reads those)."""
    req = request_info(request, raw=False)
    arrow = arrow_min_bytes is not None and len(body) >= arrow_min_bytes
    read = _arrowjson.read_blocks(body) if arrow else None
    if read is None:
        obj = parse_json(body)
        if not isinstance(obj, dict) or not obj or is_service_answer(obj):
            return None
        if detect_shape(obj, req) != "timeseries":
            return None
        read = read_blocks(obj, owned=True)
    blocks, names = read
    dimensions(names, req)  # the checks of the echoed keys, as to_frame makes them
    # the account is kept with the points: the report's own filter may name several
    account = req.account_id if req is not None else None
    if "account_id" not in names:
        names.append("account_id")
        blocks = [dataclasses.replace(b, echo=(*b.echo, account)) for b in blocks]
    elif account is not None:
        k = names.index("account_id")
        for b in blocks:
            if b.echo[k] is None:
                b.echo = (*b.echo[:k], account, *b.echo[k + 1 :])
    return blocks, names, req


def table_of(frame: pd.DataFrame) -> pa.Table:
    """A frame's rows as a table of :func:`read_rows`' layout (``attrs`` ``shape`` and
    ``source`` kept)."""
    bare = pd.DataFrame(frame, copy=False)
    bare.attrs = {k: frame.attrs[k] for k in ("shape", "source") if k in frame.attrs}
    return pa.Table.from_pandas(bare, preserve_index=False)


def stamps(table: pa.Table) -> np.ndarray:
    """The bucket stamp of each row (``time_stamp``; ``start_time`` for current values;
    ``date`` for SIM counts), as int64 microseconds since the epoch (UTC)."""
    column = next(table.column(c) for c in _SHAPES if c in table.column_names)
    micros: np.ndarray = np.asarray(column.to_numpy()).view(np.int64)
    return micros


#: The window a table's rows answer: ``(start, end, first, last)`` (:func:`owned`).
Owner = tuple[datetime, datetime, bool, bool]
_LOWEST, _HIGHEST = -(2**63), 2**63 - 1  # the int64 stamps' range


class Owned(NamedTuple):
    """The rows :func:`owned` keeps.

    Attributes:
        table: the kept rows.
        gone: per table, how many of its rows went at or after its window's end.
        starts: the first kept row of each run of one series and metric entry, when every
            table's runs were given; else None.
    """

    table: pa.Table
    gone: list[int]
    starts: np.ndarray | None = None


def owned(
    tables: Sequence[pa.Table],
    owners: Sequence[Owner | None],
    *,
    at_end: bool = False,
    runs: Sequence[list[int] | None] = (),
) -> Owned:
    """The rows each table's window owns, as one table (the tables joined in order).

    Each table's window is ``(start, end, first, last)``, owned by the rule of
    :func:`~edgereports.query.timegrid.owned_mask`; a table of no window (None) keeps every
    row. Tables of different dimensions are joined on the union of their columns (in order of
    first appearance; a table without one gets nulls). ``runs``, if known, are each table's run
    lengths (:meth:`Rows.built`). Runs of kept rows are slices, not copies.
    """
    known = bool(runs) and all(r is not None for r in runs)
    kept, gone, sizes = [], [], []
    for k, (table, o) in enumerate(zip(tables, owners, strict=True)):
        run = (runs[k] or []) if known else []
        if o is None or not table.num_rows:
            kept.append(table)
            gone.append(0)
            sizes += run
            continue
        at = stamps(table)
        low = _LOWEST if o[2] else epoch_micros(o[0])
        high = _HIGHEST if o[3] else epoch_micros(o[1])
        keep = owned_mask(at, low, high, first=False, last=False, at_end=at_end)
        gone.append(int(np.count_nonzero((at > high) if at_end else (at >= high))))
        if bool(keep.all()):
            kept.append(table)
            sizes += run
            continue
        kept.append(_take(table, np.flatnonzero(keep)))
        if run:  # each run keeps its kept rows
            before = np.concatenate(([0], np.cumsum(keep)))
            sizes += np.diff(before[np.cumsum([0, *run])]).tolist()
    starts = None
    if known:  # a run starts after the rows of those before it; a run of no row starts none
        nonzero = np.array([n for n in sizes if n], dtype=np.int64)
        starts = np.concatenate(([0], np.cumsum(nonzero)[:-1]))
    return Owned(_join(kept), gone, starts)


def _take(table: pa.Table, rows: np.ndarray) -> pa.Table:
    """The rows at positions ``rows`` (in order): a slice of ``table`` per run of consecutive
    positions when there are few runs, else a copy."""
    if not len(rows):
        return table.slice(0, 0)
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    if len(breaks) >= SHARED_BLOCKS:
        return table.take(pa.array(rows))
    starts = [int(rows[0]), *rows[breaks].tolist()]
    stops = [*(rows[breaks - 1] + 1).tolist(), int(rows[-1]) + 1]
    if len(starts) == 1:
        return table.slice(starts[0], stops[0] - starts[0])
    return pa.concat_tables([table.slice(a, b - a) for a, b in zip(starts, stops, strict=True)])


def in_order(table: pa.Table, request: Any, starts: np.ndarray | None = None) -> pa.Table:
    """The rows of ``table`` (joined from several answers) sorted as one answer would be: by
    series (first appearance), then by the metric's place in the request, then by time; a
    run of rows of one series and metric entry is moved as a slice. ``starts`` are the first
    rows of the runs (:attr:`Owned.starts`), if known; else they are found.
    """
    shape = next(s for c, s in _SHAPES.items() if c in table.column_names)
    order = table_order(table, shape, request_info(request, raw=False), starts)
    return table if order is None else _take(table, order)


def frame_of(table: pa.Table) -> pd.DataFrame:
    """The pandas frame of a table of :func:`read_rows`' layout (``attrs`` from its
    metadata: shape and source).

    A text column keeps its chunks (slices of one array per value: its text is not copied
    per row) unless they are many and short (:func:`~._util.compact`), which pandas works on
    slowly: those are joined into one array.
    """
    if any(_short_chunks(c) for c in table.itercolumns()):
        columns = [c.combine_chunks() if _short_chunks(c) else c for c in table.itercolumns()]
        table = pa.Table.from_arrays(columns, schema=table.schema)
    # on this thread: the columns are few, and pyarrow's threads would each take memory
    frame: pd.DataFrame = table.to_pandas(use_threads=False)
    return frame


def _short_chunks(column: pa.ChunkedArray) -> bool:
    """A text column of chunks too many and short to keep (:func:`~._util.compact`)."""
    return pa.types.is_large_string(column.type) and not compact(len(column), column.num_chunks)


def _join(tables: Sequence[pa.Table]) -> pa.Table:
    """The tables, one after the other (answers of different columns joined as frames are)."""
    if len(tables) == 1:
        return tables[0]
    if all(t.schema.equals(tables[0].schema) for t in tables):
        return pa.concat_tables(tables)
    return table_of(concat_frames([frame_of(t) for t in tables]))
