"""The range rule of a read of exported data, for the Parquet files and the Delta table alike.

A read of ``[start, end)`` keeps the bucket holding ``start`` (it may begin before it), as a
fetch does: :func:`bucket_start` moves the lower bound to that bucket's start, and
:func:`bounds_filter` is the dataset filter ``start <= bucket < end``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .._dependencies import lazy_import
from ..query.timegrid import bucket_length, floor

pa = lazy_import("pyarrow")
ds = lazy_import("pyarrow.dataset")


__all__ = ["bounds_filter", "bucket_start"]


def bucket_start(lo: datetime | None, shape: str, request: Mapping[str, Any]) -> datetime | None:
    """The start of the bucket holding ``lo`` (the range rule: the bucket holding a range's
    start belongs to it, though it may begin before it); HOUR or DAY from the request (or the
    definition) the data was fetched with."""
    if lo is None:
        return None
    bucket = bucket_length(request.get("granularity"), daily=shape == "sim_count")
    if bucket is None:  # a granularity of unknown alignment: the bound is kept as given
        return lo
    return floor(lo, bucket)


def bounds_filter(lo: datetime | None, hi: datetime | None, shape: str, kind: Any) -> Any:
    """The dataset filter ``lo <= bucket < hi`` on the bucket column of ``shape`` (or None)."""
    key = "time_stamp" if shape == "timeseries" else "date"
    expr = None
    for bound, op in ((lo, "ge"), (hi, "lt")):
        if bound is None:
            continue
        value = bound if shape == "timeseries" else bound.replace(tzinfo=None)
        scalar = pa.scalar(value, type=kind)
        term = ds.field(key) >= scalar if op == "ge" else ds.field(key) < scalar
        expr = term if expr is None else expr & term
    return expr
