"""The cache's segment files: what one holds, how it is written, and how it is checked.

A segment is one Arrow IPC file holding one or more *entries*: the rows of some chunks of one
series (one request's fan-out branch), each a run of the file's rows. The rows the writer
thread of a pull has at hand are stored together, so a cold pull writes a few files rather
than one per part. The file's schema metadata lists the entries: the series, each chunk's
bounds and rows, the row range, the attrs of the answer and the request it answers (which
holds no key). The file's name carries the CRC-32 of its bytes.

Reading one checks both: bytes that fail the checksum, or metadata that cannot be read, make
the whole file unusable (every entry of it is dropped and fetched again); an entry is served
only for the series and chunks it names.
"""

from __future__ import annotations

import uuid
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

__all__ = ["Chunks", "Entry", "Segment", "checksum", "encode", "group", "name_of"]

#: The entries of a segment (series, chunks, row range, attrs, request), as JSON.
_ENTRIES = b"edgereports.entries"
# a segment of the first format: one series, its attrs and request in keys of their own
_ATTRS = b"edgereports.attrs"
_REQUEST = b"edgereports.request"
_IDENTITY = b"edgereports.identity"
_OURS = (_ENTRIES, _ATTRS, _REQUEST, _IDENTITY)

#: Chunk bounds and rows: chunk start (epoch seconds) -> (chunk end, rows).
Chunks = Mapping[int, tuple[int, int]]


@dataclass(frozen=True)
class Entry:
    """The rows of some chunks of one series, to be stored (or as read back).

    Attributes:
        series: the series key.
        chunks: chunk start -> (chunk end, rows), epoch seconds.
        table: the rows, in the order of the answer.
        attrs: the attrs of the answer they came from.
        request: the request they answer (no key in it).
    """

    series: str
    chunks: Chunks
    table: pa.Table
    attrs: dict[str, Any]
    request: Any


def checksum(data: bytes | memoryview) -> str:
    """The CRC-32 of ``data`` as 8 hex digits (the end of a segment's name)."""
    return f"{zlib.crc32(data):08x}"


def name_of(data: pa.Buffer) -> str:
    """A new segment's name: a unique id and the checksum of its bytes."""
    return f"{uuid.uuid4().hex}-{checksum(memoryview(data))}"


def group(entries: Sequence[Entry]) -> list[list[Entry]]:
    """``entries`` in files: those of one schema (metadata included: it carries the frame's
    pandas metadata) together, at most one entry of a series in each, in order."""
    groups: list[tuple[list[Entry], set[str]]] = []
    for entry in entries:
        for same, series in groups:
            if entry.series not in series and same[0].table.schema.equals(
                entry.table.schema, check_metadata=True
            ):
                same.append(entry)
                series.add(entry.series)
                break
        else:
            groups.append(([entry], {entry.series}))
    return [same for same, _ in groups]


def encode(entries: Sequence[Entry]) -> pa.Buffer:
    """One segment file holding ``entries`` (of one schema: see :func:`group`), their rows one
    after another in one table whose string columns (and those no row fills) are run-end
    encoded."""
    import pyarrow as pa

    table = _runs(pa.concat_tables([entry.table for entry in entries]))
    schema = table.schema
    listed: list[dict[str, Any]] = []
    at = 0
    for entry in entries:
        starts = sorted(entry.chunks)  # chunk starts, ends and rows: flat lists, no pairs
        bounds = [entry.chunks[c] for c in starts]
        listed.append(
            {
                "series": entry.series,
                "starts": starts,
                "ends": [e for e, _ in bounds],
                "counts": [n for _, n in bounds],
                "rows": [at, entry.table.num_rows],
                "attrs": entry.attrs,
                "request": entry.request,
            }
        )
        at += entry.table.num_rows
    meta = {k: v for k, v in (schema.metadata or {}).items() if k not in _OURS}
    meta[_ENTRIES] = orjson.dumps(listed, default=str)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, schema.with_metadata(meta)) as out:
        out.write_table(table)
    return sink.getvalue()


def _runs(table: pa.Table) -> pa.Table:
    """``table`` with its string columns, and those that hold nulls alone, run-end encoded:
    a frame's strings (account, subscriber, metric) hold one value for long runs of rows, and
    a column no row fills (the percentile of a sum) is one run, so the file is a fraction of
    the table's size (less to write, checksum and read)."""
    import pyarrow as pa

    if not any(_is_string(c.type) or _unfilled(c) for c in table.columns):
        return table
    columns = [_encoded(c) for c in table.columns]
    return pa.Table.from_arrays(columns, names=table.column_names, metadata=table.schema.metadata)


def _encoded(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A column as :func:`_runs` stores it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if _unfilled(column):
        return _null_runs(column)
    if _is_string(column.type):
        encoded: pa.ChunkedArray = pc.run_end_encode(column, run_end_type=pa.int32())
        return encoded
    return column


def _null_runs(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A column of nulls alone, run-end encoded: one run per chunk, made without a pass."""
    import pyarrow as pa

    ends, kind = pa.int32(), column.type
    runs = [
        pa.RunEndEncodedArray.from_arrays(pa.array([len(c)], ends), pa.nulls(1, kind))
        for c in column.chunks
        if len(c)
    ]
    return pa.chunked_array(runs, pa.run_end_encoded(ends, kind))


def _unfilled(column: pa.ChunkedArray) -> bool:
    """Every row of ``column`` is null (and it has a type that can be run-end encoded)."""
    import pyarrow as pa

    return 0 < len(column) == column.null_count and not pa.types.is_null(column.type)


def _is_string(kind: pa.DataType) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def _plain(table: pa.Table) -> pa.Table:
    """``table`` with its run-end encoded columns decoded (see :func:`_runs`): a run of a
    column of few or long runs is a slice of one array per value, as a live pull builds its
    text columns (no text copied per row); a column of many short runs is decoded."""
    import pyarrow as pa

    if not any(pa.types.is_run_end_encoded(f.type) for f in table.schema):
        return table
    columns = [_decoded(c) if pa.types.is_run_end_encoded(c.type) else c for c in table.columns]
    return pa.Table.from_arrays(columns, names=table.column_names, metadata=table.schema.metadata)


def _decoded(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A run-end encoded column decoded: its runs as slices of one array per value (shared
    by its chunks) when they are few or long, else decoded row by row."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from ...normalize._util import compact, shared_chunks

    kind = column.type.value_type
    runs = sum(len(c.run_ends) for c in column.chunks)
    if any(c.offset for c in column.chunks) or not compact(len(column), runs):
        return pa.chunked_array([pc.run_end_decode(c) for c in column.chunks], kind)
    values: list[Any] = []
    lengths: list[int] = []
    for chunk in column.chunks:
        values += chunk.values.to_pylist()
        lengths += np.diff(chunk.run_ends.to_numpy(), prepend=0).tolist()
    return pa.chunked_array(shared_chunks(values, lengths, kind), kind)


def _run_starts(table: pa.Table) -> np.ndarray:
    """The rows where a run of ``table`` (as stored) may start: where a text column or the
    percentile may change value (a run-end encoded column's run starts; a column stored
    plain is compared row by row). Every run of one series and metric entry starts at one of
    them; some start nowhere new (a run may be cut in two: a column no row fills is a run
    per chunk, a null compared is a change)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    starts = [np.zeros(1, dtype=np.int64)]
    for name, column in zip(table.column_names, table.columns, strict=True):
        at = 0
        for chunk in column.chunks:
            n = len(chunk)
            if pa.types.is_run_end_encoded(chunk.type):
                ends = chunk.run_ends.to_numpy().astype(np.int64)
                starts.append(at + (ends[:-1] if not chunk.offset else np.arange(n)))
            elif n > 1 and name == "percentile":
                values = chunk.to_numpy(zero_copy_only=False)
                same = (values[1:] == values[:-1]) | (np.isnan(values[1:]) & np.isnan(values[:-1]))
                starts.append(at + 1 + np.flatnonzero(~same))
            elif n > 1 and _is_string(chunk.type):
                differ = pc.fill_null(pc.not_equal(chunk.slice(1), chunk.slice(0, n - 1)), True)
                starts.append(at + 1 + np.flatnonzero(differ.to_numpy(zero_copy_only=False)))
            if at:
                starts.append(np.array([at], dtype=np.int64))  # a chunk starts a run
            at += n
    found = np.unique(np.concatenate(starts))
    return np.asarray(found[found < max(table.num_rows, 1)], dtype=np.int64)


class _Listed(Mapping[int, tuple[int, int]]):
    """An entry's chunks (chunk start -> (chunk end, rows)) as the file lists them, made into
    a mapping when first asked (a pull reads rows alone: thousands of pairs for nothing)."""

    def __init__(self, starts: Sequence[Any], ends: Sequence[Any], counts: Sequence[Any]):
        self._lists = (starts, ends, counts)
        self._made: dict[int, tuple[int, int]] | None = None

    def _mapping(self) -> dict[int, tuple[int, int]]:
        if self._made is None:
            self._made = {int(c): (int(e), int(n)) for c, e, n in zip(*self._lists, strict=True)}
        return self._made

    def __getitem__(self, key: int) -> tuple[int, int]:
        return self._mapping()[key]

    def __iter__(self) -> Iterator[int]:
        return iter(self._mapping())

    def __len__(self) -> int:
        return len(self._lists[0])


class Segment:
    """A segment file read and checked: its table (text columns as shared slices) and its
    entries.

    Raises (from the constructor):
        ValueError: the bytes fail the checksum the name carries (message ``"checksum"``).
        KeyError, TypeError, ValueError, pyarrow.ArrowException: it cannot be read.
    """

    def __init__(self, name: str, data: bytes) -> None:
        import pyarrow as pa

        if checksum(data) != name.rpartition("-")[2]:
            raise ValueError("checksum")
        self.name = name
        self.size = len(data)
        stored = pa.ipc.open_file(pa.BufferReader(data)).read_all()
        meta = stored.schema.metadata or {}
        stored = stored.replace_schema_metadata({k: v for k, v in meta.items() if k not in _OURS})
        if _ENTRIES in meta:
            listed = orjson.loads(meta[_ENTRIES])
        else:  # the first format: one series, every row
            identity = orjson.loads(meta[_IDENTITY])
            starts, ends, counts = zip(*identity["chunks"], strict=True)
            listed = [
                {
                    "series": identity["series"],
                    "starts": starts,
                    "ends": ends,
                    "counts": counts,
                    "rows": [0, stored.num_rows],
                    "attrs": orjson.loads(meta[_ATTRS]),
                    "request": orjson.loads(meta[_REQUEST]),
                }
            ]
        self._entries: dict[str, dict[str, Any]] = {}
        for item in listed:
            at, count = (int(n) for n in item["rows"])
            if at < 0 or count < 0 or at + count > stored.num_rows:
                raise ValueError("an entry's rows lie outside the file")
            lists = (item["starts"], item["ends"], item["counts"])
            if any(type(v) is not list and type(v) is not tuple for v in lists):
                raise TypeError("an entry's chunks are not lists")
            if not len(lists[0]) == len(lists[1]) == len(lists[2]):
                raise ValueError("an entry's chunks are not listed whole")
            if str(item["series"]) in self._entries:
                raise ValueError("a series holds two entries")
            self._entries[str(item["series"])] = {**item, "rows": (at, count)}
        self._stored = stored
        self._starts: np.ndarray | None = None  # found when first asked (:meth:`runs`)
        self.table = _plain(stored)

    def chunks(self) -> dict[str, Chunks]:
        """The chunks each series of the file holds (series key -> chunk start -> (end,
        rows))."""
        return {series: dict(self._listed(item)) for series, item in self._entries.items()}

    @staticmethod
    def _listed(item: dict[str, Any]) -> _Listed:
        return _Listed(item["starts"], item["ends"], item["counts"])

    def entry(self, series: str, chunks: Sequence[int]) -> Entry | None:
        """The entry of ``series``, None unless the file holds it with every one of
        ``chunks``."""
        item = self._entries.get(series)
        if item is None or not set(item["starts"]).issuperset(chunks):
            return None
        at, count = item["rows"]
        whole = (at, count) == (0, self.table.num_rows)
        table = self.table if whole else self.table.slice(at, count)
        return Entry(series, self._listed(item), table, dict(item["attrs"]), item["request"])

    def runs(self, series: str) -> list[int]:
        """The lengths of the runs of the rows of ``series``' entry: each of one series and
        metric entry (one may be cut in two)."""
        import numpy as np

        if self._starts is None:
            self._starts = _run_starts(self._stored)
        at, count = self._entries[series]["rows"]
        inside = self._starts[(self._starts > at) & (self._starts < at + count)]
        bounds = np.concatenate(([at], inside, [at + count]))
        return [int(n) for n in np.diff(bounds) if n]
