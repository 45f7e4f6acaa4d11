"""Stitching windowed answers by ownership, and concatenating fan-out answers.

Every step works on frames without ``attrs`` (pandas deep-copies ``attrs`` on each operation
of a frame that has them) and sets the ``attrs`` once on the result; row order is computed on
integer codes (:mod:`._order`), so both functions cost little on small frames.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeAlias

from .._dependencies import lazy_import
from ..errors import InputError
from ..query.timegrid import owned_mask
from ..schema import FrameSchema, schema_for, shape_of
from ._order import canonical, datetimes, take_rows
from ._request import request_info

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
else:
    np = lazy_import("numpy")
    pd = lazy_import("pandas")
    pa = lazy_import("pyarrow")

Window: TypeAlias = (
    "tuple[pd.DataFrame, datetime | pd.Timestamp | str, datetime | pd.Timestamp | str]"
)

#: The column that holds each shape's bucket start.
BUCKET = {"timeseries": "time_stamp", "current": "start_time", "sim_count": "date"}


def concat_frames(frames: Sequence[pd.DataFrame], shape: str | None = None) -> pd.DataFrame:
    """Concatenate frames of one shape (e.g. one per fan-out value), keeping schema and dtypes.

    Dimension columns are the union of the frames' (in order of first appearance; a frame
    without one gets nulls). Rows keep their order; ``attrs`` are those of the first frame.

    Args:
        frames: frames of one shape.
        shape: the shape; by default that of the first frame.

    Returns:
        The concatenated frame, with a fresh RangeIndex.

    Raises:
        InputError: when no frame and no shape are given, or the frames do not fit the shape.

    Example:
        >>> import edgereports as er
        >>> def one(value):
        ...     return er.to_frame({"result": [[{"time_stamp": "2022-07-07T00:00:00Z",
        ...         "name": "uplink_bytes", "value": value, "aggregation_type": "COUNT"}]]})
        >>> concat_frames([one(1), one(2)])["value"].tolist()
        [1.0, 2.0]
    """
    if not frames:
        if shape is None:
            raise InputError("concat_frames needs at least one frame or a shape")
        return schema_for(shape).empty()
    try:
        shape = shape or shape_of(frames[0])
    except ValueError as exc:
        raise InputError(f"cannot concatenate: {exc}") from None
    out = _concat(frames, schema_for(shape))
    out.attrs = copy.deepcopy(frames[0].attrs)
    out.attrs["shape"] = shape
    return out


def _concat(frames: Sequence[pd.DataFrame], schema: FrameSchema) -> pd.DataFrame:
    """Concatenate checked, attrs-free copies of ``frames`` (the result has no attrs)."""
    try:
        checked = [conforming(f, schema) for f in frames]
    except ValueError as exc:
        raise InputError(f"cannot concatenate: {exc}") from None
    dims: list[str] = []
    for f in checked:
        dims += [d for d in schema.dimensions_of(f) if d not in dims]
    dtypes = schema.dtypes(dims)
    full = [_with_columns(f, dtypes) for f in checked if len(f)]
    if not full:
        return schema.empty(dims)
    if len(full) > 1:
        out = pd.concat(full, ignore_index=True)
    else:
        out = full[0] if _copy_on_write() else full[0].copy()  # never a view a caller can edit
    if not out.index.equals(pd.RangeIndex(len(out))):
        out = out.set_axis(pd.RangeIndex(len(out)), axis=0)  # a new frame: no shared index
    wrong = {c: dt for c, dt in dtypes.items() if out[c].dtype != dt}
    if wrong:  # a column that was all-null in every frame holding it
        out = out.astype(wrong)
    out.attrs = {}
    return out


def _copy_on_write() -> bool:
    """Whether frames sharing data are safe to hand out (pandas' copy-on-write)."""
    if int(pd.__version__.split(".", 1)[0]) >= 3:
        return True  # always on from pandas 3
    return pd.get_option("mode.copy_on_write") is True  # pragma: no cover - pandas 2


def conforming(frame: pd.DataFrame, schema: FrameSchema) -> pd.DataFrame:
    """``frame`` without ``attrs`` (a view), checked against ``schema`` and cast when needed.

    Raises:
        ValueError: the frame does not fit the schema.
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{schema.shape} frame expected, got {type(frame).__name__}")
    bare = pd.DataFrame(frame, copy=False)
    bare.attrs = {}
    try:
        expected = list(schema.dtypes(schema.dimensions_of(bare)).items())
    except ValueError:
        expected = []
    if expected == list(zip(bare.columns, bare.dtypes, strict=True)) and not any(
        _has_nulls(bare[c]) for c in schema.required
    ):
        return bare
    out = schema.validate(bare)
    out.attrs = {}
    return out


def _has_nulls(column: pd.Series) -> bool:
    """Whether ``column`` holds a null (pyarrow-backed columns: from their null counts)."""
    array = column.array
    if isinstance(array, pd.arrays.ArrowStringArray):
        return bool(pa.array(array).null_count)
    return bool(array.isna().any())


def _with_columns(frame: pd.DataFrame, dtypes: dict[str, Any]) -> pd.DataFrame:
    """Return ``frame`` with every column of ``dtypes`` (missing ones null, typed), in order."""
    if list(frame.columns) == list(dtypes):
        return frame
    missing = {
        c: pd.Series(pd.NA, index=frame.index, dtype=dt)
        for c, dt in dtypes.items()
        if c not in frame.columns
    }
    out = (frame.assign(**missing) if missing else frame)[list(dtypes)]  # a new frame
    out.attrs = {}
    return out


def _owned(
    frame: pd.DataFrame,
    start: object,
    end: object,
    first: bool,
    last: bool,
    shape: str | None,
    k: int,
    *,
    right: bool = False,
) -> np.ndarray | None:
    """The mask of the rows window ``k`` owns, or None when it owns them all."""
    lo, hi = _utc(start, k, "start"), _utc(end, k, "end")
    if lo > hi:
        raise InputError(f"window {k} starts after it ends ({lo} > {hi})")
    if (first and last) or not len(frame):
        return None
    try:
        shape = shape or shape_of(frame)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    column = BUCKET[shape]
    if column not in frame.columns:
        raise InputError(f"{shape} frame has no {column} column")
    bucket = frame[column]
    if bucket.dtype.kind != "M":
        raise InputError(f"{shape} frame's {column} column is not a timestamp ({bucket.dtype})")
    stamps = datetimes(bucket)
    low, high = lo.tz_localize(None).to_datetime64(), hi.tz_localize(None).to_datetime64()
    keep = owned_mask(stamps, low, high, first=first, last=last, at_end=right)
    return None if keep is None or keep.all() else keep


def canonical_order(
    frame: pd.DataFrame, request: Any = None, shape: str | None = None
) -> pd.DataFrame:
    """Sort a frame assembled from several answers as one answer is sorted.

    Rows go by series (their echoed keys, in order of first appearance), then by metric entry
    (the order of the request's metrics, entries it does not name after them in order of
    appearance; a percentile row goes with the entry asked with that percentile), then by
    time: the order of :func:`edgereports.to_frame`.

    Args:
        frame: a timeseries, current or sim_count frame.
        request: the request (a ``Report`` or its dict) whose metrics give the order; by
            default ``frame.attrs["request"]``.
        shape: the frame's shape; by default :func:`edgereports.schema.shape_of`.

    Returns:
        ``frame`` itself when its rows are already in order, else the sorted rows with a
        fresh RangeIndex and a copy of its ``attrs``.

    Raises:
        InputError: a frame of no known shape, without the columns of its shape, or whose
            bucket column is not a timestamp.
        QueryError: ``request`` is neither a report nor a request dict.
    """
    try:
        shape = shape or shape_of(frame)
        schema = schema_for(shape)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    missing = [c for c in schema.fixed if c not in frame.columns]
    if missing:
        raise InputError(f"{shape} frame lacks column(s) {', '.join(missing)}")
    if frame[BUCKET[shape]].dtype.kind != "M":
        raise InputError(f"{shape} frame's {BUCKET[shape]} column is not a timestamp")
    req = request_info(frame.attrs.get("request") if request is None else request)
    bare = pd.DataFrame(frame, copy=False)
    bare.attrs = {}
    out = canonical(bare, shape, req)
    if out is bare:
        return frame
    out.attrs = copy.deepcopy(frame.attrs)
    return out


def stitch(parts: Sequence[Window], shape: str | None = None) -> pd.DataFrame:
    """Join the frames of consecutive windows, keeping each point in the window that owns it.

    Each window keeps the points whose bucket start (``time_stamp``; ``date`` as UTC midnight
    for SIM counts; ``start_time`` for current values) lies in ``[start, end)``; the first
    window also keeps what lies before its start and the last what lies at or after its end
    (the rule of :func:`edgereports.query.timegrid.owned_mask`). The result is in the canonical
    order of :func:`edgereports.to_frame` (series by echoed keys, then requested metric, each
    sorted by time), so a windowed pull equals the same range fetched whole.

    Args:
        parts: ``(frame, window_start, window_end)`` in window order; bounds are timezone-aware
            datetimes (or ISO 8601 text with an offset).
        shape: the shape; by default that of the first frame.

    Returns:
        The stitched frame, with the schema and ``attrs`` of the first part.

    Raises:
        InputError: for naive or unordered bounds, or frames that do not fit the shape.
    """
    if not parts:
        if shape is None:
            raise InputError("stitch needs at least one window or a shape")
        return schema_for(shape).empty()
    try:
        shape = shape or shape_of(parts[0][0])
    except ValueError as exc:
        raise InputError(str(exc)) from None
    kept = []
    last = len(parts) - 1
    for k, (frame, start, end) in enumerate(parts):
        keep = _owned(frame, start, end, k == 0, k == last, shape, k)
        if keep is None:
            bare = pd.DataFrame(frame, copy=False)
            bare.attrs = {}
            kept.append(bare)
        else:
            kept.append(_rows(frame, keep))
    attrs = copy.deepcopy(parts[0][0].attrs)
    attrs["shape"] = shape
    out = _concat(kept, schema_for(shape))
    if shape != "current":
        try:
            req = request_info(attrs.get("request"))
        except InputError:
            req = None
        out = canonical(out, shape, req)
    out.attrs = attrs
    return out


def _rows(frame: pd.DataFrame, keep: np.ndarray) -> pd.DataFrame:
    """The rows of ``frame`` where ``keep`` holds (a new frame, no ``attrs``, RangeIndex)."""
    bare = pd.DataFrame(frame, copy=False)
    bare.attrs = {}
    return take_rows(bare, np.flatnonzero(keep))


def _utc(value: object, k: int, which: str) -> pd.Timestamp:
    try:
        ts = pd.Timestamp(value)  # type: ignore[arg-type]
    except (ValueError, TypeError) as exc:
        raise InputError(f"window {k} {which} is not a time: {value!r} ({exc})") from None
    if ts.tzinfo is None:
        raise InputError(f"window {k} {which} must be timezone-aware, got {value!r}")
    return ts.tz_convert("UTC")
