"""The public entry points: :func:`to_frame` and :func:`read_csv`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._dependencies import lazy_import
from ..errors import InputError, SchemaError
from . import csv as _csv
from ._arrowjson import read_timeseries
from ._request import request_info
from ._util import fail
from .current import read_objects
from .detect import decode, detect_shape, first_byte, parse_json
from .reporting_service import is_service_answer, service_frame, service_request
from .simcount import read_items
from .timeseries import build, read_json

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_import("pandas")

#: JSON bodies from this size on go through pyarrow.json first: below it (about 20k points)
#: orjson is as fast and the memory saving does not matter.
ARROW_MIN_BYTES = 2 * 1024 * 1024


def to_frame(
    payload: Any, request: Any = None, *, arrow_min_bytes: int | None = ARROW_MIN_BYTES
) -> pd.DataFrame:
    """Turn a report answer, JSON or CSV, into a tidy frame with the pinned schema.

    The shape is detected from the payload: ``{"result": [[...], ...]}`` is a time series, an
    object with ``start_time``/``end_time`` a current value, a list of ``{"date", "physical",
    "esim"}`` SIM counts, the flat answer of the v2 reporting service (``metric`` and a
    ``result`` list of points) a time series; bytes or text that do not start with ``{`` or
    ``[`` are read as CSV (see :func:`read_csv`). An empty answer (``[]``, ``{"result": []}``,
    ``{}`` with a request) gives the empty frame with the full schema. With the request, inner
    arrays are matched to the requested metrics by name and ``aggregation_type`` (their order is
    not guaranteed), ``percentile`` is filled for metrics asked with a PERCENTILE filter,
    ``aggregation`` for current values, and ``account_id`` from the account_id EXACT filter
    where the answer does not echo it.

    Args:
        payload: parsed JSON (dict or list), or the raw body as bytes or str.
        request: the ``Report`` (anything with ``to_request()``) or its request dict, or None.
        arrow_min_bytes: JSON bytes of this size or more are read by pyarrow first (less
            memory for large bodies), smaller ones by orjson; ``None`` never uses pyarrow.
            Both paths give the same frame, or the same error, for every input.

    Returns:
        The frame; ``df.attrs`` holds ``shape`` (``"timeseries"``, ``"current"`` or
        ``"sim_count"``), ``source`` (``"json"`` or ``"csv"``) and ``request`` (the dict or None).

    Raises:
        SchemaError: when the payload matches no known shape or has a wrong type inside; the
            message says where (e.g. ``result[1][7].time_stamp``) and why, with an excerpt.
        QueryError: when ``request`` is neither a report nor a valid request dict.
        InputError: ``arrow_min_bytes`` is not None nor a whole number >= 0.

    Example:
        >>> df = to_frame({"result": [[{"time_stamp": "2022-07-07T05:30:00+05:30",
        ...     "name": "time_usage_seconds", "value": 7, "aggregation_type": "COUNT"}]],
        ...     "account_id": "62c4"})
        >>> str(df["time_stamp"].iloc[0]), df["metric"].tolist(), df["value"].tolist()
        ('2022-07-07 00:00:00+00:00', ['time_usage_seconds'], [7.0])
    """
    if arrow_min_bytes is not None and (
        isinstance(arrow_min_bytes, bool)
        or not isinstance(arrow_min_bytes, int)
        or arrow_min_bytes < 0
    ):
        raise InputError(
            f"arrow_min_bytes must be None or a whole number >= 0, got {arrow_min_bytes!r}"
        )
    if service_request(request) is not None:  # the v2 reporting service's request
        return service_frame(payload, request)
    req = request_info(request)
    raw = req.raw if req is not None else None
    kind, obj = decode(payload)
    if kind in ("csv", "empty"):
        frame, shape = _csv.parse(obj, req)
        return _finish(frame, shape, "csv", raw)
    owned = kind == "json"
    if owned:
        big = arrow_min_bytes is not None and len(obj) >= arrow_min_bytes
        if big and first_byte(obj) == b"{":
            fast = read_timeseries(obj, req)
            if fast is not None:
                return _finish(fast, "timeseries", "json", raw)
        obj = parse_json(obj)
    if is_service_answer(obj):  # the v2 reporting service's flat answer
        return service_frame(obj, raw)
    if isinstance(obj, dict) and not obj and req is not None:
        return _finish(req.empty_frame(), req.shape, "json", raw)  # "{}": nothing to report
    shape = detect_shape(obj, req)
    if shape == "timeseries":
        frame = read_json(obj, req, owned=owned) if isinstance(obj, dict) else build([], [], req)
    elif shape == "current":
        items = [(obj, "")] if isinstance(obj, dict) else [(o, f"[{i}]") for i, o in enumerate(obj)]
        for item, where in items:
            if not isinstance(item, dict):
                fail("current value is not an object", where, item)
        frame = read_objects(items, req)
    else:
        frame = read_items([(o, f"[{i}]") for i, o in enumerate(obj)], req)
    return _finish(frame, shape, "json", raw)


def read_csv(data: Any, request: Any = None) -> pd.DataFrame:
    """Read a CSV answer (``Accept: text/csv``) into the same frame as the JSON path.

    Accepted layouts (by header names; any column order, any header case, extra columns):
    time series ``time_stamp,name,aggregation_type,value`` + echoed keys; current value
    ``start_time,end_time`` + one column per metric and per echoed key; SIM counts
    ``date,physical,esim``. Frames written back with ``DataFrame.to_csv`` read too. An empty
    body (or a header alone) with a request gives the empty frame of the request's shape.

    Args:
        data: the CSV as bytes or str, or a path (a ``pathlib.Path``, or a ``str`` naming an
            existing file).
        request: the ``Report`` or its dict, or None.

    Returns:
        The frame, with ``df.attrs["source"] == "csv"``.

    Raises:
        SchemaError: for an unknown header, a malformed row or a cell of the wrong type
            (``where`` names the data row and column, e.g. ``row 7.value``).
        QueryError: when ``request`` is neither a report nor a request dict.

    Example:
        >>> df = read_csv("time_stamp,name,aggregation_type,value\\n"
        ...               "2022-07-07T00:00:00Z,sim,COUNT,3\\n")
        >>> df["value"].tolist(), df.attrs["source"]
        ([3.0], 'csv')
    """
    req = request_info(request)
    body = _csv_bytes(data)
    frame, shape = _csv.parse(body, req)
    return _finish(frame, shape, "csv", req.raw if req is not None else None)


def _csv_bytes(data: Any) -> bytes:
    if isinstance(data, Path):
        return data.read_bytes()
    if isinstance(data, str):
        if "\n" not in data and len(data) < 4096 and os.path.isfile(data):
            return Path(data).read_bytes()
        return data.encode("utf-8", errors="surrogatepass")
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data)
    raise SchemaError(f"CSV must be bytes, str or a path, not {type(data).__name__}", where="")


def _finish(
    frame: pd.DataFrame, shape: str, source: str, request: dict[str, Any] | None
) -> pd.DataFrame:
    frame.attrs = {"shape": shape, "source": source, "request": request}
    return frame
