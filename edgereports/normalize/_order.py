"""Canonical row order of assembled frames, found without a Python object per row.

The order is that of :func:`edgereports.to_frame`: series by their echoed keys (first
appearance), then the metric entry (request order, unknown entries after them in order of
appearance), then time. An assembled frame is made of answers, each already in that order, so
its rows come in runs of one series and metric entry: the runs are found by comparing each key
column with itself shifted by one row, ranked in Python (a handful of values per run), and the
rows are moved only when the runs are out of order. A frame of very many short runs is ranked
row by row on integer codes (pyarrow dictionary encoding, ``pandas.factorize``) instead.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._dependencies import lazy_import
from ..schema import COMPARE_DTYPES, STRING, schema_for
from ._request import RequestInfo
from ._util import arrow_pool

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    np = lazy_import("numpy")
    pd = lazy_import("pandas")
    pa = lazy_import("pyarrow")
    pc = lazy_import("pyarrow.compute")

_TIME = {"timeseries": "time_stamp", "current": "start_time", "sim_count": "date"}
#: The fixed columns that order rows (besides the dimensions).
_KEYS = ("account_id", "metric", "aggregation", "percentile")
#: Above this many runs (and more than a quarter of the rows), rank row by row.
_MAX_RUNS = 100_000
#: Up to this many rows, text values are read one by one rather than taken.
_FEW_ROWS = 1000

Entry = tuple[str, str | None, float | None]


def datetimes(column: pd.Series) -> np.ndarray:
    """The ``datetime64`` values of a timestamp column (naive UTC for timezone-aware ones)."""
    values = column.array
    if isinstance(column.dtype, pd.DatetimeTZDtype):
        values = values.tz_convert(None)
    return np.asarray(values)


def canonical(frame: pd.DataFrame, shape: str, req: RequestInfo | None) -> pd.DataFrame:
    """Sort ``frame`` as one answer is: series (first appearance), metric entry, then time.

    ``frame`` comes without ``attrs`` (pandas copies them on every step); ``req``, when known,
    ranks the metrics. Returns ``frame`` itself when it is in that order already, else a
    sorted copy with a RangeIndex.
    """
    if len(frame) < 2:
        return frame
    columns = {c: frame[c] for c in _key_columns(frame.columns, shape)}
    order = _order(columns, datetimes(frame[_TIME[shape]]).view(np.int64), req)
    return frame if order is None else take_rows(frame, order)


def table_order(
    table: pa.Table, shape: str, req: RequestInfo | None, starts: np.ndarray | None = None
) -> np.ndarray | None:
    """The rows of ``table`` (of ``shape``, assembled from several answers) in the order of
    :func:`canonical`, as positions; None when they are in that order already. ``starts``, if
    given, are the first rows of its runs of one series and metric entry."""
    if table.num_rows < 2:
        return None
    columns = {c: _series(table.column(c)) for c in _key_columns(table.column_names, shape)}
    times = np.asarray(table.column(_TIME[shape]).to_numpy()).view(np.int64)
    return _order(columns, times, req, starts)


def _key_columns(names: Iterable[Any], shape: str) -> list[str]:
    """The columns that order rows: ``account_id``, the dimensions, the metric entry's."""
    other = {*schema_for(shape).fixed, *COMPARE_DTYPES} - set(_KEYS)
    return [str(c) for c in names if c not in other]


def _series(column: pa.ChunkedArray) -> pd.Series:
    """A table's column as the Series :func:`canonical` reads (text: its chunks, no copy)."""
    if pa.types.is_large_string(column.type):
        return pd.Series(pd.arrays.ArrowStringArray(column), dtype=STRING, copy=False)
    return pd.Series(column.to_numpy(), copy=False)


def _order(
    columns: dict[str, pd.Series],
    times: np.ndarray,
    req: RequestInfo | None,
    starts: np.ndarray | None = None,
) -> np.ndarray | None:
    """The canonical order of rows of key ``columns`` (:func:`_key_columns`) and ``times``
    (runs starting at ``starts``, else found)."""
    entries = [columns.pop(c) for c in ("metric", "aggregation", "percentile") if c in columns]
    series = [columns.pop("account_id")] if "account_id" in columns else []
    series += columns.values()
    keys = Keys(series, entries, times)
    n = len(times)
    starts = _runs([*series, *entries], n) if starts is None else starts
    if starts is None or (len(starts) >= _MAX_RUNS and len(starts) > n // 4):
        return _row_order(keys, req)
    return _run_order(starts, keys, req)


def take_rows(frame: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """The frame of ``rows`` (positions), with a RangeIndex and no ``attrs``.

    Text columns are taken by pyarrow into buffers of :func:`arrow_pool`, the others by their
    arrays' ``take``.
    """
    pool = arrow_pool()
    indices = pa.array(np.asarray(rows, dtype=np.int64))
    columns: dict[Any, pd.Series] = {}
    for name in frame.columns:
        column = frame[name]
        array = column.array
        if isinstance(array, pd.arrays.ArrowStringArray):
            taken = pc.take(pa.array(array), indices, memory_pool=pool)
            columns[name] = pd.Series(
                pd.arrays.ArrowStringArray(taken), dtype=column.dtype, copy=False
            )
        else:
            columns[name] = pd.Series(array.take(rows), dtype=column.dtype, copy=False)
    return pd.DataFrame(columns, copy=False)


# -- runs of equal keys -----------------------------------------------------------------------


def _runs(columns: Sequence[pd.Series], n: int) -> np.ndarray | None:
    """The first row of each run of equal keys, or None for a column of no known kind."""
    change = np.zeros(n - 1, dtype=bool)
    for column in columns:
        changes = _changes(column)
        if changes is None:
            return None
        change |= changes
    return np.concatenate(([0], np.flatnonzero(change) + 1))


def _changes(column: pd.Series) -> np.ndarray | None:
    """For rows 1..n-1, whether the value differs from the row before (nulls equal nulls)."""
    array = column.array
    if isinstance(array, pd.arrays.ArrowStringArray):
        data = pa.array(array)  # the column's chunks, no copy
        n = len(data)
        pool = arrow_pool()
        after, before = data.slice(1), data.slice(0, n - 1)
        differ = pc.not_equal(after, before, memory_pool=pool)
        if data.null_count:
            null_after = pc.is_null(after, memory_pool=pool)
            null_before = pc.is_null(before, memory_pool=pool)
            one_null = pc.xor(null_after, null_before, memory_pool=pool)
            differ = pc.coalesce(differ, one_null, memory_pool=pool)  # null: a null either side
        return np.asarray(differ.to_numpy(zero_copy_only=False), dtype=bool)
    if isinstance(column.dtype, np.dtype) and column.dtype.kind == "f":
        values = column.to_numpy()
        nan = np.isnan(values)
        same: np.ndarray = (values[1:] == values[:-1]) | (nan[1:] & nan[:-1])
        return ~same
    return None


def _values(column: pd.Series, rows: np.ndarray) -> list[Any]:
    """The values of ``rows`` (NaN and nulls as None)."""
    array = column.array
    if isinstance(array, pd.arrays.ArrowStringArray):
        data = pa.array(array)  # the column's chunks, no copy
        # a value each costs less than setting up a take; and a take from many chunks (the
        # slices of a text column) would join them into one array first
        if len(rows) <= _FEW_ROWS or (isinstance(data, pa.ChunkedArray) and data.num_chunks > 1):
            return [data[i].as_py() for i in rows.tolist()]
        taken: list[Any] = pc.take(data, pa.array(rows), memory_pool=arrow_pool()).to_pylist()
        return taken
    values = column.to_numpy()[rows].tolist()
    return [None if isinstance(v, float) and math.isnan(v) else v for v in values]


@dataclass(frozen=True)
class Keys:
    """What orders a frame's rows: the series columns, the metric entry's, the stamps."""

    series: Sequence[pd.Series]
    entries: Sequence[pd.Series]
    times: np.ndarray


def _run_order(starts: np.ndarray, keys: Keys, req: RequestInfo | None) -> np.ndarray | None:
    """The rows in canonical order (None when they already are), ranked run by run."""
    series, entries, times = keys.series, keys.entries, keys.times
    n = len(times)
    runs = len(starts)
    named = list(zip(*[_values(c, starts) for c in series], strict=True)) or [()] * runs
    series_code: dict[tuple[Any, ...], int] = {}
    run_series = [series_code.setdefault(k, len(series_code)) for k in named]
    if entries:
        found = list(zip(*[_values(c, starts) for c in entries], strict=True))
        answered = [_entry(*e) for e in found]
        distinct = list(dict.fromkeys(answered))
        rank_of = dict(zip(distinct, _ranks(distinct, req), strict=True))
        run_rank = [rank_of[e] for e in answered]
    else:
        run_rank = [0] * runs
    group = list(zip(run_series, run_rank, strict=True))
    ends = [*starts[1:].tolist(), n]
    down = np.flatnonzero(times[1:] < times[:-1]) + 1  # rows earlier than the row before
    is_start = np.zeros(n + 1, dtype=bool)
    is_start[starts] = True
    ordered = all(a <= b for a, b in itertools.pairwise(group))
    if ordered and len(down):
        first_run = np.searchsorted(starts, down, side="right") - 1
        ordered = all(
            bool(is_start[row]) and group[k - 1] < group[k]
            for row, k in zip(down.tolist(), first_run.tolist(), strict=True)
        )
    if ordered:
        return None
    members: dict[tuple[int, int], list[int]] = {}
    for k, g in enumerate(group):
        members.setdefault(g, []).append(k)
    pieces = []
    for g in sorted(members):
        rows = np.concatenate([np.arange(starts[k], ends[k]) for k in members[g]])
        stamps = times[rows]
        if len(rows) > 1 and bool((stamps[1:] < stamps[:-1]).any()):
            rows = rows[np.argsort(stamps, kind="stable")]
        pieces.append(rows)
    order: np.ndarray = np.concatenate(pieces)
    return order


# -- row by row -------------------------------------------------------------------------------


def _codes(column: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """The codes of a column's values in order of first appearance, and the values."""
    array = column.array
    if isinstance(array, pd.arrays.ArrowStringArray):
        data = pa.array(array)
        encoded = pc.dictionary_encode(data, null_encoding="encode", memory_pool=arrow_pool())
        chunks = encoded.chunks if isinstance(encoded, pa.ChunkedArray) else [encoded]
        values = chunks[-1].dictionary if chunks else None
        if values is not None and all(c.dictionary.equals(values) for c in chunks[:-1]):
            codes = [np.asarray(c.indices.to_numpy(zero_copy_only=False)) for c in chunks]
            return np.concatenate(codes).astype(np.int64, copy=False), values.to_pylist()
    own, uniques = pd.factorize(column, use_na_sentinel=False)
    values_ = [None if isinstance(v, float) and math.isnan(v) else v for v in uniques]
    return np.asarray(own, dtype=np.int64), values_


def _combine(codes: Sequence[tuple[np.ndarray, list[Any]]], n: int) -> np.ndarray:
    """Codes of the tuples of several columns' codes, in order of first appearance."""
    if not codes:
        return np.zeros(n, dtype=np.int64)
    out = codes[0][0]
    for own, values in codes[1:]:
        # the pair (codes so far, this column's code) as one number below n * len(values),
        # renumbered in order of first appearance
        joined, _ = pd.factorize(out * max(len(values), 1) + own)
        out = np.asarray(joined, dtype=np.int64)
    return out


def _row_order(keys: Keys, req: RequestInfo | None) -> np.ndarray | None:
    """The rows in canonical order (None when they already are), ranked row by row."""
    series, entries, times = keys.series, keys.entries, keys.times
    n = len(times)
    series_codes = _combine([_codes(c) for c in series], n) if series else np.zeros(n, np.int64)
    if entries:
        columns = [_codes(c) for c in entries]
        codes = _combine(columns, n)
        _, firsts = np.unique(codes, return_index=True)  # a row of each entry, by entry code
        answered = [
            _entry(*[values[own[row]] for own, values in columns]) for row in firsts.tolist()
        ]
        rank = np.asarray(_ranks(answered, req), dtype=np.int64)[codes]
    else:
        rank = np.zeros(n, dtype=np.int64)
    order: np.ndarray = np.lexsort((times, rank, series_codes))
    return None if bool((order[1:] > order[:-1]).all()) else order


# -- ranking metric entries -------------------------------------------------------------------


def _entry(name: Any, agg: Any = None, pct: Any = None) -> Entry:
    return (
        str(name),
        agg if isinstance(agg, str) else None,
        float(pct) if isinstance(pct, int | float) and not math.isnan(pct) else None,
    )


def _ranks(entries: Sequence[Entry], req: RequestInfo | None) -> list[int]:
    """Rank metric entries (in order of first appearance) as the frame builder orders them.

    An entry's key is the index of the requested entry it answers (for a percentile, the one
    asked with that percentile), else the number of requested entries plus the first
    appearance of its ``(metric, aggregation)``; equal keys keep their order of appearance.
    """
    n_req = len(req.metrics) if req is not None else 0
    pairs: dict[tuple[str, str | None], int] = {}
    keys: list[tuple[int, int]] = []
    for code, (name, agg, pct) in enumerate(entries):
        pair = pairs.setdefault((name, agg), len(pairs))
        index = _requested(req, name, agg, pct) if req is not None else None
        keys.append((index if index is not None else n_req + pair, code))
    ranks = [0] * len(keys)
    for rank, code in enumerate(sorted(range(len(keys)), key=keys.__getitem__)):
        ranks[code] = rank
    return ranks


def _requested(req: RequestInfo, name: str, agg: str | None, pct: float | None) -> int | None:
    """The index of the requested entry an answered entry belongs to, or None."""
    if pct is not None:
        for i, m in enumerate(req.metrics):
            if m.name == name and m.percentile == pct:
                return i
    return req.match(name, agg)[0]
