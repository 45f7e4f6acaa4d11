"""Time-series answers: the reader of parsed JSON, and the frame builder.

Parsed JSON (large bodies go to :mod:`._arrowjson` first) is read one inner ``result`` array
at a time, its stamps cast by pyarrow; an array that does not fit that path is read point by
point, which finds the exact place of any error. Members of a point other than
``time_stamp``, ``name``, ``value`` and ``aggregation_type`` are ignored. Rows come out in
the canonical order of :mod:`._order`, whatever order the service used.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from .._dependencies import lazy_import
from ..schema import STRING, TIMESERIES
from ._request import RequestInfo
from ._util import (
    Where,
    block_string_array,
    block_strings,
    check_member_name,
    fail,
    ident,
    parse_stamps,
    parse_values,
    shared_chunks,
    timestamp_column,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
else:
    np = lazy_import("numpy")
    pd = lazy_import("pandas")
    pa = lazy_import("pyarrow")

_TS = itemgetter("time_stamp")
_VALUE = itemgetter("value")
_NAME = itemgetter("name")
_AGG = itemgetter("aggregation_type")


@dataclass
class Block:
    """Points of one metric entry (and one set of echoed keys).

    Attributes:
        echo: the echoed keys' values, aligned with the builder's ``echo_names``.
        name: the metric name.
        aggregation: the ``aggregation_type`` the service sent, or None.
        stamps: int64 microseconds, UTC.
        values: float64 measures.
        percentile: the percentile given by the payload itself (CSV), or None to take it
            from the request.
        rows: ``(start, stop)`` of the rows it holds in a flat source (pyarrow JSON or CSV),
            or None.
    """

    echo: tuple[str | None, ...]
    name: str
    aggregation: str | None
    stamps: np.ndarray
    values: np.ndarray
    percentile: float | None = None
    rows: tuple[int, int] | None = None


def read_json(payload: Mapping[str, Any], req: RequestInfo | None, *, owned: bool) -> pd.DataFrame:
    """Read a time-series answer ``{"result": [[point, ...], ...], <echoed keys>}``.

    ``owned``: the payload was parsed here, so inner arrays may be dropped once read. The
    frame's attrs are not set yet.

    Raises:
        SchemaError: for anything that is not the time-series shape.
    """
    blocks, echo_names = read_blocks(payload, owned=owned)
    return build(blocks, echo_names, req)


def read_blocks(payload: Mapping[str, Any], *, owned: bool) -> tuple[list[Block], list[str]]:
    """The blocks of a time-series answer and the names of its echoed keys (no frame yet).

    Raises:
        SchemaError: for anything that is not the time-series shape.
    """
    result = payload["result"]
    if not isinstance(result, list):
        fail("result is not a list of lists", "result", result)
    echo_names: list[str] = []
    echo_values: list[str | None] = []
    for key, value in payload.items():
        if key == "result":
            continue
        echo_names.append(check_member_name(key, ""))
        echo_values.append(ident(value, key))
    echo = tuple(echo_values)
    blocks: list[Block] = []
    stamps = _Stamps()
    for i, arr in enumerate(result):
        if not isinstance(arr, list):
            fail("result item is not a list of points", f"result[{i}]", arr)
        if arr:
            blocks.extend(Block(echo, *parts) for parts in _read_array(arr, i, stamps))
        if owned:
            result[i] = None
    return blocks, echo_names


class _Stamps:
    """Parses the stamps of an answer's inner arrays; an array whose stamps equal those of the
    array before (every metric of a series, as the service answers) shares their parse, made
    read-only (comparing the texts costs a tenth of parsing them)."""

    def __init__(self) -> None:
        self._texts: list[Any] = []
        self._micros: np.ndarray | None = None

    def __call__(self, texts: list[Any], i: int) -> np.ndarray:
        if self._micros is not None and texts == self._texts:
            return self._micros
        micros = parse_stamps(texts, lambda j: f"result[{i}][{j}].time_stamp", "time_stamp")
        micros.flags.writeable = False  # blocks share it; a frame copies it (timestamp_column)
        self._texts, self._micros = texts, micros
        return micros


def _read_array(
    arr: list[Any], i: int, parse: _Stamps
) -> list[tuple[str, str | None, np.ndarray, np.ndarray]]:
    """Read one inner array: fast columnar path, or point by point when it does not fit."""
    try:
        first = arr[0]
        name = first["name"]
        agg = first.get("aggregation_type")
        if not isinstance(name, str) or not (agg is None or isinstance(agg, str)):
            return _read_points(arr, i)
        stamps = list(map(_TS, arr))
        values = list(map(_VALUE, arr))
        if set(map(_NAME, arr)) != {name}:
            return _read_points(arr, i)
        if agg is not None or "aggregation_type" in first:
            same = set(map(_AGG, arr)) == {agg}
        else:
            same = set(map(len, arr)) == {3}
        if not same:
            return _read_points(arr, i)
    except (KeyError, TypeError, AttributeError):
        return _read_points(arr, i)
    micros = parse(stamps, i)
    numbers = parse_values(values, lambda j: f"result[{i}][{j}].value", allow_text=False)
    return [(name, agg, micros, numbers)]


def _read_points(arr: list[Any], i: int) -> list[tuple[str, str | None, np.ndarray, np.ndarray]]:
    """Read one inner array point by point, checking every member; split by metric."""
    groups: dict[tuple[str, str | None], tuple[list[int], list[Any], list[Any]]] = {}
    for j, point in enumerate(arr):
        where = f"result[{i}][{j}]"
        if not isinstance(point, dict):
            fail("point is not an object", where, point)
        for key in ("time_stamp", "name", "value"):
            if key not in point:
                fail(f"point has no {key}", where, point)
        name = point["name"]
        if not isinstance(name, str):
            fail("name is not text", f"{where}.name", name)
        agg = point.get("aggregation_type")
        if agg is not None and not isinstance(agg, str):
            fail("aggregation_type is not text", f"{where}.aggregation_type", agg)
        index, stamps, values = groups.setdefault((name, agg), ([], [], []))
        index.append(j)
        stamps.append(point["time_stamp"])
        values.append(point["value"])
    out = []
    for (name, agg), (index, stamps, values) in groups.items():
        micros = parse_stamps(stamps, _where(i, index, "time_stamp"), "time_stamp")
        numbers = parse_values(values, _where(i, index, "value"), allow_text=False)
        out.append((name, agg, micros, numbers))
    return out


def _where(i: int, index: list[int], key: str) -> Where:
    return lambda k: f"result[{i}][{index[k]}].{key}"


def build(
    blocks: Sequence[Block],
    echo_names: Sequence[str],
    req: RequestInfo | None,
    source: Mapping[str, pa.Array | pa.ChunkedArray] | None = None,
) -> pd.DataFrame:
    """Assemble blocks into the timeseries frame, in canonical row order.

    Blocks are ordered by their echoed keys (first appearance), then by requested metric entry
    (request order, unknown ones after in order of appearance); blocks with the same key are
    merged, and each block is sorted by time (stable). ``source`` holds ``large_string``
    columns of the flat source the blocks' ``rows`` point into, by frame column name: sliced
    (no copy) when every block knows its rows. The frame's attrs are not set yet.

    Raises:
        SchemaError: when an echoed key clashes with a fixed column.
    """
    dims = dimensions(echo_names, req)
    merged = _merge(blocks, req)
    if not merged:
        return TIMESERIES.empty(dims)
    lengths, strings, percentiles = _layout(merged, echo_names, dims, req)
    spans = [b.rows for b in merged]
    reuse = dict(source or {}) if all(spans) else {}
    request_account = req.account_id if req is not None else None
    echoed = reuse.get("account_id")
    if request_account is not None and echoed is not None and echoed.null_count:
        reuse.pop("account_id")
    columns: dict[str, Any] = {"time_stamp": timestamp_column(_concat([b.stamps for b in merged]))}
    for col, per_block in strings.items():
        columns[col] = _strings(reuse.get(col), spans, per_block, lengths)
    columns["percentile"] = np.repeat(np.array(percentiles, dtype=np.float64), lengths)
    values = _concat([b.values for b in merged])
    # a view of a reader's memory is read-only: a frame's columns can be written to
    columns["value"] = values if values.flags.writeable else values.copy()
    return pd.DataFrame(columns, copy=False)


def build_table(
    blocks: Sequence[Block],
    echo_names: Sequence[str],
    req: RequestInfo | None,
    attrs: Mapping[str, str],
) -> tuple[pa.Table, list[int]]:
    """The Arrow table of the frame :func:`build` gives for the same blocks with ``attrs``:
    the schema and pandas metadata of ``pa.Table.from_pandas(frame, preserve_index=False)``,
    built from the blocks' arrays (no frame); and the length of each of its runs of rows of
    one series and metric entry.

    Raises:
        SchemaError: when an echoed key clashes with a fixed column.
    """
    dims = dimensions(echo_names, req)
    schema = _table_schema(tuple(dims), tuple(attrs.items()))
    merged = _merge(blocks, req)
    if not merged:
        return schema.empty_table(), []
    lengths, strings, percentiles = _layout(merged, echo_names, dims, req)
    # a chunk per block: the blocks' own arrays (no copy; the metrics of a series may share
    # their stamps), and the text and percentiles slices of one array per value
    kind = schema.field(0).type
    stamps = [pa.array(b.stamps.astype(np.int64, copy=False)).view(kind) for b in merged]
    arrays: list[pa.Array | pa.ChunkedArray] = [pa.chunked_array(stamps, kind)]
    arrays.extend(block_string_array(per_block, lengths) for per_block in strings.values())
    # NaN is null, as pyarrow reads a frame's floats
    nulled = [None if math.isnan(p) else p for p in percentiles]
    arrays.append(pa.chunked_array(shared_chunks(nulled, lengths, pa.float64()), pa.float64()))
    values = [pa.array(b.values, pa.float64(), from_pandas=True) for b in merged]
    arrays.append(pa.chunked_array(values, pa.float64()))
    return pa.Table.from_arrays(arrays, schema=schema), lengths


@functools.cache
def _table_schema(dims: tuple[str, ...], attrs: tuple[tuple[str, str], ...]) -> pa.Schema:
    """The Arrow schema (with pandas metadata) of a timeseries frame with ``dims`` and
    ``attrs``."""
    empty = TIMESERIES.empty(list(dims))
    empty.attrs = dict(attrs)
    return pa.Schema.from_pandas(empty, preserve_index=False)


def _layout(
    merged: Sequence[Block], echo_names: Sequence[str], dims: list[str], req: RequestInfo | None
) -> tuple[list[int], dict[str, list[str | None]], list[float]]:
    """Each block's length, its value of each string column (in frame order) and its
    percentile."""
    lengths = [len(b.stamps) for b in merged]
    position = {name: k for k, name in enumerate(echo_names)}
    request_account = req.account_id if req is not None else None
    strings: dict[str, list[str | None]] = {}
    for col in ("account_id", *dims):
        k = position.get(col)
        per_block = [b.echo[k] if k is not None else None for b in merged]
        if col == "account_id":
            per_block = [v if v is not None else request_account for v in per_block]
        strings[col] = per_block
    strings["metric"] = [b.name for b in merged]
    strings["aggregation"] = [b.aggregation for b in merged]
    return lengths, strings, [_percentile(b, req) for b in merged]


def _strings(
    column: pa.Array | pa.ChunkedArray | None,
    spans: list[tuple[int, int] | None],
    per_block: list[str | None],
    lengths: list[int],
) -> pd.Series:
    """Slices of the source column (a large_string; no copy), else built per block."""
    if column is None or not pa.types.is_large_string(column.type):
        return block_strings(per_block, lengths)
    chunks: list[pa.Array] = []
    for span in spans:
        if span is None:  # pragma: no cover - reuse requires every span
            return block_strings(per_block, lengths)
        part = column.slice(span[0], span[1] - span[0])
        chunks.extend(part.chunks if isinstance(part, pa.ChunkedArray) else [part])
    array = pd.arrays.ArrowStringArray(pa.chunked_array(chunks, type=pa.large_string()))
    return pd.Series(array, dtype=STRING, copy=False)


def dimensions(echo_names: Sequence[str], req: RequestInfo | None) -> list[str]:
    """The frame's dimension columns: the request's, then the other echoed keys.

    Raises:
        SchemaError: an echoed key clashes with a fixed column.
    """
    dims = list(req.dimensions) if req is not None else []
    fixed = set(TIMESERIES.fixed)
    for name in echo_names:
        if name in fixed and name != "account_id":
            fail("echoed key clashes with a frame column", name)
        if name != "account_id" and name not in dims:
            dims.append(name)
    return [d for d in dims if d != "account_id"]


def _percentile(block: Block, req: RequestInfo | None) -> float:
    if block.percentile is not None:
        return block.percentile
    if req is None:
        return math.nan
    _, percentile = req.match(block.name, block.aggregation)
    return math.nan if percentile is None else percentile


def _merge(blocks: Sequence[Block], req: RequestInfo | None) -> list[Block]:
    """Group blocks by full key in canonical order and sort each by time."""
    echo_rank: dict[tuple[str | None, ...], int] = {}
    metric_seen: dict[tuple[str, str | None], int] = {}
    n_req = len(req.metrics) if req is not None else 0
    keyed: dict[tuple[Any, ...], list[Block]] = {}
    for b in blocks:
        if not len(b.stamps):
            continue
        e = echo_rank.setdefault(b.echo, len(echo_rank))
        seen = metric_seen.setdefault((b.name, b.aggregation), len(metric_seen))
        index = req.match(b.name, b.aggregation)[0] if req is not None else None
        m = index if index is not None else n_req + seen
        p = None if b.percentile is None or math.isnan(b.percentile) else b.percentile
        keyed.setdefault((e, m, b.name, b.aggregation, p), []).append(b)
    out = []
    first = {key: k for k, key in enumerate(keyed)}
    for key in sorted(keyed, key=lambda k: (k[0], k[1], first[k])):
        parts = keyed[key]
        stamps = _concat([b.stamps for b in parts])
        values = _concat([b.values for b in parts])
        rows = _joined_rows(parts)
        if len(stamps) > 1 and bool((stamps[1:] < stamps[:-1]).any()):
            order = np.argsort(stamps, kind="stable")
            stamps, values, rows = stamps[order], values[order], None
        head = parts[0]
        out.append(
            Block(head.echo, head.name, head.aggregation, stamps, values, head.percentile, rows)
        )
    return out


def _joined_rows(parts: Sequence[Block]) -> tuple[int, int] | None:
    """The source rows of consecutive parts, or None."""
    if any(p.rows is None for p in parts):
        return None
    spans = [p.rows for p in parts if p.rows is not None]
    if any(a[1] != b[0] for a, b in itertools.pairwise(spans)):
        return None
    return spans[0][0], spans[-1][1]


def _concat(arrays: list[np.ndarray]) -> np.ndarray:
    """Concatenate 1-D arrays; consecutive views of one array come back as a view, not a copy."""
    if len(arrays) == 1:
        return arrays[0]
    base = arrays[0].base
    if isinstance(base, np.ndarray) and base.ndim == 1 and base.flags.c_contiguous:
        step = base.itemsize
        start = arrays[0].__array_interface__["data"][0]
        end = start
        for a in arrays:
            if (
                a.base is not base
                or a.__array_interface__["data"][0] != end
                or a.strides != (step,)
            ):
                break
            end += a.nbytes
        else:
            first = (start - base.__array_interface__["data"][0]) // step
            if base.dtype == arrays[0].dtype and first >= 0:
                return base[first : first + (end - start) // step]
    return np.concatenate(arrays)
