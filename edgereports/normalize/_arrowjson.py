"""The fast path for time-series JSON bytes: ``pyarrow.json`` with an explicit nested schema.

The answer is read as a one-row table whose ``result`` column is
``list<list<struct<time_stamp, name, value, aggregation_type>>>`` and flattened to columns
without a Python object per point; stamps are parsed by the same ISO 8601 cast as the other
paths (a stamp without offset is UTC). Anything this path does not take as it is (nulls, an
echoed key that is not a string, number or boolean, a value that is text or beyond float64,
``NaN``/``Infinity``, which pyarrow takes but JSON does not, invalid UTF-8, a second JSON
value) makes it return None, and the caller reads the payload with orjson, which reports any
error precisely. Both paths give equal frames.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from .._dependencies import lazy_import
from ..errors import SchemaError
from ..schema import identifier
from . import _flat
from ._request import RequestInfo
from ._util import arrow_pool
from .detect import first_byte
from .timeseries import Block, build

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pajson
else:
    np = lazy_import("numpy")
    pd = lazy_import("pandas")
    pa = lazy_import("pyarrow")
    pc = lazy_import("pyarrow.compute")
    pajson = lazy_import("pyarrow.json")

_LIMIT = 2**31 - 1024  # pyarrow's block_size is an int32


@functools.cache
def _point() -> pa.StructType:
    """The members of a point that the frame reads, typed."""
    return pa.struct(
        [
            ("time_stamp", pa.timestamp("us", tz="UTC")),
            ("name", pa.large_string()),
            ("value", pa.float64()),
            ("aggregation_type", pa.large_string()),
        ]
    )


def _echo_type(kind: pa.DataType) -> bool:
    """Whether an echoed key's column is of a type the frame reads (text, number, bool, null)."""
    types = pa.types
    checks = types.is_null, types.is_string, types.is_integer, types.is_floating, types.is_boolean
    return any(check(kind) for check in checks)


def read_timeseries(body: bytes, req: RequestInfo | None) -> pd.DataFrame | None:
    """Read time-series JSON bytes into the frame (attrs not yet set), or None for orjson."""
    read = _read(body, stream=False)
    if read is None:
        return None
    blocks, echo_names, source = read
    return build(blocks, echo_names, req, source)


def read_blocks(body: bytes) -> tuple[list[Block], list[str]] | None:
    """Read time-series JSON bytes into blocks that hold their own keys (no frame), or None.

    The parse leaves the GIL, so the answers of a pull read on several threads overlap; it
    runs on pyarrow's CPU threads (the calling thread waits, spending almost none of its own
    CPU), and pyarrow's streaming reader starts no thread per call, where ``read_json`` would
    start and end one per answer. None: read ``body`` with orjson.
    """
    read = _read(body, stream=True)
    if read is None:
        return None
    blocks, echo_names, _ = read
    for b in blocks:
        b.rows = None  # the blocks outlive the flat columns their rows point into
    return blocks, echo_names


def _read(
    body: bytes, *, stream: bool
) -> tuple[list[Block], list[str], dict[str, pa.Array]] | None:
    """The blocks, the echoed keys' names and the flat text columns of ``body``, or None.

    With ``stream`` the body is one answer of a pull, parsed by pyarrow's streaming reader
    into buffers of :func:`~._util.arrow_pool`; else by ``read_json`` with pyarrow's default
    pool, which starts a thread per call but uses more than one core on a large body.
    """
    if len(body) >= _LIMIT or first_byte(body) != b"{":
        return None  # pyarrow 26 crashes on a top-level JSON null (apache/arrow#47409)
    options = pajson.ReadOptions(block_size=len(body) + 1)
    answer = pa.schema([("result", pa.list_(pa.list_(_point())))])
    parse = pajson.ParseOptions(explicit_schema=answer)
    try:
        if stream:
            reader = pajson.open_json(pa.BufferReader(body), options, parse, arrow_pool())
            table = reader.read_all()
        else:
            table = pajson.read_json(pa.BufferReader(body), options, parse)
        # pyarrow.json accepts invalid UTF-8 and can build invalid lists (apache/arrow#51305)
        table.validate(full=True)
        if _extra_members(table) and _non_json_tokens(body):
            return None
        return _blocks(table)
    except (
        pa.ArrowInvalid,
        pa.ArrowTypeError,
        pa.ArrowNotImplementedError,
        pa.ArrowIndexError,
        SchemaError,
        ValueError,
    ):
        return None


def _extra_members(table: pa.Table) -> bool:
    """Whether the points have members beyond the schema's (pyarrow infers their types)."""
    point = table.schema.field("result").type.value_type.value_type
    return bool(point.num_fields != _point().num_fields)


def _non_json_tokens(body: bytes) -> bool:
    """Whether ``body`` may hold ``NaN``/``Inf``/``Infinity``, which pyarrow's parser takes.

    Only asked when a point has members the frame ignores: every number the frame reads (values,
    echoed keys) is checked to be finite after parsing, which finds these tokens without a
    scan of the whole body.
    """
    return b"NaN" in body or b"Inf" in body


def _blocks(table: pa.Table) -> tuple[list[Block], list[str], dict[str, pa.Array]] | None:
    if table.num_rows != 1:
        return None
    echo_names: list[str] = []
    echo: list[_flat.KeyColumn] = []
    for field in table.schema:
        if field.name == "result":
            continue
        if not _echo_type(field.type):
            return None
        value = table.column(field.name)[0].as_py()
        if isinstance(value, float) and not abs(value) < 2**53:
            return None  # NaN/Infinity (orjson refuses them), or beyond what float64 keeps exact
        echo_names.append(field.name)
        echo.append(_flat.constant(identifier(value)))
    result = table.column("result").combine_chunks()
    if result.null_count:
        return None
    inner = result.flatten()
    if inner.null_count:
        return None
    points = inner.flatten()
    if points.null_count:
        return None
    fields = dict(zip([f.name for f in points.type], points.flatten(), strict=True))
    stamps, names, values = fields["time_stamp"], fields["name"], fields["value"]
    if stamps.null_count or names.null_count or values.null_count:
        return None
    if not pc.all(pc.is_finite(values)).as_py():
        return None  # NaN/Infinity, or a number beyond float64 (1e400): orjson names it
    micros = np.asarray(stamps.cast(pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)
    name, aggregation = _flat.columns([names, fields["aggregation_type"]])
    blocks = _flat.blocks(
        echo,
        name,
        aggregation,
        None,
        micros,
        values.to_numpy(zero_copy_only=False),
    )
    return blocks, echo_names, {"metric": names, "aggregation": fields["aggregation_type"]}
