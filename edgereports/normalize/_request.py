"""What the normalizer reads from a report request: shape, dimensions, metrics."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._dependencies import lazy_import
from ..errors import QueryError
from ..query import Metric, Report
from ..query.terms import Expression
from ..schema import identifier, schema_for

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_import("pandas")


@dataclass(frozen=True)
class MetricSpec:
    """One requested metric entry (``percentile``: the value of its PERCENTILE filter)."""

    name: str
    aggregation: str | None
    percentile: float | None


@dataclass(frozen=True)
class RequestInfo:
    """The parts of a request the normalizer uses.

    Attributes:
        raw: a deep copy of the request dict (kept in ``df.attrs["request"]``).
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


def request_info(request: object, *, raw: bool = True) -> RequestInfo | None:
    """Read a ``Report`` (anything with ``to_request()``) or a request dict.

    The dict is read by :meth:`edgereports.query.Report.from_request` (quietly: it warns of
    no unknown name), so the normalizer takes exactly the requests the client sends. With
    ``raw`` False, ``raw`` stays empty and a ``Report`` is read as it is (the client's parts of
    a pull, whose frame takes the report's own request, need no copy of each window's). None
    gives None.

    Raises:
        QueryError: when the request is not a dict or not a valid request (duplicate
            dimensions, a dimension named like a frame column, a field of the wrong type...);
            the message names the field.
    """
    if request is None:
        return None
    d: object = None
    if isinstance(request, Report) and not raw:
        report = request
    else:
        to_request = getattr(request, "to_request", None)
        d = to_request() if callable(to_request) else request
        if not isinstance(d, Mapping):
            raise QueryError(
                f"request must be a Report or a request dict, not {type(request).__name__}",
                field="request",
            )
        report = request if isinstance(request, Report) else _read(d)
    metrics = tuple(MetricSpec(m.name, m.aggregation_type, _percentile(m)) for m in report.metrics)
    if any(m.name == "sim" for m in metrics):
        shape = "sim_count"
    elif report.is_now:
        shape = "current"
    else:
        shape = "timeseries"
    return RequestInfo(
        copy.deepcopy(dict(d)) if isinstance(d, Mapping) else {},
        shape,
        report.dimensions or (),
        metrics,
        _account_id(report.filter_values("account_id")),
    )


def _percentile(metric: Metric) -> float | None:
    value = metric.percentile
    return None if value is None else float(value)


def _account_id(expressions: tuple[Expression, ...]) -> str | None:
    """The account of the EXACT account_id filters when they name exactly one."""
    distinct = {identifier(e) for e in expressions}
    return distinct.pop() if len(distinct) == 1 else None


def _read(d: Mapping[str, Any]) -> Report:
    """Read a request dict quietly as v1, else as v2 (a dict does not say its version)."""
    try:
        return Report.from_request(d, warn=False)
    except QueryError as v1_error:
        try:
            return Report.from_request(d, warn=False, api_version="v2")
        except QueryError:
            raise v1_error from None
