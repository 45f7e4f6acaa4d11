"""Flat point columns (from pyarrow JSON or CSV) into time-series blocks, without Python loops.

A key column (echoed key, metric name, aggregation, percentile) is a constant, or a pyarrow
array. Rows are split where any key changes from one row to the next (found by comparing each
text column with itself shifted by one row, once: a column with no change is a constant; the
columns of a large answer are compared in parallel, as pyarrow's kernels leave the GIL); each
run of equal keys becomes a
:class:`~.timeseries.Block` holding slices of the stamp and value arrays. Columns with nulls or
numbers are dictionary-encoded instead. When there are very many runs (rows of several series
interleaved), rows are grouped by dictionary codes with a stable sort.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .timeseries import Block

_MAX_RUNS = 10_000
#: Columns of at least this many rows are compared in parallel (below, threads cost more).
PARALLEL_ROWS = 100_000


@dataclass(frozen=True)
class KeyColumn:
    """A column that identifies a series.

    Attributes:
        values: ``[constant]``, or the dictionary of ``codes``.
        codes: one index into ``values`` per row (-1 for null), when dictionary-encoded.
        array: the column itself (no nulls), when compared row to row.
        changed: with ``array``, whether each row 1..n-1 differs from the row before.
    """

    values: list[Any] = field(default_factory=list)
    codes: np.ndarray | None = None
    array: pa.Array | pa.ChunkedArray | None = None
    changed: np.ndarray | None = None

    @property
    def is_constant(self) -> bool:
        """Whether every row holds ``values[0]``."""
        return self.codes is None and self.array is None

    def at(self, row: int) -> Any:
        """Return the value of ``row``."""
        if self.array is not None:
            return self.array[row].as_py()
        if self.codes is None:
            return self.values[0]
        code = int(self.codes[row])
        return None if code < 0 else self.values[code]

    def changes(self) -> np.ndarray:
        """Return, for rows 1..n-1, whether the key differs from the row before."""
        if self.changed is not None:
            return self.changed
        if self.codes is None:
            raise ValueError("a constant key column never changes")
        return np.asarray(self.codes[1:] != self.codes[:-1])

    def coded(self) -> np.ndarray:
        """Return one dictionary code per row (-1 for null)."""
        if self.codes is not None:
            return self.codes
        if self.array is None:
            raise ValueError("a constant key column has no codes")
        codes = encoded(self.array).codes
        return codes if codes is not None else np.zeros(len(self.array), dtype=np.int32)


def constant(value: Any) -> KeyColumn:
    """Return a key column with the same value on every row."""
    return KeyColumn([value])


def column(arr: pa.Array | pa.ChunkedArray) -> KeyColumn:
    """Return the key column of a pyarrow text column: a constant when it is one."""
    if len(arr) == 0 or arr.null_count or not _is_text(arr.type):
        return encoded(arr)
    n = len(arr)
    differ = pc.not_equal(arr.slice(1), arr.slice(0, n - 1))
    if not pc.any(differ).as_py():
        return constant(arr[0].as_py())
    changed = np.asarray(differ.to_numpy(zero_copy_only=False), dtype=bool)
    return KeyColumn(array=arr, changed=changed)


def columns(arrays: Sequence[pa.Array | pa.ChunkedArray]) -> list[KeyColumn]:
    """Return the key columns of several pyarrow columns (see :func:`column`), in parallel for
    large ones."""
    workers = min(len(arrays), os.cpu_count() or 1)
    if workers < 2 or len(arrays[0]) < PARALLEL_ROWS:
        return [column(a) for a in arrays]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(column, arrays))


def encoded(arr: pa.Array | pa.ChunkedArray) -> KeyColumn:
    """Return the dictionary-encoded key column of a pyarrow column (nulls allowed)."""
    if isinstance(arr, pa.ChunkedArray):
        if pa.types.is_dictionary(arr.type):
            arr = arr.unify_dictionaries()
        arr = pa.concat_arrays(arr.chunks) if arr.num_chunks != 1 else arr.chunk(0)
    if not pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_encode(null_encoding="mask")
    values = arr.dictionary.to_pylist()
    indices = arr.indices
    if indices.null_count:
        indices = indices.fill_null(pa.scalar(-1, indices.type))
    codes = np.asarray(indices.to_numpy(zero_copy_only=False))
    if len(values) == 1 and not (codes < 0).any():
        return KeyColumn(values)
    return KeyColumn(values, codes)


def blocks(
    echo: Sequence[KeyColumn],
    name: KeyColumn,
    aggregation: KeyColumn | None,
    percentile: KeyColumn | None,
    stamps: np.ndarray,
    values: np.ndarray,
) -> list[Block]:
    """Split flat columns into blocks of one series each, in order of first appearance.

    Args:
        echo: the echoed keys' columns, in order.
        name: the metric name column (no nulls).
        aggregation: the aggregation column, or None when absent.
        percentile: a percentile column (float values), or None.
        stamps: int64 microseconds per row.
        values: float64 per row.

    Returns:
        The blocks (views of ``stamps`` and ``values`` where the rows are contiguous).
    """
    keys = [*echo, name] + [k for k in (aggregation, percentile) if k is not None]
    out = []
    for first, rows in _groups(keys, len(stamps)):
        pct = percentile.at(first) if percentile is not None else None
        out.append(
            Block(
                tuple(k.at(first) for k in echo),
                name.at(first),
                aggregation.at(first) if aggregation is not None else None,
                stamps[rows],
                values[rows],
                None if pct is None or pct != pct else float(pct),
                (rows.start, rows.stop) if isinstance(rows, slice) else None,
            )
        )
    return out


def _groups(keys: Sequence[KeyColumn], n: int) -> list[tuple[int, slice | np.ndarray]]:
    """Row selections with one key each: ``(first row, selection)``, by first appearance."""
    varying = [k for k in keys if not k.is_constant]
    if not varying or n == 0:
        return [(0, slice(0, n))] if n else []
    change = np.zeros(n - 1, dtype=bool)
    for k in varying:
        change |= k.changes()
    bounds = np.flatnonzero(change) + 1
    if len(bounds) < _MAX_RUNS:
        edges = [0, *bounds.tolist(), n]
        return [(a, slice(a, b)) for a, b in itertools.pairwise(edges)]
    stacked = np.stack([k.coded().astype(np.int64) for k in varying], axis=1)
    _, inverse = np.unique(stacked, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    parts = np.split(order, np.cumsum(np.bincount(inverse))[:-1])
    return sorted(((int(p[0]), p) for p in parts), key=lambda fp: fp[0])


def _is_text(kind: pa.DataType) -> bool:
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))
