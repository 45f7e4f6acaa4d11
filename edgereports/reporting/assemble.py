"""Assembling a pull: decoding each answer, ownership, concatenation and canonical order.

The rules are those of :func:`edgereports.normalize.stitch` (DESIGN.md "Windows, fan-out and
stitching"), applied per part as soon as it is normalized (in the worker thread) and then once
over the whole pull, so the cost stays linear in the number of requests: each window keeps the
points whose bucket start lies in ``[window start, window end)``, the first window also what
lies before its start and the last what lies at or after its end; the parts are concatenated
(branch by branch, windows in order) and sorted as one answer would be: by series (first
appearance), then by the metric's place in the request, then by time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import SchemaError
from ..terms import Metric
from .windows import Window

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["answer_frame", "canonical", "combine", "owned", "parse_json"]

_BUCKET = {"timeseries": "time_stamp", "sim_count": "date", "current": "start_time"}


def parse_json(body: bytes, what: str, redact: Callable[[object], str]) -> Any:
    """Parse a JSON answer; a body that is not JSON is a :class:`SchemaError` naming ``what``."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        shown = body[:120].decode("utf-8", errors="replace")
        raise SchemaError(
            redact(f"{what}: the answer is not valid JSON ({exc}): {shown!r}"),
            where=f"char {exc.pos}",
        ) from None


def answer_frame(
    body: bytes,
    request: dict[str, Any],
    csv: bool,
    what: str,
    redact: Callable[[object], str],
) -> pd.DataFrame:
    """Normalize one answer with the request it was sent with (errors redacted).

    Raises:
        SchemaError: the body is not the JSON (or CSV) of a known shape; names ``what``.
    """
    from ..normalize import read_csv, to_frame

    try:
        if csv:
            return read_csv(body, request)
        head = body.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
        if head not in (b"{", b"["):
            shown = body[:120].decode("utf-8", errors="replace")
            raise SchemaError(f"the answer is not JSON: {shown!r}", where="char 0")
        return to_frame(body, request)
    except SchemaError as exc:
        raise SchemaError(redact(f"{what}: {exc}"), where=redact(exc.where)) from None


def owned(frame: pd.DataFrame, window: Window | None) -> pd.DataFrame:
    """The rows of ``frame`` (one window's answer) that the window owns.

    Args:
        frame: a normalized answer (``attrs["shape"]`` set).
        window: the window it answers, or None for a report sent whole.

    Returns:
        ``frame`` itself when it owns every row, else the owned rows.
    """
    import numpy as np
    import pandas as pd

    if window is None or window.count == 1 or len(frame) == 0:
        return frame
    shape = frame.attrs.get("shape", "timeseries")
    stamps = frame[_BUCKET[shape]]
    lo = pd.Timestamp(window.start).tz_convert("UTC")
    hi = pd.Timestamp(window.end).tz_convert("UTC")
    if shape == "sim_count":  # naive UTC midnights
        lo, hi = lo.tz_localize(None), hi.tz_localize(None)
    keep = np.ones(len(frame), dtype=bool)
    if window.index > 0:
        keep &= np.asarray(stamps >= lo, dtype=bool)
    if window.index < window.count - 1:
        keep &= np.asarray(stamps < hi, dtype=bool)
    return frame if keep.all() else frame[keep]


def combine(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate frames of one shape; plain ``pd.concat`` when their columns agree.

    Frames whose columns differ (e.g. a current value echoing an extra dimension) go through
    :func:`edgereports.normalize.concat_frames`, which unions the dimension columns.
    """
    import pandas as pd

    from ..normalize import concat_frames

    if len(frames) == 1:
        return frames[0]
    first = frames[0]
    same = all(
        f.columns.equals(first.columns) and f.dtypes.equals(first.dtypes) for f in frames[1:]
    )
    if not same:
        return concat_frames(frames)
    attrs = dict(first.attrs)
    full = [f for f in frames if len(f)] or [first]
    bare = []
    for f in full:  # no attrs on the parts: pandas would deep-copy and compare them
        f = f.copy(deep=False)
        f.attrs = {}
        bare.append(f)
    out = pd.concat(bare, ignore_index=True) if len(bare) > 1 else bare[0].reset_index(drop=True)
    out.attrs = attrs
    return out


def canonical(frame: pd.DataFrame, metrics: Sequence[Metric]) -> pd.DataFrame:
    """Sort as one answer is: series (first appearance), metric in request order, then time.

    Args:
        frame: a timeseries, current or sim_count frame assembled from several answers.
        metrics: the user's metrics, in request order.

    Returns:
        The frame in canonical order (the same object when already in order).
    """
    import numpy as np

    if len(frame) < 2:
        return frame
    columns = list(frame.columns)
    time_column = _BUCKET.get(frame.attrs.get("shape", "timeseries"), "time_stamp")
    if "metric" in columns:
        series_keys = columns[columns.index(time_column) + 1 : columns.index("metric")]
        series_keys = [k for k in series_keys if k != "end_time"]
        rank = _metric_rank(frame, metrics)
    else:
        series_keys = [c for c in columns if c == "account_id"]
        rank = np.zeros(len(frame), dtype=np.int64)
    series = _codes(frame, series_keys) if series_keys else np.zeros(len(frame), np.int64)
    stamps = frame[time_column]
    if getattr(stamps.dt, "tz", None) is not None:
        stamps = stamps.dt.tz_convert(None)
    order = np.lexsort((stamps.to_numpy().view(np.int64), rank, series))
    if bool((np.diff(order) > 0).all()):
        return frame
    out = frame.take(order).reset_index(drop=True)
    out.attrs = frame.attrs
    return out


def _codes(frame: pd.DataFrame, keys: list[str]) -> Any:
    """Group codes of ``keys`` in order of first appearance (nulls are a value)."""
    part = frame[keys].astype(object)
    part = part.where(part.notna(), None)
    return part.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()


def _metric_rank(frame: pd.DataFrame, metrics: Sequence[Metric]) -> Any:
    import numpy as np

    position: dict[tuple[str, str | None, float | None], int] = {}
    for i, m in enumerate(metrics):
        pct = None if m.percentile is None else float(m.percentile)
        position.setdefault((m.name, None if pct is not None else m.aggregation_type, pct), i)
    cols = [c for c in ("metric", "aggregation", "percentile") if c in frame.columns]
    codes = _codes(frame, cols)
    firsts = frame[cols].astype(object)
    firsts = firsts.where(firsts.notna(), None).groupby(codes, sort=True).head(1)
    ranks = []
    for code, row in enumerate(firsts.itertuples(index=False, name=None)):
        name, agg = row[0], row[1] if len(row) > 1 else None
        pct = float(row[2]) if len(row) > 2 and row[2] is not None else None
        key = (name, None if pct is not None else agg, pct)
        ranks.append(position.get(key, len(metrics) + code))
    return np.asarray(ranks, dtype=np.int64)[codes]
