"""Flat point columns (from pyarrow JSON or CSV) into time-series blocks, without Python loops.

Rows are split where any key column (echoed key, metric name, aggregation, percentile) changes
from one row to the next; each run becomes a :class:`~.timeseries.Block` of slices of the stamp
and value arrays. With very many runs (series interleaved), rows are grouped by dictionary
codes with a stable sort instead.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._dependencies import lazy_import
from ._util import fail
from .timeseries import Block

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    np = lazy_import("numpy")
    pa = lazy_import("pyarrow")
    pc = lazy_import("pyarrow.compute")

_MAX_RUNS = 10_000
#: A text column is checked for runs in pieces of at most this many rows (see :func:`column`).
PIECE_ROWS = 1 << 16


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
            return _text(self.array[row].as_py())
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
    """Return the key column of a pyarrow text column: a constant when it is one.

    A column read as bytes (``binary``) is text whose UTF-8 is checked once per distinct value,
    when its values are decoded (:class:`SchemaError` for bytes that are not UTF-8): each row
    holds the bytes of a decoded value.

    The column is taken in pieces (its chunks, at most ``PIECE_ROWS`` rows each). A piece whose
    first and last rows agree is compared as a whole with that value repeated: its offsets and
    bytes against those of the value written ``len(piece)`` times, two ``memcmp`` calls and no
    per-row work. Only the pieces that hold more than one value are compared row to row.
    """
    if len(arr) == 0 or arr.null_count or not _is_text(arr.type):
        return encoded(arr)
    pieces = _pieces(arr)
    patterns = _Patterns(pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type))
    firsts: list[str | bytes] = []
    lasts: list[str | bytes] = []
    mixed: list[bool] = []
    for piece in pieces:
        first, last = piece[0].as_py(), piece[len(piece) - 1].as_py()
        one = first == last and _holds_only(piece, first, patterns)
        firsts.append(first)
        lasts.append(last)
        mixed.append(not one)
    if not any(mixed) and all(f == firsts[0] for f in firsts):
        return constant(_text(firsts[0]))
    changed = np.zeros(len(arr) - 1, dtype=bool)
    at = 0
    for k, piece in enumerate(pieces):
        if k:
            changed[at - 1] = firsts[k] != lasts[k - 1]
        n = len(piece)
        if mixed[k] and n > 1:
            differ = pc.not_equal(piece.slice(1), piece.slice(0, n - 1))
            changed[at : at + n - 1] = differ.to_numpy(zero_copy_only=False)
        at += n
    return KeyColumn(array=arr, changed=changed)


def columns(arrays: Sequence[pa.Array | pa.ChunkedArray]) -> list[KeyColumn]:
    """Return the key columns of several pyarrow columns (see :func:`column`).

    One after another: the comparisons stream the columns' memory, so a second thread does
    not make them faster.
    """
    return [column(a) for a in arrays]


def encoded(arr: pa.Array | pa.ChunkedArray) -> KeyColumn:
    """Return the dictionary-encoded key column of a pyarrow column (nulls allowed)."""
    if isinstance(arr, pa.ChunkedArray):
        if pa.types.is_dictionary(arr.type):
            arr = arr.unify_dictionaries()
        arr = pa.concat_arrays(arr.chunks) if arr.num_chunks != 1 else arr.chunk(0)
    if not pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_encode(null_encoding="mask")
    values = [_text(v) for v in arr.dictionary.to_pylist()]
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

    The blocks are views of ``stamps`` and ``values`` where their rows are contiguous.
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


def _pieces(arr: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    """The non-empty chunks of ``arr``, cut to at most ``PIECE_ROWS`` rows each."""
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    return [
        chunk.slice(start, PIECE_ROWS)
        for chunk in chunks
        for start in range(0, len(chunk), PIECE_ROWS)
    ]


class _Patterns:
    """Values written over and over: the offsets and bytes of a text array holding only one."""

    def __init__(self, wide: bool) -> None:
        self.kind = np.dtype(np.int64 if wide else np.int32)
        self._made: dict[str | bytes, tuple[np.ndarray, pa.Buffer, pa.Buffer]] = {}

    def of(self, value: str | bytes, rows: int) -> tuple[np.ndarray, pa.Buffer, pa.Buffer]:
        """Return the offsets (array and buffer) and bytes of ``value`` repeated at least
        ``rows`` times: made once per value, and again for a longer piece."""
        made = self._made.get(value)
        if made is None or len(made[0]) <= rows:
            data = value.encode() if isinstance(value, str) else value
            offsets = np.arange(rows + 1, dtype=self.kind) * len(data)
            made = offsets, pa.py_buffer(offsets), pa.py_buffer(data * rows)
            self._made[value] = made
        return made


def _holds_only(piece: pa.Array, value: str | bytes, patterns: _Patterns) -> bool:
    """Whether every row of ``piece`` (text, no nulls; its first row is ``value``) is ``value``:
    its offsets and bytes are those of ``value`` repeated."""
    n, width = len(piece), patterns.kind.itemsize
    _, own_offsets, own_data = piece.buffers()
    own = np.frombuffer(own_offsets, patterns.kind, n + 1, piece.offset * width)
    start = int(own[0])
    size = int(own[n]) - start
    if size != n * (int(own[1]) - start):
        return False  # not n rows of the first one's length; no pattern larger than the piece
    offsets, offsets_buffer, data = patterns.of(value, n)
    if start == 0:
        own_bytes = own_offsets.slice(piece.offset * width, (n + 1) * width)
        same = bool(own_bytes.equals(offsets_buffer.slice(0, (n + 1) * width)))
    else:
        same = bool(np.array_equal(own - start, offsets[: n + 1]))
    if not same or size == 0:
        return same
    return bool(own_data.slice(start, size).equals(data.slice(0, size)))


def _is_text(kind: pa.DataType) -> bool:
    return bool(kind in (pa.string(), pa.large_string(), pa.binary(), pa.large_binary()))


def _text(value: Any) -> Any:
    """A key's value; bytes (from a column read as binary) decoded as UTF-8."""
    if not isinstance(value, bytes):
        return value
    try:
        return value.decode()
    except UnicodeDecodeError:
        fail("text is not valid UTF-8", "", value)
