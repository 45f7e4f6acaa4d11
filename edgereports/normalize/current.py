"""Current-value answers: one object per answer, one row per metric member.

Which members are metrics: with a request, the requested metric names (and any other known
metric name); without one, the known metric names, and any other member whose value looks like
a measure (a number, a boolean, ``YES``/``NO`` or numeric text). ``start_time``, ``end_time``
and ``account_id`` are the fixed columns; every other member is an echoed dimension.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._dependencies import lazy_import
from ..schema import CURRENT, FLOAT
from ._request import RequestInfo
from ._util import (
    KNOWN_DIMENSIONS,
    KNOWN_METRICS,
    Where,
    check_member_name,
    fail,
    ident,
    join,
    looks_like_value,
    parse_stamps,
    strings,
    timestamp_column,
    value_of,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy_import("numpy")
    pd = lazy_import("pandas")

_TIMES = ("start_time", "end_time")


def read_objects(
    objects: Sequence[tuple[Mapping[Any, Any], str]], req: RequestInfo | None
) -> pd.DataFrame:
    """Read ``(object, path)`` pairs of current values into the current frame (attrs not set).

    The path prefixes error locations (``""`` for a single JSON object, ``"[2]"`` in a list,
    ``"line 2"`` in a CSV).

    Raises:
        SchemaError: for a missing time, a non-text key, or a value that is a list or object.
    """
    first: dict[str, object] = {}
    for obj, prefix in objects:
        for key in _TIMES:
            if key not in obj:
                fail(f"current value has no {key}", prefix, obj)
        for key, value in obj.items():
            check_member_name(key, prefix)
            if key in _TIMES or key == "account_id":
                continue
            if first.get(key) is None:
                first[key] = value
    kinds = {key: _is_metric(key, value, req) for key, value in first.items()}
    metric_names = [k for k, is_metric in kinds.items() if is_metric]
    dims = dimensions_for([k for k, is_metric in kinds.items() if not is_metric], req)
    fixed = set(CURRENT.fixed)
    for d in dims:
        if d in fixed:
            fail("echoed key clashes with a frame column", d)
    order = {name: _rank(name, k, req) for k, name in enumerate(metric_names)}
    metric_names.sort(key=order.__getitem__)

    rows: dict[str, list[Any]] = {c: [] for c in ("account_id", *dims, "metric", "aggregation")}
    times: dict[str, list[Any]] = {"start_time": [], "end_time": []}
    where: list[str] = []
    values: list[float] = []
    texts: list[str | None] = []
    request_account = req.account_id if req is not None else None
    for obj, prefix in objects:
        account = ident(obj.get("account_id"), join(prefix, "account_id"))
        echoed = [ident(obj.get(d), join(prefix, d)) for d in dims]
        for name in metric_names:
            if name not in obj:
                continue
            try:
                number, text = value_of(obj[name])
            except ValueError as exc:
                fail(str(exc), join(prefix, name), obj[name])
            values.append(number)
            texts.append(text)
            rows["account_id"].append(account if account is not None else request_account)
            for d, v in zip(dims, echoed, strict=True):
                rows[d].append(v)
            rows["metric"].append(name)
            rows["aggregation"].append(req.aggregation_for(name)[1] if req is not None else None)
            times["start_time"].append(obj["start_time"])
            times["end_time"].append(obj["end_time"])
            where.append(prefix)
    if not values:
        return CURRENT.empty(dims)
    columns: dict[str, Any] = {}
    for key in _TIMES:
        micros = parse_stamps(times[key], _where(where, key), key)
        columns[key] = timestamp_column(micros)
    for col in ("account_id", *dims, "metric", "aggregation"):
        columns[col] = strings(rows[col])
    columns["value"] = np.array(values, dtype=FLOAT)
    columns["value_text"] = strings(texts)
    return pd.DataFrame(columns)


def dimensions_for(keys: Sequence[str], req: RequestInfo | None) -> list[str]:
    """The dimension columns of a current frame whose members are ``keys`` (a CSV header):
    the request's dimensions, then the other keys that are not metrics, in order."""
    dims = list(req.dimensions) if req is not None else []
    for key in keys:
        if key in _TIMES or key == "account_id" or key in dims:
            continue
        if not _is_metric(key, None, req):
            dims.append(key)
    return [d for d in dims if d != "account_id"]


def _is_metric(key: str, value: object, req: RequestInfo | None) -> bool:
    if req is not None and req.metrics:
        if any(m.name == key for m in req.metrics):
            return True
        return key in KNOWN_METRICS
    if key in KNOWN_METRICS:
        return True
    if key in KNOWN_DIMENSIONS:
        return False
    return looks_like_value(value)


def _rank(name: str, appearance: int, req: RequestInfo | None) -> tuple[int, int]:
    index = req.aggregation_for(name)[0] if req is not None else None
    return (0, index) if index is not None else (1, appearance)


def _where(prefixes: list[str], key: str) -> Where:
    return lambda i: join(prefixes[i], key)
