"""Long frames to wide ones (one column per measure) and back.

Naming rule: a measure's column is the metric's name, then ``__`` and the aggregation in lower
case (``uplink_bytes__count``), or ``__p`` and the percentile (``uplink_bandwidth__p95``,
``__p99.5``); a metric with neither keeps its bare name. :func:`long` splits a name at its
last ``__`` by the same rule, so ``long(wide(df))`` gives the rows of ``df`` back.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from .._dependencies import lazy_import
from ..errors import InputError
from ..schema import schema_for, shape_of
from .buckets import bucket_start

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_import("pandas")

__all__ = ["long", "measure_name", "parse_measure", "wide"]

_MEASURE_COLUMNS = ("metric", "aggregation", "percentile", "value", "value_text")
_PERCENTILE = re.compile(r"p(\d+(?:\.\d+)?)")


def measure_name(metric: str, aggregation: str | None, percentile: float | None) -> str:
    """The wide column of one measure (see the module's naming rule).

    Example:
        >>> measure_name("uplink_bytes", "COUNT", None)
        'uplink_bytes__count'
        >>> measure_name("uplink_bandwidth", None, 95.0)
        'uplink_bandwidth__p95'
    """
    if percentile is not None and not math.isnan(percentile):
        return f"{metric}__p{percentile:g}"
    if aggregation:
        return f"{metric}__{aggregation.lower()}"
    return metric


def parse_measure(column: str) -> tuple[str, str | None, float | None]:
    """The inverse of :func:`measure_name`: ``(metric, aggregation, percentile)``."""
    metric, sep, suffix = column.rpartition("__")
    if not sep or not metric:
        return column, None, None
    match = _PERCENTILE.fullmatch(suffix)
    if match:
        return metric, None, float(match.group(1))
    return metric, suffix.upper(), None


def wide(df: pd.DataFrame) -> pd.DataFrame:
    """Pivot a long timeseries or current frame to one float64 column per measure.

    Rows are keyed by the frame's time columns, ``account_id`` and its dimensions (sorted);
    measure columns come in order of first appearance and are named by the module's rule
    (``uplink_bytes__count``, ``uplink_bandwidth__p95``). ``attrs`` are kept. A v2 frame
    (stamped at the end of each piece) gains ``bucket_start`` after ``time_stamp``: the bucket
    each row covers (:func:`~edgereports.normalize.buckets.bucket_start`), to join on.

    Args:
        df: a timeseries or current frame.

    Returns:
        The wide frame; :func:`long` turns it back.

    Raises:
        InputError: a SIM-count frame (already one column per measure), a current frame with
            text values (``value_text``), or two rows for the same key and measure.

    Example:
        >>> import edgereports as er
        >>> df = er.to_frame({"result": [[{"time_stamp": "2022-07-07T00:00:00Z",
        ...     "name": "uplink_bytes", "value": 3, "aggregation_type": "COUNT"}]]})
        >>> list(er.wide(df).columns)
        ['time_stamp', 'account_id', 'uplink_bytes__count']
    """
    shape = _shape(df)
    if "value_text" in df.columns and df["value_text"].notna().any():
        raise InputError("wide() takes numbers only: this frame has text values (value_text)")
    keys = [c for c in df.columns if c not in _MEASURE_COLUMNS]
    percentiles = df["percentile"] if shape == "timeseries" else [None] * len(df)
    names = [
        measure_name(str(m), None if pd.isna(a) else str(a), None if pd.isna(p) else float(p))
        for m, a, p in zip(df["metric"], df["aggregation"], percentiles, strict=True)
    ]
    labelled = df[keys].assign(_measure=names, _value=df["value"].to_numpy())
    if labelled.duplicated([*keys, "_measure"]).any():
        raise InputError("wide() needs one value per key and measure; this frame has repeats")
    order = list(dict.fromkeys(names))
    out = labelled.set_index([*keys, "_measure"])["_value"].unstack("_measure")
    out = out.reindex(columns=order).reset_index()
    out.columns.name = None
    for key in keys:
        out[key] = out[key].astype(df[key].dtype)
    out.attrs = dict(df.attrs)
    if shape == "timeseries" and df.attrs.get("api_version") == "v2":
        out.insert(1, "bucket_start", bucket_start(out))
    return out


def long(df: pd.DataFrame) -> pd.DataFrame:
    """Turn a frame made by :func:`wide` back into the long frame (empty cells dropped).

    Args:
        df: a wide frame; its string and time columns are the keys, the float64 ones measures.

    Returns:
        The long frame with the pinned schema of its shape.

    Raises:
        InputError: the frame is of another shape.

    Example:
        >>> import edgereports as er
        >>> df = er.to_frame({"result": [[{"time_stamp": "2022-07-07T00:00:00Z",
        ...     "name": "uplink_bytes", "value": 3, "aggregation_type": "COUNT"}]]})
        >>> er.long(er.wide(df)).equals(df)
        True
    """
    shape = df.attrs.get("shape") or ("current" if "start_time" in df.columns else "timeseries")
    if shape not in ("timeseries", "current"):
        raise InputError(f"long() takes a wide timeseries or current frame, got {shape!r}")
    df = df.drop(columns=["bucket_start"], errors="ignore")  # a v2 frame's, made by wide()
    measures = [c for c in df.columns if str(df[c].dtype) == "float64"]
    keys = [c for c in df.columns if c not in measures]
    frame = schema_for(shape)
    if not measures:  # the wide form of an empty frame
        empty = frame.empty([k for k in keys if k not in frame.fixed])
        empty.attrs = dict(df.attrs)
        return empty
    melted = df.melt(id_vars=keys, value_vars=measures, var_name="_measure", value_name="value")
    melted = melted[melted["value"].notna()].reset_index(drop=True)
    parsed = [parse_measure(str(c)) for c in melted["_measure"]]
    out = melted[keys].copy()
    out["metric"] = [p[0] for p in parsed]
    out["aggregation"] = [p[1] for p in parsed]
    if shape == "timeseries":
        out["percentile"] = [p[2] for p in parsed]
    out["value"] = melted["value"].to_numpy()
    if shape == "current":
        out["value_text"] = None
    out = frame.validate(out[frame.columns(frame.dimensions_of(out))])
    time = "time_stamp" if shape == "timeseries" else "start_time"
    series = [c for c in keys if c != time and c != "end_time"]
    out = out.sort_values([*series, "metric", time], kind="stable", ignore_index=True)
    out.attrs = dict(df.attrs)
    return out


def _shape(df: pd.DataFrame) -> str:
    shape = df.attrs.get("shape") or shape_of(df)
    if shape not in ("timeseries", "current"):
        raise InputError(
            f"wide() takes a timeseries or current frame; a {shape} frame is already wide"
        )
    return str(shape)
