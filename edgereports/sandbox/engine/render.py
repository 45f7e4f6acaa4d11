"""Rendering of report answers as JSON (fixed-width for large ones) and as CSV (docs/frames.md).

A time series of up to ``SMALL_ANSWER`` points is written byte for byte as ``orjson.dumps``
writes the answer as dicts, without building the dicts: each point's text before its number
(memoised for the regular grids of stamps a fan-out asks for again and again) joined with the
number as orjson writes it. A larger one is one buffer in which every point is a fixed-width
row of bytes (numbers right-aligned and padded with JSON whitespace): numpy copies the rows'
template and stamps, ``json_kernel.py`` writes the numbers in place, and
``render_json_buffer`` hands the buffer out without copying it. Both writers give the same
JSON values: integers when integral, ``.5`` for half bytes, otherwise up to three decimals.
Other shapes go through orjson.

CSV layouts:

- time series: ``time_stamp,name,aggregation_type,value`` then the echoed keys in the JSON's
  order; one row per point, inner arrays in the JSON's order; an empty ``aggregation_type`` for
  PERCENTILE points.
- current value: a header row with the JSON object's keys in order, one data row.
- SIM counts: ``date,physical,esim``, one row per day.
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from .answer import CurrentAnswer, SeriesAnswer, SeriesArray, SimAnswer

__all__ = ["render_csv", "render_json", "render_json_buffer", "stamp_matrix", "value_matrix"]

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
#: Time series with at most this many points are written compactly with orjson; larger ones
#: with the fixed-width writer (numbers padded with JSON whitespace).
SMALL_ANSWER = 2000
#: Regular grids whose point texts are memoised, per grid, offset and metric (at most
#: ``SMALL_ANSWER`` texts of about 150 bytes each: under 10 MB in all).
GRID_CACHE = 32
#: Larger regular grids of at most this many stamps have their stamps' text memoised, per grid
#: and offset (about 30 bytes a stamp: under 10 MB in all for ``GRID_CACHE`` grids).
GRID_STAMPS = 10_000
_ZERO = ord("0")
_SPACE = ord(" ")
_PAIRS = np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode(), dtype=np.uint8)
_PAIRS16 = _PAIRS.view(np.uint16)  # "07" as one native uint16: two digits per gather
_POW10 = 10 ** np.arange(1, 19, dtype=np.int64)


def _civil(days: I64) -> tuple[I64, I64, I64]:
    """Return (year, month, day) of days since 1970-01-01 (H. Hinnant's algorithm)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = np.where(mp < 10, mp + 3, mp - 9)
    y = yoe + era * 400 + (m <= 2)
    return y, m, d


def _digits(values: I64, width: int) -> U8:
    """Return zero-padded decimal ``values`` as a contiguous ``(n, width)`` uint8 matrix."""
    pairs = (width + 1) // 2
    m = np.empty((len(values), pairs), dtype=np.uint16)
    v = values
    for j in range(pairs - 1, -1, -1):
        m[:, j] = np.take(_PAIRS16, v % 100)
        v = v // 100
    digits: U8 = m.view(np.uint8)
    return digits[:, 2 * pairs - width :]


def _put(out: U8, col: int, values: I64, width: int) -> None:
    """Write zero-padded decimal ``values`` into columns ``[col, col + width)``."""
    out[:, col : col + width] = _digits(values, width)


def stamp_matrix(epoch: I64, offset: int, suffix: str) -> U8:
    """Return ``YYYY-MM-DDTHH:MM:SS<suffix>`` of each instant in the given offset, one row each.

    Args:
        epoch: instants in epoch seconds.
        offset: the UTC offset to show, in seconds.
        suffix: how the offset is written (``+05:30``, ``Z``...).

    Returns:
        A ``(n, 19 + len(suffix))`` uint8 matrix.
    """
    local = epoch.astype(np.int64) + offset
    days = local // 86400
    secs = local - days * 86400
    y, m, d = _civil(days)
    out = np.empty((len(epoch), 19 + len(suffix)), dtype=np.uint8)
    out[:] = np.frombuffer(b"0000-00-00T00:00:00" + suffix.encode(), dtype=np.uint8)
    _put(out, 0, y, 4)
    _put(out, 5, m, 2)
    _put(out, 8, d, 2)
    _put(out, 11, secs // 3600, 2)
    _put(out, 14, secs // 60 % 60, 2)
    _put(out, 17, secs % 60, 2)
    return out


def _right(out: U8, values: I64, width: int) -> None:
    """Write ``values`` right-aligned in columns ``[0, width)``, spaces on the left."""
    _put(out, 0, values, width)
    digits = np.searchsorted(_POW10, values, side="right") + 1
    blank = np.arange(width)[None, :] < (width - digits)[:, None]
    np.putmask(out[:, :width], blank, _SPACE)


def value_matrix(values: F64) -> U8:
    """Return JSON numbers for non-negative ``values``, padded to one width, one row each.

    Integral values are written as integers, others with up to three decimals (the values are
    already rounded so; halves come out as ``.5``). Padding is JSON whitespace.

    Args:
        values: the numbers (finite, >= 0, below 1e15).

    Returns:
        A ``(n, width)`` uint8 matrix.
    """
    v = np.asarray(values, dtype=np.float64)
    if len(v) == 0:
        return np.empty((0, 1), dtype=np.uint8)
    whole = np.floor(v)
    ip = whole.astype(np.int64)
    frac = v - whole
    if not frac.any():
        iw = len(str(int(ip.max())))
        out = np.empty((len(v), iw), dtype=np.uint8)
        _right(out, ip, iw)
        return out
    milli = np.rint(frac * 1000).astype(np.int64)
    carry = milli >= 1000
    ip += carry
    milli[carry] = 0
    iw = len(str(int(ip.max())))
    out = np.empty((len(v), iw + 4), dtype=np.uint8)
    _right(out, ip, iw)
    out[:, iw] = ord(".")
    _put(out, iw + 1, milli, 3)
    # trailing zeros of the decimals, and the point of integral values, become spaces
    tail = out[:, iw:]
    blank = np.zeros((len(v), 4), dtype=bool)
    blank[:, 3] = milli % 10 == 0
    blank[:, 2] = blank[:, 3] & (milli % 100 == 0)
    blank[:, 1] = milli == 0
    blank[:, 0] = milli == 0
    np.putmask(tail, blank, _SPACE)
    return out


def _template(arr: SeriesArray, ws: int, wn: int) -> tuple[bytes, int, int]:
    """Return one row with placeholders, and where the stamp and the number go."""
    mid, tail = _point_parts(arr)
    head = b'{"time_stamp":"'
    row = head + b"0" * ws + mid + b"0" * wn + tail + b","
    return row, len(head), len(head) + ws + len(mid)


def _empty(size: int) -> U8:
    return np.empty(size, dtype=np.uint8)


def _series_json(ans: SeriesAnswer, alloc: Callable[[int], U8] = _empty) -> memoryview:
    """Assemble a time series answer in one buffer (from ``alloc``), each point a row."""
    from .json_kernel import number_layout, write_numbers  # numba (an extra), on first use

    stamps_of: dict[int, U8] = {}
    pieces: list[tuple[int, bytes, int, int, U8, F64, int, bool]] = []
    empty = np.empty((0, 0), np.uint8)
    for arr in ans.arrays:
        n = len(arr.values)
        if n == 0:
            pieces.append((0, b"", 0, 0, empty, arr.values, 0, False))
            continue
        key = id(arr.stamps)
        if key not in stamps_of:
            if arr.grid is not None and n <= GRID_STAMPS:
                first, step = arr.grid
                stamps_of[key] = _grid_stamps(int(first), int(step), n, ans.offset, ans.suffix)
            else:
                stamps_of[key] = stamp_matrix(arr.stamps, ans.offset, ans.suffix)
        stamps = stamps_of[key]
        values = np.ascontiguousarray(arr.values, dtype=np.float64)
        if np.isfinite(values).all() and (values >= 0).all():
            iw, frac = number_layout(values)
            wn = iw + 4 * frac
        else:  # outside the kernel's domain: numpy's writer
            nums = value_matrix(values)
            iw, frac, wn = -1, False, nums.shape[1]
            values = nums  # type: ignore[assignment]
        row, at_stamp, at_num = _template(arr, stamps.shape[1], wn)
        pieces.append((n, row, at_stamp, at_num, stamps, values, iw, frac))
    head = b'{"result":['
    foot = _foot(ans.echo)
    sizes = [1 + n * len(row) if n else 2 for n, row, *_ in pieces]
    total = len(head) + sum(sizes) + max(0, len(pieces) - 1) + len(foot)
    buf = alloc(total)[:total]
    buf[: len(head)] = np.frombuffer(head, dtype=np.uint8)
    pos = len(head)
    for k, (n, row, at_stamp, at_num, stamps, values, iw, frac) in enumerate(pieces):
        if k:
            buf[pos] = ord(",")
            pos += 1
        if n == 0:
            buf[pos : pos + 2] = np.frombuffer(b"[]", dtype=np.uint8)
            pos += 2
            continue
        width = len(row)
        buf[pos] = ord("[")
        region = buf[pos + 1 : pos + 1 + n * width].reshape(n, width)
        region[:] = np.frombuffer(row, dtype=np.uint8)
        region[:, at_stamp : at_stamp + stamps.shape[1]] = stamps
        if iw >= 0:
            write_numbers(buf, pos + 1, width, at_num, values, iw, frac)
        else:
            region[:, at_num : at_num + values.shape[1]] = values
        pos += 1 + n * width
        buf[pos - 1] = ord("]")
    buf[pos:] = np.frombuffer(foot, dtype=np.uint8)
    return buf.data


def render_json(ans: SeriesAnswer | CurrentAnswer | SimAnswer) -> bytes:
    """Return the JSON body of an answer.

    Args:
        ans: the answer.

    Returns:
        UTF-8 JSON.
    """
    body = render_json_buffer(ans)
    return body if isinstance(body, bytes) else body.tobytes()


def render_json_buffer(
    ans: SeriesAnswer | CurrentAnswer | SimAnswer, alloc: Callable[[int], U8] = _empty
) -> bytes | memoryview:
    """Return the JSON body of an answer without a final copy (what a server sends).

    A large time series is assembled in one buffer: this returns a view of it (bytes of
    ``len()`` one each), where :func:`render_json` copies it into ``bytes``.

    Args:
        ans: the answer.
        alloc: returns a uint8 array of at least the given size, for the large answers'
            buffer (a server recycles its buffers: fresh memory costs a page fault per 4 KiB).

    Returns:
        UTF-8 JSON: ``bytes``, or a contiguous one-dimensional view of unsigned bytes.
    """
    if isinstance(ans, SimAnswer):
        return orjson.dumps([{"date": d, "physical": p, "esim": e} for d, p, e in ans.rows])
    if isinstance(ans, CurrentAnswer):
        return orjson.dumps(dict(ans.members))
    if sum(len(a.values) for a in ans.arrays) <= SMALL_ANSWER:
        return _series_small(ans)
    return _series_json(ans, alloc)


def _numbers(values: F64) -> list[int | float]:
    """Return values as Python numbers: integers when integral."""
    return [int(v) if v.is_integer() else v for v in values.tolist()]


def _number_texts(values: F64) -> list[bytes]:
    """Return each value as orjson writes it in a dict of ``_numbers``: integers when integral."""
    v = np.asarray(values, dtype=np.float64)
    if not (np.abs(v) < 2.0**53).all():  # NaN, infinities or beyond exact integers
        return [orjson.dumps(x) for x in _numbers(v)]
    whole = np.floor(v)
    integral = whole == v
    if integral.all():
        return orjson.dumps(v.astype(np.int64), option=orjson.OPT_SERIALIZE_NUMPY)[1:-1].split(b",")
    floats = orjson.dumps(v.tolist())[1:-1].split(b",")
    if not integral.any():
        return floats
    ints = orjson.dumps(whole[integral].astype(np.int64), option=orjson.OPT_SERIALIZE_NUMPY)
    texts = np.array(floats, dtype=object)
    texts[integral] = ints[1:-1].split(b",")
    out: list[bytes] = texts.tolist()
    return out


def _stamp_texts(epoch: I64, offset: int, suffix: str) -> list[str]:
    m = stamp_matrix(epoch, offset, suffix)
    return [s.decode() for s in m.view(f"S{m.shape[1]}").ravel().tolist()]


def _foot(echo: list[tuple[str, Any]]) -> bytes:
    """Return what follows the result array: ``],`` and the echoed members, then ``}``."""
    members = orjson.dumps(dict(echo))
    return b"]," + members[1:] if len(members) > 2 else b"]}"


def _point_parts(arr: SeriesArray) -> tuple[bytes, bytes]:
    """Return the text between a point's stamp and number, and the text after the number."""
    m = arr.metric
    mid = b'","name":' + orjson.dumps(m.name) + b',"value":'
    if m.percentile is not None:
        return mid, b"}"
    return mid, b',"aggregation_type":' + orjson.dumps(m.aggregation) + b"}"


def _heads(epoch: I64, offset: int, suffix: str, mid: bytes, tail: bytes) -> list[bytes]:
    """Return the text before each point's number, after the previous point's ``tail``."""
    stamps = stamp_matrix(epoch, offset, suffix)
    lead = tail + b',{"time_stamp":"'
    at, ws = len(lead), stamps.shape[1]
    rows = np.empty((len(epoch), at + ws + len(mid)), dtype=np.uint8)
    rows[:, :at] = np.frombuffer(lead, dtype=np.uint8)
    rows[:, at : at + ws] = stamps
    rows[:, at + ws :] = np.frombuffer(mid, dtype=np.uint8)
    heads: list[bytes] = rows.view(f"S{rows.shape[1]}").ravel().tolist()
    heads[0] = heads[0][len(tail) + 1 :]
    return heads


@functools.lru_cache(maxsize=GRID_CACHE)
def _grid_stamps(first: int, step: int, count: int, offset: int, suffix: str) -> U8:
    """Return :func:`stamp_matrix` of the stamps ``first + k * step``, k < count (memoised,
    read-only): a fan-out asks every value for the same grid."""
    stamps = stamp_matrix(first + step * np.arange(count, dtype=np.int64), offset, suffix)
    stamps.flags.writeable = False
    return stamps


@functools.lru_cache(maxsize=GRID_CACHE)
def _grid_heads(
    first: int, step: int, count: int, offset: int, suffix: str, mid: bytes, tail: bytes
) -> tuple[bytes, ...]:
    """Return ``_heads`` of the stamps ``first + k * step``, k < count (memoised)."""
    epoch = first + step * np.arange(count, dtype=np.int64)
    return tuple(_heads(epoch, offset, suffix, mid, tail))


def _series_small(ans: SeriesAnswer) -> bytes:
    """Write a small time series compactly, as ``orjson.dumps`` writes it as dicts."""
    out = [b'{"result":[']
    for k, arr in enumerate(ans.arrays):
        if k:
            out.append(b",")
        n = len(arr.values)
        if n == 0:
            out.append(b"[]")
            continue
        mid, tail = _point_parts(arr)
        if arr.grid is None:
            heads: Sequence[bytes] = _heads(arr.stamps, ans.offset, ans.suffix, mid, tail)
        else:
            first, step = arr.grid
            heads = _grid_heads(int(first), int(step), n, ans.offset, ans.suffix, mid, tail)
        parts = [b""] * (2 * n)
        parts[::2] = heads
        parts[1::2] = _number_texts(arr.values)
        out += (b"[", b"".join(parts), tail, b"]")
    out.append(_foot(ans.echo))
    return b"".join(out)


def _csv_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def render_csv(ans: SeriesAnswer | CurrentAnswer | SimAnswer) -> bytes:
    """Return the CSV body of an answer (layouts in the module docstring).

    Args:
        ans: the answer.

    Returns:
        UTF-8 CSV with ``\\r\\n`` line ends.
    """
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    if isinstance(ans, SimAnswer):
        writer.writerow(["date", "physical", "esim"])
        writer.writerows(ans.rows)
        return buf.getvalue().encode()
    if isinstance(ans, CurrentAnswer):
        writer.writerow([k for k, _ in ans.members])
        writer.writerow([_csv_text(v) for _, v in ans.members])
        return buf.getvalue().encode()
    keys = [k for k, _ in ans.echo]
    tail = [_csv_text(v) for _, v in ans.echo]
    writer.writerow(["time_stamp", "name", "aggregation_type", "value", *keys])
    for arr in ans.arrays:
        if len(arr.values) == 0:
            continue
        st = _stamp_texts(arr.stamps, ans.offset, ans.suffix)
        nums = value_matrix(arr.values)
        nv = [s.decode().strip() for s in nums.view(f"S{nums.shape[1]}").ravel().tolist()]
        agg = arr.metric.aggregation if arr.metric.percentile is None else ""
        writer.writerows([t, arr.metric.name, agg, v, *tail] for t, v in zip(st, nv, strict=True))
    return buf.getvalue().encode()
