"""Stitching windowed answers by ownership, and concatenating fan-out answers."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..schema import TIMESERIES, schema_for, shape_of
from ._request import request_info

Window = tuple[pd.DataFrame, datetime | pd.Timestamp | str, datetime | pd.Timestamp | str]


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
        >>> both = concat_frames([frame_for_msisdn_1, frame_for_msisdn_2])  # doctest: +SKIP
    """
    if not frames:
        if shape is None:
            raise InputError("concat_frames needs at least one frame or a shape")
        return schema_for(shape).empty()
    try:
        shape = shape or shape_of(frames[0])
        schema = schema_for(shape)
        checked = [schema.validate(f) for f in frames]
    except ValueError as exc:
        raise InputError(f"cannot concatenate: {exc}") from None
    dims: list[str] = []
    for f in checked:
        dims += [d for d in schema.dimensions_of(f) if d not in dims]
    dtypes = schema.dtypes(dims)
    full = [_with_columns(f, dtypes) for f in checked if len(f)]
    if not full:
        out = schema.empty(dims)
    else:
        out = pd.concat(full, ignore_index=True) if len(full) > 1 else full[0]
        out = out.reset_index(drop=True)
        out = pd.DataFrame(
            {c: out[c] if out[c].dtype == dt else out[c].astype(dt) for c, dt in dtypes.items()}
        )
    out.attrs = copy.deepcopy(frames[0].attrs)
    out.attrs["shape"] = shape
    return out


def _with_columns(frame: pd.DataFrame, dtypes: dict[str, Any]) -> pd.DataFrame:
    """Return ``frame`` with every column of ``dtypes`` (missing ones null, typed), in order."""
    missing = {
        c: pd.Series(pd.NA, index=frame.index, dtype=dt)
        for c, dt in dtypes.items()
        if c not in frame.columns
    }
    out = (frame.assign(**missing) if missing else frame)[list(dtypes)]  # a new frame
    out.attrs = {}  # pd.concat would deep-copy and compare every part's attrs
    return out


def stitch(parts: Sequence[Window], shape: str | None = None) -> pd.DataFrame:
    """Join the frames of consecutive windows, keeping each point in the window that owns it.

    Each window keeps the points whose bucket start (``time_stamp``; ``date`` as UTC midnight
    for SIM counts; ``start_time`` for current values) lies in ``[start, end)``; the first
    window also keeps what lies before its start and the last what lies at or after its end.
    The result is in the canonical order of :func:`edgereports.to_frame` (series by echoed
    keys, then requested metric, each sorted by time), so a windowed pull equals the same range
    fetched whole.

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
        lo, hi = _utc(start, k, "start"), _utc(end, k, "end")
        if lo > hi:
            raise InputError(f"window {k} starts after it ends ({lo} > {hi})")
        bucket = _bucket(frame, shape)
        keep = np.ones(len(frame), dtype=bool)
        if k > 0:
            keep &= _ge(bucket, lo, shape)
        if k < last:
            keep &= ~_ge(bucket, hi, shape)
        kept.append(frame[keep] if not keep.all() else frame)
    out = concat_frames(kept, shape=shape)
    return _canonical(out, shape)


def _utc(value: object, k: int, which: str) -> pd.Timestamp:
    try:
        ts = pd.Timestamp(value)  # type: ignore[arg-type]
    except (ValueError, TypeError) as exc:
        raise InputError(f"window {k} {which} is not a time: {value!r} ({exc})") from None
    if ts.tzinfo is None:
        raise InputError(f"window {k} {which} must be timezone-aware, got {value!r}")
    return ts.tz_convert("UTC")


def _bucket(frame: pd.DataFrame, shape: str) -> pd.Series:
    column = {"timeseries": "time_stamp", "current": "start_time", "sim_count": "date"}[shape]
    if column not in frame.columns:
        raise InputError(f"{shape} frame has no {column} column")
    series: pd.Series = frame[column]
    return series


def _ge(bucket: pd.Series, bound: pd.Timestamp, shape: str) -> np.ndarray:
    if shape == "sim_count":
        naive = bound.tz_localize(None)
        return np.asarray(bucket >= naive, dtype=bool)
    return np.asarray(bucket >= bound, dtype=bool)


def _canonical(df: pd.DataFrame, shape: str) -> pd.DataFrame:
    """Sort rows as to_frame does: by series (first appearance), metric rank, then time."""
    if len(df) < 2 or shape == "current":
        return df
    if shape == "sim_count":
        series = _first_appearance(df, ["account_id"])
        order = np.lexsort((df["date"].to_numpy().view(np.int64), series))
    else:
        dims = list(TIMESERIES.dimensions_of(df))
        series = _first_appearance(df, ["account_id", *dims])
        metric = _metric_rank(df)
        stamps = df["time_stamp"].dt.tz_localize(None).to_numpy().view(np.int64)
        order = np.lexsort((stamps, metric, series))
    if bool((np.diff(order) > 0).all()):
        return df
    out = df.take(order).reset_index(drop=True)
    out.attrs = df.attrs
    return out


def _first_appearance(df: pd.DataFrame, columns: list[str]) -> np.ndarray:
    keys = df[columns].astype(object).where(df[columns].notna(), None)
    codes: np.ndarray = keys.groupby(columns, sort=False, dropna=False).ngroup().to_numpy()
    return codes


def _metric_rank(df: pd.DataFrame) -> np.ndarray:
    """Rank each row's (metric, aggregation, percentile) as the frame builder orders them."""
    pairs = _first_appearance(df, ["metric", "aggregation"])
    triples = _first_appearance(df, ["metric", "aggregation", "percentile"])
    cols = ["metric", "aggregation"]
    firsts = df[cols].astype(object).where(df[cols].notna(), None).groupby(triples).head(1)
    pair_of = pairs[firsts.index]
    try:
        req = request_info(df.attrs.get("request"))
    except InputError:
        req = None
    n_req = len(req.metrics) if req is not None else 0
    keys: list[tuple[int, int]] = []
    for code, (metric, agg) in enumerate(firsts.itertuples(index=False, name=None)):
        index = req.match(metric, agg)[0] if req is not None else None
        keys.append((index if index is not None else n_req + int(pair_of[code]), code))
    order = sorted(range(len(keys)), key=keys.__getitem__)
    lookup = np.empty(len(keys), dtype=np.int64)
    lookup[order] = np.arange(len(keys))
    ranks: np.ndarray = lookup[triples]
    return ranks
