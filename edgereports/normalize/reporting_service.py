"""The flat answer of the v2 reporting service into the time-series frame.

The answer (see docs/service.md) is one object: ``account_id``, ``mobile-core-id``,
``metric``, ``aggregation_type``, ``edgepoint`` and ``result``, a list of ``{time_stamp,
value}``. Its frame is the timeseries frame with ``mobile_core_id`` and ``edgepoint`` as
dimension columns (echoed keys other than these and the fixed members become dimension columns
too, in the answer's order, ``-`` written ``_``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._dependencies import lazy_import
from ..schema import TIMESERIES
from ._util import block_strings, fail, ident, parse_stamps, parse_values, timestamp_column
from .detect import decode, parse_json

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy_import("numpy")
    pd = lazy_import("pandas")

__all__ = ["is_service_answer", "service_frame", "service_request"]

_FIXED = ("metric", "aggregation_type", "result", "account_id")


def _text(value: str, where: str) -> None:
    """``value`` can be written as UTF-8 (no lone surrogate), else a SchemaError."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        fail(
            "text that is not valid Unicode (a lone surrogate)",
            where.encode("utf-8", "replace").decode(),
            value.encode("utf-8", "replace").decode(),
        )


def is_service_answer(obj: object) -> bool:
    """Whether ``obj`` is a reporting-service answer (a ``metric`` and a flat ``result``)."""
    if not isinstance(obj, Mapping) or "metric" not in obj:
        return False
    result = obj.get("result")
    if not isinstance(result, list):
        return False
    return isinstance(result[0], Mapping) if result else "mobile-core-id" in obj


def service_request(request: object) -> dict[str, Any] | None:
    """The request dict when ``request`` is a reporting-service request (or its builder)."""
    to_request = getattr(request, "to_request", None)
    if callable(to_request) and hasattr(request, "interval"):
        request = to_request()
    if isinstance(request, Mapping) and "step" in request:
        return dict(request)
    return None


def service_frame(payload: Any, request: Any = None) -> pd.DataFrame:
    """Read a reporting-service answer (parsed JSON, bytes or text) into a timeseries frame.

    Args:
        payload: the answer.
        request: the request it answers, a dict or a ``ServiceReport`` (kept in
            ``df.attrs["request"]``), or None.

    Returns:
        The frame; ``attrs``: ``shape`` ``"timeseries"``, ``source`` ``"json"``, ``request``.

    Raises:
        SchemaError: the answer is not the flat object, or a point is malformed (says where).

    Example:
        >>> df = service_frame({"mobile-core-id": "c1", "metric": "ap_count",
        ...     "aggregation_type": "COUNT", "edgepoint": "PHI-1",
        ...     "result": [{"time_stamp": "2024-08-13T20:58:24+00:00", "value": 14}]})
        >>> list(df.columns)[:4], df["value"].tolist()
        (['time_stamp', 'account_id', 'mobile_core_id', 'edgepoint'], [14.0])
    """
    request = service_request(request) if request is not None else None
    kind, obj = decode(payload)
    if kind == "json":
        obj = parse_json(obj)
    if not isinstance(obj, Mapping):
        fail("a reporting-service answer is an object", "", obj)
    if not isinstance(obj.get("metric"), str):
        fail("metric is missing or not text", "metric", obj.get("metric"))
    points = obj.get("result")
    if not isinstance(points, list):
        fail("result is not a list of points", "result", points)
    stamps, values = [], []
    for i, point in enumerate(points):
        if not isinstance(point, Mapping):
            fail("point is not an object", f"result[{i}]", point)
        stamps.append(point.get("time_stamp"))
        values.append(point.get("value"))
    n = len(points)
    micros = parse_stamps(stamps, lambda i: f"result[{i}].time_stamp", "time_stamp")
    columns: dict[str, Any] = {
        "time_stamp": timestamp_column(micros),
        "account_id": block_strings([ident(obj.get("account_id"), "account_id")], [n]),
    }
    for key, value in obj.items():
        _text(key, key)
        if isinstance(value, str):
            _text(value, key)
        if key not in _FIXED:
            name = key.replace("-", "_")
            if name in TIMESERIES.fixed:  # an echo may not stand in for a column of points
                fail(f"the echoed member {key!r} names a column of the frame", key, value)
            columns[name] = block_strings([ident(value, key)], [n])
    aggregation = obj.get("aggregation_type")
    columns["metric"] = block_strings([obj["metric"]], [n])
    columns["aggregation"] = block_strings([ident(aggregation, "aggregation_type")], [n])
    columns["percentile"] = np.full(n, np.nan)
    columns["value"] = parse_values(values, lambda i: f"result[{i}].value", allow_text=False)
    frame = TIMESERIES.validate(pd.DataFrame(columns, copy=False))
    frame.attrs = {
        "shape": "timeseries",
        "source": "json",
        "request": copy.deepcopy(request),
    }
    return frame
