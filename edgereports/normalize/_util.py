"""Shared helpers of the normalizer: SchemaError with an excerpt, timestamps, values, ids."""

from __future__ import annotations

import functools
import math
import reprlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import orjson

from .._dependencies import lazy_import
from ..errors import SchemaError, redact
from ..query.vocabulary import FILTER_DIMENSIONS, METRICS
from ..schema import STRING, TIMESTAMP, identifier

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

#: The metric names the service is known to answer with (documented, and seen live).
KNOWN_METRICS = frozenset(METRICS)
#: The dimension names and echoed identifiers the service is known to use.
KNOWN_DIMENSIONS = frozenset(FILTER_DIMENSIONS)

EXCERPT_LIMIT = 200
#: A constant text column (an echoed key) of more rows than this is one chunk of this many rows
#: repeated, so its memory does not grow with its rows.
CONSTANT_CHUNK = 1 << 16
#: A text column with one value per block is a chunk per block (the chunks share one array per
#: value) up to this many blocks, and past them when its blocks are long (:data:`LONG_RUN`):
#: pandas works on a few chunks as fast as on one array, and slows down on many short ones.
SHARED_BLOCKS = 128
#: Past ``SHARED_BLOCKS`` blocks, a text column keeps a chunk per block when its blocks average
#: at least this many rows (:func:`compact`); shorter ones are one array.
LONG_RUN = 256
# An ISO 8601 stamp that carries its offset: a time part, then Z or +hh[:mm] / -hh[:mm].
_WITH_OFFSET = r"[Tt ]\d{2}.*(?:[Zz]|[+-]\d{2}(?::?\d{2})?)\s*$"
_MISSING: Any = object()
_TRUE = frozenset({"YES", "TRUE"})
_FALSE = frozenset({"NO", "FALSE"})

Where = Callable[[int], str]

_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxlevel, _SHORT_REPR.maxstring, _SHORT_REPR.maxother = 4, 80, 80


def excerpt(value: object, limit: int = EXCERPT_LIMIT) -> str:
    """Return a redacted JSON-ish rendering of ``value`` of at most ``limit`` characters.

    Values orjson cannot write (nested too deep, lone surrogates, ...) are shown by
    :mod:`reprlib`, which bounds depth and length, so no payload makes this fail.
    """
    try:
        text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = _SHORT_REPR.repr(value)
    text = redact(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def fail(why: str, where: str, value: object = _MISSING) -> NoReturn:
    """Raise :class:`SchemaError` saying why, where, and an excerpt of the offending value."""
    message = f"{why} at {where or 'the top level'}"
    if value is not _MISSING:
        message += f": {excerpt(value)}"
    raise SchemaError(message, where=where)


def join(prefix: str, key: str) -> str:
    """Join a payload path and a member name (``result[1][7]`` + ``time_stamp``)."""
    return f"{prefix}.{key}" if prefix else key


def check_member_name(key: object, where: str) -> str:
    """Return a JSON member name that can be a column name: text, valid UTF-8."""
    if not isinstance(key, str):
        fail("member name is not text", where, key)
    if not _is_utf8(key):
        fail("member name is not valid UTF-8 text", where, key)
    return key


def ident(value: object, where: str) -> str | None:
    """Return an echoed identifier as text (see :func:`edgereports.schema.identifier`)."""
    try:
        return identifier(value)
    except ValueError as exc:
        fail(str(exc), where, value)


def value_of(value: object) -> tuple[float, str | None]:
    """Return ``(number, raw_text)`` for a measure; raw_text is set when it was not a number.

    Raises:
        ValueError: with the reason, for values that are neither numbers nor text.
    """
    if value is None:
        return math.nan, None
    if isinstance(value, bool):
        return (1.0, "true") if value else (0.0, "false")
    if isinstance(value, int | float):
        try:
            return float(value), None
        except OverflowError:
            raise ValueError("value is too large") from None
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return math.nan, None
        upper = text.upper()
        if upper in _TRUE:
            return 1.0, value
        if upper in _FALSE:
            return 0.0, value
        try:
            return float(text), None
        except ValueError:
            return math.nan, value
    raise ValueError(f"value is a {type(value).__name__}, not a number")


def looks_like_value(value: object) -> bool:
    """Tell whether an unknown member of a current-value object looks like a measure."""
    if isinstance(value, bool | int | float):
        return True
    if isinstance(value, str):
        number, text = value_of(value)
        return not math.isnan(number) and (text is None or text.strip().upper() in _TRUE | _FALSE)
    return False


def arrow_pool() -> pa.MemoryPool:
    """The memory pool of the Arrow buffers the normalizer makes, and of a pull's answers.

    A pull reads its answers in many threads. Arrow's default pool (mimalloc) keeps a heap
    per thread, asks the kernel for huge pages on its arena and hands freed pages back soon
    after, so the buffers of the next answers and of the pull's frame fault fresh memory in
    again; the system allocator keeps them. pyarrow's readers of one whole large body keep
    the default pool, which reads a large JSON body faster.
    """
    return pa.system_memory_pool()


def parse_values(items: Sequence[object], where: Where, *, allow_text: bool) -> np.ndarray:
    """Return the measures of a time series as float64 (NaN for null).

    With ``allow_text``, text that is not YES/NO or a number gives NaN; else, as any other
    value that is not a number or null, a SchemaError naming its place (``where(index)``).
    """
    try:
        arr = pa.array(items, type=pa.float64(), memory_pool=arrow_pool())
        return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.float64)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
        pass
    out = np.empty(len(items), dtype=np.float64)
    for i, item in enumerate(items):
        try:
            number, text = value_of(item)
        except ValueError as exc:
            fail(str(exc), where(i), item)
        if text is not None and math.isnan(number) and not allow_text:
            fail("value is not a number", where(i), item)
        out[i] = number
    return out


def parse_stamps(
    items: Sequence[object] | pa.Array | pa.ChunkedArray, where: Where, what: str
) -> np.ndarray:
    """Parse ISO 8601 timestamps with any UTC offset into int64 microseconds since the epoch, UTC.

    The fast path casts a pyarrow string array to ``timestamp('us', 'UTC')``; stamps pyarrow
    refuses (no offset, more than 6 fraction digits, ...) go through pandas' ISO 8601 parser,
    which takes a stamp without offset as UTC. The first stamp that is missing, not text or
    not a time is a SchemaError naming ``what`` and its place (``where(index)``).
    """
    pool = arrow_pool()
    if isinstance(items, pa.Array | pa.ChunkedArray):
        strings = items
    else:
        try:
            strings = pa.array(items, type=pa.string(), memory_pool=pool)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, UnicodeError):
            for i, item in enumerate(items):
                if not isinstance(item, str) and item is not None:
                    fail(f"{what} is not a text timestamp", where(i), item)
                if isinstance(item, str) and not _is_utf8(item):
                    fail(f"{what} is not valid UTF-8 text", where(i), item)
            raise  # pragma: no cover - pyarrow refused a list of str/None
    if strings.null_count:
        first = int(np.flatnonzero(strings.is_null().to_numpy(zero_copy_only=False))[0])
        fail(f"{what} is missing", where(first))
    try:
        stamps = pc.cast(strings, pa.timestamp("us", tz="UTC"), memory_pool=pool)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return _slow_stamps(strings, where, what)
    # no nulls: the stamps' datetime64[us] viewed as int64 (no second cast)
    return np.asarray(stamps.to_numpy(zero_copy_only=False)).view(np.int64)


def _slow_stamps(strings: pa.Array | pa.ChunkedArray, where: Where, what: str) -> np.ndarray:
    """Parse with pandas' ISO 8601 parser: stamps with an offset, then those without (as UTC).

    The two groups are parsed apart because pandas 2.2 applies the offset of the stamp before
    to a stamp without one when they are parsed together.
    """
    texts = strings.to_pylist()
    series = pd.Series(texts, dtype=object)
    has_offset = np.asarray(
        pc.match_substring_regex(strings, _WITH_OFFSET).to_numpy(zero_copy_only=False), dtype=bool
    )
    micros = np.zeros(len(texts), dtype=np.int64)
    bad = np.zeros(len(texts), dtype=bool)
    for mask, utc in ((has_offset, True), (~has_offset, False)):
        if not mask.any():
            continue
        try:
            parsed = pd.to_datetime(series[mask], format="ISO8601", utc=utc, errors="coerce")
        except (ValueError, TypeError, OverflowError):  # pragma: no cover - coerce should hold
            parsed = pd.Series(pd.NaT, index=series[mask].index, dtype="datetime64[ns]")
        if getattr(parsed.dtype, "tz", None) is not None:
            parsed = parsed.dt.tz_convert("UTC").dt.tz_localize(None)
        bad[mask] = parsed.isna().to_numpy()
        micros[mask] = parsed.astype("datetime64[us]").to_numpy().view(np.int64)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        fail(f"{what} is not an ISO 8601 time", where(first), texts[first])
    return micros


def constant_strings(value: str | None, n: int) -> pa.Array:
    """Return a pyarrow ``large_string`` array of ``n`` times ``value`` (a short one is made
    once and shared: every answer of a pull echoes the same few values)."""
    return constant_array(value, n, pa.large_string())


def constant_array(value: Any, n: int, kind: pa.DataType) -> pa.Array:
    """Return an array of ``kind`` holding ``value`` (None: null) on ``n`` rows; one of at most
    ``_SHARED_ROWS`` rows is made once and shared."""
    return _short_constant(value, n, kind) if n <= _SHARED_ROWS else _constant(value, n, kind)


#: Constant arrays of at most this many rows are kept (at most ``_SHARED_VALUES`` of them).
_SHARED_ROWS = 4096
_SHARED_VALUES = 128


@functools.lru_cache(maxsize=_SHARED_VALUES)
def _short_constant(value: Any, n: int, kind: pa.DataType) -> pa.Array:
    return _constant(value, n, kind)


def _constant(value: Any, n: int, kind: pa.DataType) -> pa.Array:
    pool = arrow_pool()
    if value is None:
        return pa.nulls(n, kind, memory_pool=pool)
    if kind == pa.large_string():  # its offsets and bytes at once: no pass per row
        data = value.encode()
        offsets = np.arange(n + 1, dtype=np.int64) * len(data)
        return pa.Array.from_buffers(kind, n, [None, pa.py_buffer(offsets), pa.py_buffer(data * n)])
    scalar = pa.scalar(value, kind, memory_pool=pool)
    return pa.repeat(scalar, n, memory_pool=pool)


def shared_chunks(
    per_block: Sequence[Any], lengths: Sequence[int], kind: pa.DataType | None = None
) -> list[pa.Array]:
    """Return the chunks of a column (``large_string`` unless ``kind`` says) of ``lengths[k]``
    times ``per_block[k]``.

    Each distinct value is one array, as long as its longest block (at most
    ``CONSTANT_CHUNK`` rows); a block is a slice of it, or several for a longer block. So a
    value's text is held once per row of that array, not once per row of the column: no
    copy, and no new memory for the rows of a pull's many small blocks.
    """
    kind = pa.large_string() if kind is None else kind
    longest: dict[Any, int] = {}
    for value, n in zip(per_block, lengths, strict=True):
        longest[value] = max(longest.get(value, 0), min(int(n), CONSTANT_CHUNK))
    shared = {value: constant_array(value, n, kind) for value, n in longest.items()}
    return [
        shared[value].slice(0, min(CONSTANT_CHUNK, int(n) - at))
        for value, n in zip(per_block, lengths, strict=True)
        for at in range(0, int(n), CONSTANT_CHUNK)
    ]


def compact(rows: int, runs: int) -> bool:
    """Whether a column of ``rows`` rows in ``runs`` runs of one value is kept as chunks, one
    per run (:func:`shared_chunks`): when its runs are few, or long.

    A chunk costs more than the text of a few rows, and pandas works on a column of many
    short chunks slowly: a column of many short runs is one array.
    """
    return runs <= SHARED_BLOCKS or rows >= runs * LONG_RUN


def block_strings(per_block: Sequence[str | None], lengths: Sequence[int]) -> pd.Series:
    """Return a ``string`` column holding ``per_block[k]`` on each of the ``lengths[k]`` rows
    (the array of :func:`block_string_array`)."""
    array = pd.arrays.ArrowStringArray(block_string_array(per_block, lengths))
    return pd.Series(array, dtype=STRING, copy=False)


def block_string_array(per_block: Sequence[str | None], lengths: Sequence[int]) -> pa.ChunkedArray:
    """Return a ``large_string`` array holding ``per_block[k]`` on each of the ``lengths[k]``
    rows.

    A chunk per block (:func:`shared_chunks`) when the blocks are few or long
    (:func:`compact`); past ``SHARED_BLOCKS`` blocks, a constant's few chunks; else one array
    taken from the distinct values.
    """
    rows = int(sum(lengths))
    try:
        if len(per_block) <= SHARED_BLOCKS:
            chunks = shared_chunks(per_block, lengths)
        elif all(v == per_block[0] for v in per_block):
            chunks = shared_chunks(per_block[:1], [rows])
        elif compact(rows, len(per_block)):
            chunks = shared_chunks(per_block, lengths)
        else:
            chunks = [_repeated(per_block, lengths)]
    except (UnicodeError, pa.ArrowInvalid):
        bad = next(v for v in per_block if v is not None and not _is_utf8(v))
        fail("text is not valid UTF-8", "", bad)
    return pa.chunked_array(chunks, type=pa.large_string())


def _repeated(per_block: Sequence[str | None], lengths: Sequence[int]) -> pa.Array:
    """One ``large_string`` array: ``per_block[k]`` on each of the ``lengths[k]`` rows, taken
    from the distinct values (one allocation, no chunk per block)."""
    index: dict[str | None, int] = {}
    codes = np.array([index.setdefault(v, len(index)) for v in per_block], dtype=np.int32)
    distinct = pa.array(list(index), pa.large_string())
    rows = pa.array(np.repeat(codes, np.asarray(lengths, dtype=np.int64)))
    return pc.take(distinct, rows, memory_pool=arrow_pool())


def strings(values: Sequence[str | None]) -> pd.Series:
    """Return a ``string`` column from Python strings (SchemaError for text that is not UTF-8)."""
    try:
        array = pa.array(list(values), type=pa.large_string(), memory_pool=arrow_pool())
        return pd.Series(pd.arrays.ArrowStringArray(array), dtype=STRING, copy=False)
    except (UnicodeError, pa.ArrowInvalid, pa.ArrowTypeError):
        bad = next(v for v in values if isinstance(v, str) and not _is_utf8(v))
        fail("text is not valid UTF-8", "", bad)


def timestamp_column(micros: np.ndarray) -> pd.Series:
    """Return a ``datetime64[us, UTC]`` column from int64 microseconds.

    The column holds ``micros`` itself (integers are epoch microseconds to pandas) unless the
    array is read-only (a view of pyarrow's memory), which it copies: a frame's columns can be
    written to.
    """
    micros = micros.astype(np.int64, copy=False)
    return pd.Series(micros, dtype=TIMESTAMP, copy=not micros.flags.writeable)


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeError:
        return False
    return True
