"""The bucket each row of a frame covers: one way to place any frame's rows in time.

A v1 row is stamped at the start of its bucket; a v2 row at the end of the piece of the range
it covers (the service cuts a range at bucket boundaries). :func:`bucket_start` gives both the
bucket they cover, so that v1 and v2 frames of the same days join on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._dependencies import lazy_import
from ..errors import InputError
from ..query.timegrid import frame_buckets, row_bucket_micros

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_import("pandas")

__all__ = ["bucket_start"]


def bucket_start(df: pd.DataFrame) -> pd.Series:
    """The start (UTC) of the bucket each row covers, aligned with ``df``'s rows.

    For a v1 frame it equals ``time_stamp`` (``date`` for SIM counts, as UTC midnights); for a
    v2 frame, whose ``time_stamp`` is the end of the piece each row covers, it is the start of
    that bucket (``20:00`` at HOUR covers ``19:00-20:00``). Frames whose rows are not buckets
    (``NOW``, PERCENTILE over a range) keep their stamps.

    Args:
        df: a frame from ``fetch``, ``to_frame``, ``read_csv`` or ``read_export`` (its
            ``attrs`` say its granularity and API version).

    Returns:
        A ``datetime64[us, UTC]`` series named ``bucket_start``, with ``df``'s index.

    Raises:
        InputError: a frame with no ``time_stamp`` or ``date`` column.

    Example:
        >>> import edgereports as er
        >>> df = er.to_frame({"account_id": "A", "result": [[{"time_stamp":
        ...     "2024-06-02T00:00:00+00:00", "name": "ue_connections", "value": 3,
        ...     "aggregation_type": "COUNT"}]]})
        >>> df.attrs.update(api_version="v2", request={"start_date_time": "2024-06-01T00:00Z",
        ...                 "end_date_time": "2024-06-02T00:00Z", "granularity": "DAY"})
        >>> str(er.bucket_start(df)[0].date())
        '2024-06-01'
    """
    column = "time_stamp" if "time_stamp" in df.columns else "date"
    if column not in df.columns:
        raise InputError("bucket_start needs a frame with a time_stamp or date column")
    stamps = df[column]
    if column == "date":
        stamps = stamps.dt.tz_localize("UTC") if stamps.dt.tz is None else stamps
    stamps = stamps.astype("datetime64[us, UTC]")
    rule = frame_buckets(df.attrs)
    if rule is None or not rule[1]:
        return stamps.rename("bucket_start")
    bucket, at_end = rule
    micros = stamps.to_numpy(dtype="datetime64[us]").view("int64")
    starts = row_bucket_micros(micros, bucket, at_end=at_end).view("datetime64[us]")
    return pd.Series(starts, index=df.index, name="bucket_start").dt.tz_localize("UTC")
