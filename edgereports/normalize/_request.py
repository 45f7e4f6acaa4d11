"""What the normalizer reads from a report request (SPEC 2.8): shape, dimensions, metrics."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..errors import QueryError
from ..schema import identifier, schema_for


@dataclass(frozen=True)
class MetricSpec:
    """One requested metric entry.

    Attributes:
        name: the metric name.
        aggregation: its ``aggregation_type``, or None.
        percentile: the ``comparison_value`` of its PERCENTILE filter, or None.
    """

    name: str
    aggregation: str | None
    percentile: float | None


@dataclass(frozen=True)
class RequestInfo:
    """The parts of a request the normalizer uses.

    Attributes:
        raw: a deep copy of the request dict (kept in ``df.attrs["request"]``).
        shape: the frame shape the request asks for.
        dimensions: the requested dimensions, in order.
        metrics: the requested metric entries, in order.
        account_id: the single value of the account_id EXACT filter, else None.
    """

    raw: dict[str, Any]
    shape: str
    dimensions: tuple[str, ...]
    metrics: tuple[MetricSpec, ...]
    account_id: str | None

    def match(self, name: str, aggregation: str | None) -> tuple[int | None, float | None]:
        """Match an answered ``(name, aggregation_type)`` to the requested metric entries.

        A metric asked with a PERCENTILE filter comes back without ``aggregation_type``.

        Returns:
            ``(index of the first matching entry or None, percentile or None)``; the
            percentile is None when the matching entries disagree on it (ambiguous).
        """
        named = [(i, m) for i, m in enumerate(self.metrics) if m.name == name]
        if aggregation is not None:
            agg = aggregation.upper()
            cands = [(i, m) for i, m in named if (m.aggregation or "").upper() == agg]
        else:
            cands = [(i, m) for i, m in named if m.percentile is not None]
            cands = cands or [(i, m) for i, m in named if m.aggregation is None]
            cands = cands or (named if len(named) == 1 else [])
        if not cands:
            return None, None
        percentiles = {m.percentile for _, m in cands}
        percentile = percentiles.pop() if len(percentiles) == 1 else None
        return cands[0][0], percentile

    def empty_frame(self) -> pd.DataFrame:
        """Return the empty frame of the request's shape (with its dimension columns)."""
        if self.shape == "sim_count":
            return schema_for(self.shape).empty()
        return schema_for(self.shape).empty([d for d in self.dimensions if d != "account_id"])

    def aggregation_for(self, name: str) -> tuple[int | None, str | None]:
        """Return ``(index, aggregation_type)`` of the single requested entry named ``name``."""
        named = [(i, m) for i, m in enumerate(self.metrics) if m.name == name]
        if not named:
            return None, None
        aggs = {m.aggregation for _, m in named}
        return named[0][0], (aggs.pop() if len(aggs) == 1 else None)


def request_info(request: object) -> RequestInfo | None:
    """Read a ``Report`` (anything with ``to_request()``) or a SPEC 2.8 dict.

    Args:
        request: the report, its request dict, or None.

    Returns:
        The :class:`RequestInfo`, or None for None.

    Raises:
        QueryError: when the request is not a dict or a field has the wrong type.
    """
    if request is None:
        return None
    to_request = getattr(request, "to_request", None)
    d = to_request() if callable(to_request) else request
    if not isinstance(d, Mapping):
        raise QueryError(
            f"request must be a Report or a request dict, not {type(request).__name__}",
            field="request",
        )
    raw = copy.deepcopy(dict(d))
    metrics = tuple(_metric(m, i) for i, m in enumerate(_list(raw, "metrics")))
    dimensions = tuple(_text(x, f"dimensions[{i}]") for i, x in enumerate(_list(raw, "dimensions")))
    start = str(raw.get("start_date_time", "")).strip().upper()
    end = str(raw.get("end_date_time", "")).strip().upper()
    if any(m.name == "sim" for m in metrics):
        shape = "sim_count"
    elif start == "NOW" and end == "NOW":
        shape = "current"
    else:
        shape = "timeseries"
    return RequestInfo(raw, shape, dimensions, metrics, _account_id(raw))


def _list(d: Mapping[str, Any], key: str) -> list[Any]:
    value = d.get(key)
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        raise QueryError(f"request field {key} must be a list", field=key)
    return list(value)


def _text(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise QueryError(f"request field {field} must be a string", field=field)
    return value


def _metric(m: object, i: int) -> MetricSpec:
    field = f"metrics[{i}]"
    if not isinstance(m, Mapping):
        raise QueryError(f"request field {field} must be an object", field=field)
    name = _text(m.get("name"), f"{field}.name")
    agg = m.get("aggregation_type")
    if agg is not None:
        agg = _text(agg, f"{field}.aggregation_type")
    percentile: float | None = None
    for j, clause in enumerate(_list(m, "metric_filter_clauses")):
        filters = _list(clause, "filters") if isinstance(clause, Mapping) else []
        for k, f in enumerate(filters):
            if not isinstance(f, Mapping):
                continue
            if str(f.get("operator", "")).upper() != "PERCENTILE":
                continue
            where = f"{field}.metric_filter_clauses[{j}].filters[{k}].comparison_value"
            percentile = _number(f.get("comparison_value"), where)
    return MetricSpec(name, agg, percentile)


def _number(value: object, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise QueryError(f"request field {field} must be a number", field=field)
    try:
        number = float(value)
    except (ValueError, OverflowError):
        raise QueryError(f"request field {field} must be a number", field=field) from None
    if math.isnan(number):
        raise QueryError(f"request field {field} must be a number", field=field)
    return number


def _account_id(raw: Mapping[str, Any]) -> str | None:
    values: list[str | None] = []
    for clause in _list(raw, "dimension_filter_clauses"):
        if not isinstance(clause, Mapping):
            continue
        for f in _list(clause, "filters"):
            if not isinstance(f, Mapping) or f.get("dimension_name") != "account_id":
                continue
            if str(f.get("operator", "EXACT")).upper() != "EXACT":
                continue
            expressions = f.get("expressions")
            if isinstance(expressions, list | tuple):
                for e in expressions:
                    try:
                        values.append(identifier(e))
                    except ValueError:
                        continue
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None
