"""A pull's rows: each answer as an Arrow table, one ownership rule, one frame at the end.

Every answer of a pull becomes a ``pyarrow.Table`` in the layout of
``pa.Table.from_pandas(frame, preserve_index=False)`` for the frame :func:`~.api.to_frame` gives
(the pinned Arrow types, the pandas metadata, ``attrs`` ``shape`` and ``source``). A small JSON
time series, the common answer of a windowed pull, is built into its table straight from the
reader's arrays (:func:`~.timeseries.build_table`), so a pull makes no pandas frame per answer.
:func:`owned` keeps the rows a window owns (the time grid's rule, on the stamps' integers; a
run of kept rows is a slice, no copy) and :func:`combine` makes one frame of a report's tables:
joined, converted to pandas once and put in canonical order.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import SchemaError
from ..query.timegrid import epoch_micros, owned_mask
from ..schema import schema_for
from . import _arrowjson
from ._order import canonical
from ._request import RequestInfo, request_info
from ._util import SHARED_BLOCKS
from .api import ARROW_MIN_BYTES, read_csv, to_frame
from .detect import detect_shape, first_byte, parse_json
from .service import is_service_answer, service_request
from .timeseries import Block, build_table, dimensions, read_blocks

__all__ = ["combine", "owned", "read_rows", "table_of"]

#: Answers of at least this size are parsed by pyarrow, which leaves the GIL while it parses, so
#: the answers of a pull's threads are read at once; smaller ones cost less through orjson.
PART_ARROW_MIN_BYTES = 64 * 1024
#: The ``attrs`` of a JSON time series' table.
_SERIES_ATTRS = {"shape": "timeseries", "source": "json"}
#: The column that holds each shape's bucket stamp, by the column that tells the shape.
_BUCKET = ("time_stamp", "start_time", "date")


def read_rows(
    body: bytes, request: Any, *, csv: bool, arrow_min_bytes: int | None = PART_ARROW_MIN_BYTES
) -> pa.Table:
    """One answer's rows as an Arrow table (the layout of ``pa.Table.from_pandas`` for the
    frame :func:`~.api.to_frame` or :func:`~.api.read_csv` gives, ``attrs`` without the
    request).

    Args:
        body: the answer's bytes.
        request: the request it answers (a ``Report`` or its dict).
        csv: the body is CSV (else JSON).
        arrow_min_bytes: small JSON time series of at least this size are parsed by pyarrow
            first (None: never).

    Raises:
        SchemaError: the body is not the JSON (or CSV) of a known shape; a JSON answer that
            does not start like JSON.
    """
    if csv:
        return table_of(read_csv(body, request))
    body = body.removeprefix(b"\xef\xbb\xbf")
    head = first_byte(body)
    if head not in (b"{", b"["):
        shown = body[:120].decode("utf-8", errors="replace")
        raise SchemaError(f"the answer is not JSON: {shown!r}", where="char 0")
    small = len(body) < ARROW_MIN_BYTES and service_request(request) is None
    read = _series(body, request, arrow_min_bytes) if small and head == b"{" else None
    if read is None:
        return table_of(to_frame(body, request))
    blocks, names, req = read
    return build_table(blocks, names, req, _SERIES_ATTRS)


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
    column = next(table.column(c) for c in _BUCKET if c in table.column_names)
    micros: np.ndarray = np.asarray(column.to_numpy()).view(np.int64)
    return micros


def owned(
    table: pa.Table,
    start: datetime,
    end: datetime,
    *,
    first: bool,
    last: bool,
    at_end: bool = False,
) -> tuple[pa.Table, int]:
    """The rows a window ``[start, end)`` owns (``(start, end]`` with ``at_end``: v2 stamps
    each piece at its end), by :func:`~edgereports.query.timegrid.owned_mask`: the first window
    also owns what lies before it, the last what lies after.

    Returns:
        The owned rows (``table`` itself when it owns them all; a run of kept rows is a slice,
        not a copy), and how many rows went after ``end``.
    """
    if (first and last) or not table.num_rows:
        return table, 0
    at = stamps(table)
    low, high = epoch_micros(start), epoch_micros(end)
    keep = owned_mask(at, low, high, first=first, last=last, at_end=at_end)
    if keep is None or bool(keep.all()):
        return table, 0
    after = 0 if last else int(np.count_nonzero((at > high) if at_end else (at >= high)))
    return _take(table, keep), after


def _take(table: pa.Table, keep: np.ndarray) -> pa.Table:
    """The rows ``keep`` marks: slices of ``table`` for a few runs, else a filter."""
    edges = np.flatnonzero(np.diff(keep.astype(np.int8), prepend=0, append=0))
    runs = edges.reshape(-1, 2)
    if len(runs) > SHARED_BLOCKS:
        return table.filter(pa.array(keep))
    if len(runs) <= 1:
        return (
            table.slice(int(runs[0, 0]), int(runs[0, 1] - runs[0, 0])) if len(runs) else table[:0]
        )
    return pa.concat_tables([table.slice(int(a), int(b - a)) for a, b in runs])


def combine(tables: Sequence[pa.Table], request: Any, *, ordered: bool = False) -> pd.DataFrame:
    """One frame of a report's tables (branch by branch, windows in order), sorted as one
    answer would be.

    Tables of different dimensions are joined on the union of their columns (in order of first
    appearance; a table without one gets nulls), with the pinned Arrow schema.

    Args:
        tables: the tables, at least one.
        request: the report's request: its metric order ranks the metrics.
        ordered: the tables are one answer (already in order).

    Returns:
        The frame; ``attrs`` are those of the first table (shape and source).
    """
    if all(t.schema.equals(tables[0].schema) for t in tables):
        joined = pa.concat_tables(tables)
    else:
        joined = _pinned(pa.concat_tables(tables, promote_options="default"), tables[0])
    columns = [
        c.combine_chunks() if c.num_chunks > SHARED_BLOCKS else c for c in joined.itercolumns()
    ]
    frame: pd.DataFrame = pa.Table.from_arrays(columns, schema=joined.schema).to_pandas()
    if ordered:
        return frame
    attrs, frame.attrs = frame.attrs, {}
    out = canonical(frame, attrs["shape"], request_info(request, raw=False))
    out.attrs = attrs
    return out


def _pinned(joined: pa.Table, first: pa.Table) -> pa.Table:
    """``joined`` (tables of one shape, their columns unified) in the pinned column order,
    with the pandas metadata of its frame (``first``'s ``attrs``)."""
    attrs = (first.schema.pandas_metadata or {}).get("attributes") or {}
    shape = str(attrs.get("shape", "timeseries"))
    fixed = set(schema_for(shape).fixed)
    dims = tuple(c for c in joined.column_names if c not in fixed)
    schema = _pandas_schema(shape, dims, tuple(sorted(attrs.items())))
    return pa.Table.from_arrays([joined.column(f.name) for f in schema], schema=schema)


@functools.cache
def _pandas_schema(
    shape: str, dims: tuple[str, ...], attrs: tuple[tuple[str, Any], ...]
) -> pa.Schema:
    """The Arrow schema, with pandas metadata, of a frame of ``shape``, ``dims`` and
    ``attrs``."""
    empty = schema_for(shape).empty(list(dims))
    empty.attrs = dict(attrs)
    return pa.Schema.from_pandas(empty, preserve_index=False)
