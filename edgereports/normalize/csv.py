"""CSV answers (``Accept: text/csv``) into the same frames as the JSON path.

The layout is read by header names (case and surrounding spaces ignored, any column order,
unnamed columns such as a written index dropped):

- time series: ``time_stamp``, ``name`` (or ``metric``), ``value``, optionally
  ``aggregation_type`` (or ``aggregation``) and ``percentile``; every other column is an echoed
  key (``account_id``, dimensions). One row per point.
- SIM counts: ``date``, ``physical``, ``esim``, optionally ``account_id``; one row per day.
- current value, wide (the service's): ``start_time``, ``end_time``, one column per metric and
  per echoed key; one row per answer.
- current value, long (a current frame written back): ``start_time``, ``end_time``, ``metric``,
  ``value``, optionally ``aggregation``, ``value_text``, ``account_id`` and dimensions.

The file is parsed by ``pyarrow.csv`` with every column as text; timestamps are then cast as on
the JSON path and values to float64, so the JSON and CSV paths give equal frames. Error
locations name the data row (1-based, header excluded) and the column, e.g. ``row 7.value``.
"""

from __future__ import annotations

import csv as stdcsv
import re
from typing import TYPE_CHECKING, Any

from .._dependencies import lazy_import
from ..errors import SchemaError
from ..schema import CURRENT, FLOAT
from . import _flat
from ._request import RequestInfo
from ._util import (
    Where,
    fail,
    join,
    parse_stamps,
    parse_values,
    strings,
    timestamp_column,
    value_of,
)
from .current import dimensions_for, read_objects
from .simcount import read_items
from .timeseries import Block, build

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.csv as pacsv
else:
    np = lazy_import("numpy")
    pd = lazy_import("pandas")
    pa = lazy_import("pyarrow")
    pacsv = lazy_import("pyarrow.csv")

_UNNAMED = re.compile(r"unnamed: \d+|index|level_\d+")
_ALIASES = {"metric": "name", "aggregation": "aggregation_type"}
_TS_FIXED = frozenset({"time_stamp", "name", "aggregation_type", "value", "percentile"})
_NONSPACE = re.compile(rb"\S")


def parse(body: bytes, req: RequestInfo | None) -> tuple[pd.DataFrame, str]:
    """Parse a CSV answer (UTF-8 bytes) into ``(frame, shape)``, attrs not yet set.

    Raises:
        SchemaError: for an empty CSV without a request, an unknown header, a malformed row,
            or a cell of the wrong type.
    """
    begin = 3 if body.startswith(b"\xef\xbb\xbf") else 0
    first = _NONSPACE.search(body, begin)
    if first is None:
        if req is None:
            fail("CSV answer is empty and no request tells its shape", "")
        return req.empty_frame(), req.shape
    begin = body.rfind(b"\n", begin, first.start()) + 1 or begin
    end = body.find(b"\n", begin)
    names, keep = _header(body[begin : end if end >= 0 else len(body)])
    has_rows = end >= 0 and _NONSPACE.search(body, end + 1) is not None
    source = pa.py_buffer(body).slice(begin)
    shape = _shape(names, keep)
    if shape == "timeseries":
        return _timeseries(source, names, keep, has_rows, req), shape
    table = _read(source, names, keep) if has_rows else None
    rows = table.to_pylist() if table is not None else []
    if shape == "sim_count":
        return read_items([(r, f"row {i + 1}") for i, r in enumerate(rows)], req), shape
    if "metric" in names and "value" in names:
        return _current_long(rows, [n for n, k in zip(names, keep, strict=True) if k], req), shape
    if not rows:  # a header alone: a column named like a frame column is that column
        dims = dimensions_for([n for n, k in zip(names, keep, strict=True) if k], req)
        return CURRENT.empty([d for d in dims if d not in CURRENT.fixed]), shape
    return read_objects([(r, f"row {i + 1}") for i, r in enumerate(rows)], req), shape


def _header(line: bytes) -> tuple[list[str], list[bool]]:
    try:
        text = line.rstrip(b"\r").decode("utf-8")
        cells = next(stdcsv.reader([text]))
    except (UnicodeDecodeError, stdcsv.Error, StopIteration):
        fail(
            "CSV header is not a line of UTF-8 column names",
            "header",
            line[:200].decode(errors="replace"),
        )
    names = [c.strip().lower() for c in cells]
    keep = [bool(n) and not _UNNAMED.fullmatch(n) for n in names]
    if "time_stamp" in names:
        names = [_ALIASES[n] if n in _ALIASES and _ALIASES[n] not in names else n for n in names]
    kept = [n for n, k in zip(names, keep, strict=True) if k]
    dupes = sorted({n for n in kept if kept.count(n) > 1})
    if dupes:
        fail(f"CSV header repeats column(s) {', '.join(dupes)}", "header", text)
    return names, keep


def _shape(names: list[str], keep: list[bool]) -> str:
    cols = {n for n, k in zip(names, keep, strict=True) if k}
    if {"time_stamp", "name", "value"} <= cols:
        return "timeseries"
    if {"date", "physical", "esim"} <= cols:
        return "sim_count"
    if "start_time" in cols or "end_time" in cols:
        return "current"
    fail(f"CSV header matches no known layout (columns: {', '.join(sorted(cols))[:150]})", "header")


def _read(
    source: pa.Buffer,
    names: list[str],
    keep: list[bool],
    types: dict[str, pa.DataType] | None = None,
) -> pa.Table:
    """Read the kept columns: as ``types`` says, else as nullable text (empty field = null)."""
    types = types or {}
    generated = [f"c{i}" for i in range(len(names))]
    include = [g for g, k in zip(generated, keep, strict=True) if k]
    kept = [n for n, k in zip(names, keep, strict=True) if k]
    try:
        table = pacsv.read_csv(
            pa.BufferReader(source),
            read_options=pacsv.ReadOptions(column_names=generated, skip_rows=1),
            convert_options=pacsv.ConvertOptions(
                column_types={
                    g: types.get(n, pa.string()) for g, n in zip(include, kept, strict=True)
                },
                include_columns=include,
                strings_can_be_null=True,
                quoted_strings_can_be_null=True,
                null_values=[""],
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        fail(f"CSV answer does not parse ({str(exc)[:150]})", "csv")
    return table.rename_columns(kept)


def _timeseries(
    source: pa.Buffer, names: list[str], keep: list[bool], has_rows: bool, req: RequestInfo | None
) -> pd.DataFrame:
    kept = [n for n, k in zip(names, keep, strict=True) if k]
    echo_names = [n for n in kept if n not in _TS_FIXED]
    if not has_rows:
        return build([], echo_names, req)
    key_names = [*echo_names, "name"] + (["aggregation_type"] if "aggregation_type" in kept else [])
    typed = dict.fromkeys(key_names, pa.large_binary())
    typed |= {
        "time_stamp": pa.timestamp("us", tz="UTC"),
        "value": pa.float64(),
        "percentile": pa.float64(),
    }
    try:
        # Fast: pyarrow parses stamps and numbers while reading, and reads the key columns as
        # bytes whose UTF-8 is checked once per run, not per row. A cell it refuses, a missing
        # stamp or bad UTF-8 sends the file down the careful path, which reads text and names
        # the row and column of an error.
        table = _read(source, names, keep, typed)
        stamps = table.column("time_stamp")
        if stamps.null_count:
            raise SchemaError("a stamp is missing", where="")
        micros = np.asarray(stamps.cast(pa.int64()).to_numpy(), dtype=np.int64)
        values = np.asarray(table.column("value").to_numpy(), dtype=FLOAT)
        percentile = table.column("percentile") if "percentile" in kept else None
        blocks = _blocks(table, key_names, len(echo_names), micros, values, percentile)
        text = {k: _as_text(table.column(k)) for k in key_names}
    except SchemaError:
        table = _read(source, names, keep)
        micros = parse_stamps(
            table.column("time_stamp"), lambda i: f"row {i + 1}.time_stamp", "time_stamp"
        )
        values = _floats(table.column("value").combine_chunks(), "value")
        percentile = None
        if "percentile" in kept:
            percentile = pa.array(
                _floats(table.column("percentile").combine_chunks(), "percentile")
            )
        blocks = _blocks(table, key_names, len(echo_names), micros, values, percentile)
        text = {k: table.column(k) for k in key_names}
    columns = {e: text[e] for e in echo_names} | {"metric": text["name"]}
    if "aggregation_type" in text:
        columns["aggregation"] = text["aggregation_type"]
    return build(blocks, echo_names, req, columns)


def _blocks(
    table: pa.Table,
    key_names: list[str],
    echoed: int,
    micros: np.ndarray,
    values: np.ndarray,
    percentile: pa.Array | pa.ChunkedArray | None,
) -> list[Block]:
    """The series of the flat columns (``key_names``: the ``echoed`` keys, name, and maybe
    aggregation). SchemaError for a missing name or a key that is not UTF-8."""
    name = table.column("name")
    if name.null_count:
        first = int(np.flatnonzero(name.is_null().to_numpy(zero_copy_only=False))[0])
        fail("name is missing", f"row {first + 1}.name")
    keys = _flat.columns([table.column(k) for k in key_names])
    return _flat.blocks(
        keys[:echoed],
        keys[echoed],
        keys[echoed + 1] if len(keys) > echoed + 1 else None,
        _flat.encoded(percentile) if percentile is not None else None,
        micros,
        values,
    )


def _as_text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A ``large_binary`` column whose values were all decoded as ``large_string`` (no copy)."""
    return pa.chunked_array([c.view(pa.large_string()) for c in column.chunks], pa.large_string())


def _floats(arr: pa.Array, column: str) -> np.ndarray:
    try:
        return np.asarray(arr.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=FLOAT)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return parse_values(arr.to_pylist(), lambda i: f"row {i + 1}.{column}", allow_text=False)


def _current_long(
    rows: list[dict[str, Any]], kept: list[str], req: RequestInfo | None
) -> pd.DataFrame:
    fixed = set(CURRENT.fixed)
    dims = list(req.dimensions) if req is not None else []
    dims += [c for c in kept if c not in fixed and c not in dims]
    if not rows:
        return CURRENT.empty(dims)
    where = [f"row {i + 1}" for i in range(len(rows))]
    columns: dict[str, Any] = {}
    for key in ("start_time", "end_time"):
        if key not in kept:
            fail(f"CSV answer has no {key} column", "header")
        micros = parse_stamps([r[key] for r in rows], _where(where, key), key)
        columns[key] = timestamp_column(micros)
    account = req.account_id if req is not None else None
    columns["account_id"] = [r.get("account_id") or account for r in rows]
    for d in dims:
        columns[d] = [r.get(d) for r in rows]
    columns["metric"] = [r["metric"] for r in rows]
    if any(m is None for m in columns["metric"]):
        fail("metric is missing", f"{where[columns['metric'].index(None)]}.metric")
    columns["aggregation"] = [
        r.get("aggregation") or (req.aggregation_for(r["metric"])[1] if req is not None else None)
        for r in rows
    ]
    parsed = [value_of(r["value"]) for r in rows]
    columns["value"] = np.array([p[0] for p in parsed], dtype=FLOAT)
    columns["value_text"] = [
        r["value_text"] if "value_text" in r else p[1] for r, p in zip(rows, parsed, strict=True)
    ]
    for c in ("account_id", *dims, "metric", "aggregation", "value_text"):
        columns[c] = strings(columns[c])
    return pd.DataFrame(columns)


def _where(prefixes: list[str], key: str) -> Where:
    return lambda i: join(prefixes[i], key)
