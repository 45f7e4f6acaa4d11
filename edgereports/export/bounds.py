"""The range rule of a read of exported data, for every destination.

A read of ``[start, end)`` holds the buckets that overlap it, as a fetch does: from the bucket
holding ``start`` (it may begin before it) to the last bucket that begins before ``end``. A v1
row is stamped at its bucket's start, a v2 row at the end of the piece it covers (a stamp at
a bucket boundary ends the bucket before it), so the stamps kept are those a window of the time
grid owns (:func:`~edgereports.query.timegrid.owned_mask`): ``[start of the first bucket,
end)`` for v1, ``(start of the first bucket, end of the last bucket]`` for v2.
:func:`read_bounds` gives those bounds, :func:`bounds_filter` the dataset filter on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .._dependencies import lazy_import
from ..query.timegrid import bucket_length, ceil, floor, owned_mask

pa = lazy_import("pyarrow")
ds = lazy_import("pyarrow.dataset")


__all__ = ["bounds_filter", "read_bounds"]


def read_bounds(
    lo: datetime | None,
    hi: datetime | None,
    shape: str,
    request: Mapping[str, Any],
    *,
    at_end: bool = False,
) -> tuple[datetime | None, datetime | None]:
    """The bounds a read of ``[lo, hi)`` compares the stamps with.

    ``lo`` moves to the start of the bucket holding it; with ``at_end`` (v2 stamps), ``hi``
    moves to the end of the last bucket that begins before it. The bucket (HOUR or DAY) is
    that of the request (or the definition) the data was fetched with; a granularity of
    unknown alignment leaves both as given.
    """
    bucket = bucket_length(request.get("granularity"), daily=shape == "sim_count")
    if bucket is None and at_end and request.get("granularity") is None:
        bucket = bucket_length("HOUR")  # the v2 service's default granularity
    if bucket is None:
        return lo, hi
    start = None if lo is None else floor(lo, bucket)
    end = ceil(hi, bucket) if hi is not None and at_end else hi
    return start, end


def bounds_filter(
    lo: datetime | None, hi: datetime | None, shape: str, kind: Any, *, at_end: bool = False
) -> Any:
    """The dataset filter on the bucket column of ``shape`` keeping the stamps a window
    ``[lo, hi)`` owns (``(lo, hi]`` with ``at_end``), or None when both bounds are None."""
    key = "time_stamp" if shape == "timeseries" else "date"

    def scalar(bound: datetime | None) -> Any:
        if bound is None:
            return None
        return pa.scalar(bound if shape == "timeseries" else bound.replace(tzinfo=None), kind)

    return owned_mask(
        ds.field(key),
        scalar(lo),
        scalar(hi),
        first=lo is None,
        last=hi is None,
        at_end=at_end,
    )
