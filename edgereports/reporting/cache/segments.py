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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
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
    """``table`` with its run-end encoded columns decoded (see :func:`_runs`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not any(pa.types.is_run_end_encoded(f.type) for f in table.schema):
        return table
    columns = [
        pc.run_end_decode(c) if pa.types.is_run_end_encoded(c.type) else c for c in table.columns
    ]
    return pa.Table.from_arrays(columns, names=table.column_names, metadata=table.schema.metadata)


class Segment:
    """A segment file read back and checked: its table and its entries.

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
        self.table = pa.ipc.open_file(pa.BufferReader(data)).read_all()
        meta = self.table.schema.metadata or {}
        self.table = self.table.replace_schema_metadata(
            {k: v for k, v in meta.items() if k not in _OURS}
        )
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
                    "rows": [0, self.table.num_rows],
                    "attrs": orjson.loads(meta[_ATTRS]),
                    "request": orjson.loads(meta[_REQUEST]),
                }
            ]
        self._entries: dict[str, dict[str, Any]] = {}
        for item in listed:
            at, count = (int(n) for n in item["rows"])
            if at < 0 or count < 0 or at + count > self.table.num_rows:
                raise ValueError("an entry's rows lie outside the file")
            chunks = {
                int(c): (int(e), int(n))
                for c, e, n in zip(item["starts"], item["ends"], item["counts"], strict=True)
            }
            if str(item["series"]) in self._entries:
                raise ValueError("a series holds two entries")
            self._entries[str(item["series"])] = {**item, "rows": (at, count), "chunks": chunks}

    def chunks(self) -> dict[str, Chunks]:
        """The chunks each series of the file holds (series key -> chunk start -> (end,
        rows))."""
        return {series: item["chunks"] for series, item in self._entries.items()}

    def entry(self, series: str, chunks: Sequence[int]) -> Entry | None:
        """The entry of ``series``, None unless the file holds it with every one of
        ``chunks``."""
        item = self._entries.get(series)
        if item is None or not set(item["chunks"]).issuperset(chunks):
            return None
        at, count = item["rows"]
        whole = (at, count) == (0, self.table.num_rows)
        table = _plain(self.table if whole else self.table.slice(at, count))
        return Entry(series, item["chunks"], table, dict(item["attrs"]), item["request"])
