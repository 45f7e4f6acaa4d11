"""Parsing and validation of report requests (endpoint 13) into a :class:`ReportQuery`.

The shape is docs/service.md's; anything else is a 400 JSON body naming the field. Times are
ISO 8601 with a UTC offset (years 2000 to 2099), ``NOW`` on both sides (the current value) or
``LAST HOUR|DAY|WEEK|MONTH`` to ``NOW``; ranges span at most 1,100 days. All filters of all
clauses must hold (AND), the values of one filter are alternatives (OR); exactly one
``account_id`` filter with one value. Ambiguous requests get 400: a grouped dimension whose
filters allow several values; the same (metric, aggregation) twice; the same metric twice with
PERCENTILE or in a ``NOW`` request (its answer has one member per metric name).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..problems import bad
from .fields import (
    AGGREGATIONS,
    DIMENSIONS,
    METRICS,
    Filter,
    MetricSpec,
    body_object,
    parse_dimensions,
    parse_filters,
    parse_metric,
    type_name,
)

__all__ = [
    "AGGREGATIONS",
    "DIMENSIONS",
    "GRANULARITIES",
    "KEYWORDS",
    "METRICS",
    "Filter",
    "MetricSpec",
    "ReportQuery",
    "parse_report",
]

GRANULARITIES = {"HOUR": 3600, "DAY": 86400}
KEYWORDS = {"LAST HOUR": 3600, "LAST DAY": 86400, "LAST WEEK": 7 * 86400, "LAST MONTH": 30 * 86400}
MAX_RANGE_DAYS = 1100
MAX_METRICS = 20
_TOP_FIELDS = (
    "start_date_time",
    "end_date_time",
    "granularity",
    "dimensions",
    "dimension_filter_clauses",
    "metrics",
)
_TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$")


@dataclass(frozen=True)
class ReportQuery:
    """A validated report request.

    Attributes:
        mode: ``"now"`` (current value), ``"range"`` (dates or LAST ... keywords).
        start: range start in epoch seconds (for ``now``: unset until resolved, 0).
        end: range end in epoch seconds (exclusive).
        keyword: the start keyword (``NOW``, ``LAST DAY``...) or ``None`` for timestamps.
        offset: the UTC offset of ``start_date_time`` in seconds (0 for keywords).
        suffix: how that offset is written (``+05:30``, ``Z``...).
        granularity: bucket length in seconds, or ``None``.
        dimensions: grouped dimensions, in request order.
        account: the account id (as a string).
        account_echo: the account id as sent (string or number).
        filters: the other filters.
        metrics: the metric entries, in request order.
    """

    mode: str
    start: int
    end: int
    keyword: str | None
    offset: int
    suffix: str
    granularity: int | None
    dimensions: tuple[str, ...]
    account: str
    account_echo: str | int
    filters: tuple[Filter, ...]
    metrics: tuple[MetricSpec, ...]

    @property
    def sim(self) -> bool:
        """Whether this is a SIM count request."""
        return self.metrics[0].name == "sim"


def _timestamp(value: Any, field: str) -> tuple[str | None, int, int, str]:
    """Return (keyword, epoch seconds, offset seconds, suffix)."""
    if value is None:
        raise bad(f"{field} is required", field)
    if not isinstance(value, str):
        raise bad(f"{field} must be a string, not {type_name(value)}", field)
    return _timestamp_text(value, field)


@functools.lru_cache(maxsize=256)
def _timestamp_text(value: str, field: str) -> tuple[str | None, int, int, str]:
    """Parse a timestamp string (memoised: a fan-out sends the same range many times)."""
    text = value.strip()
    if text == "NOW" or text in KEYWORDS:
        return text, 0, 0, "+00:00"
    if not _TS.match(text):
        raise bad(
            f"{field} {value!r} is not an ISO 8601 timestamp with a UTC offset "
            "(e.g. 2022-07-07T09:50:00+05:30), NOW or LAST HOUR|DAY|WEEK|MONTH",
            field,
        )
    try:
        when = datetime.fromisoformat(text)
    except ValueError as exc:
        raise bad(f"{field} {value!r} is not a valid date and time: {exc}", field) from None
    offset = when.utcoffset()
    assert offset is not None  # the pattern demands an offset
    if not 2000 <= when.year <= 2099:
        raise bad(f"{field} must lie in the years 2000 to 2099", field)
    secs = int(offset.total_seconds())
    if abs(secs) >= 24 * 3600:
        raise bad(f"{field} has an invalid UTC offset", field)
    suffix = "Z" if text.endswith("Z") else text[-6:]
    epoch = when.timestamp()
    return None, int(epoch // 1), secs, suffix


def _check_metrics(metrics: tuple[MetricSpec, ...], now: bool) -> None:
    seen: dict[tuple[str, str | None], int] = {}
    names: dict[str, int] = {}
    for m in metrics:
        key = (m.name, m.aggregation if m.percentile is None else "PERCENTILE")
        if key in seen:
            raise bad(
                f"metrics[{m.index}] repeats metrics[{seen[key]}] ({m.name} "
                f"{key[1]}): the two answers could not be told apart; send one request each",
                f"metrics[{m.index}]",
            )
        seen[key] = m.index
        if now and m.name in names:
            raise bad(
                f"metrics[{m.index}] asks for {m.name} again: a NOW answer has one member per "
                "metric name; send one request per aggregation",
                f"metrics[{m.index}]",
            )
        names[m.name] = m.index
    if any(m.name == "sim" for m in metrics) and len(metrics) > 1:
        raise bad("metric 'sim' cannot be combined with other metrics", "metrics")


def _check_grouping(dimensions: tuple[str, ...], filters: tuple[Filter, ...]) -> None:
    for dim in dimensions:
        allowed: set[str] | None = None
        for f in filters:
            if f.dimension == dim:
                vals = {str(v) for v in f.values}
                allowed = vals if allowed is None else allowed & vals
        if allowed is not None and len(allowed) > 1:
            raise bad(
                f"dimension {dim!r} is grouped and its filter lists {len(allowed)} values, but "
                "an answer echoes one value per dimension: send one request per value",
                "dimensions",
            )


def parse_report(body: Any) -> ReportQuery:
    """Validate a parsed JSON body of endpoint 13.

    Args:
        body: the parsed JSON.

    Returns:
        The query.

    Raises:
        ApiProblem: 400 naming the field that is wrong.
    """
    body = body_object(body, _TOP_FIELDS)
    kw_start, start, offset, suffix = _timestamp(body.get("start_date_time"), "start_date_time")
    kw_end, end, _, _ = _timestamp(body.get("end_date_time"), "end_date_time")
    if kw_start == "NOW" or (kw_end == "NOW" and kw_start is None):
        if kw_start != "NOW" or kw_end != "NOW":
            raise bad(
                "NOW must be used on both sides (the current value), or as the end of "
                "LAST HOUR|DAY|WEEK|MONTH",
                "end_date_time" if kw_start else "start_date_time",
            )
        mode = "now"
    elif kw_start is not None:
        if kw_end not in ("NOW", kw_start):
            raise bad(f"a range that starts {kw_start} must end NOW", "end_date_time")
        mode = "range"
    else:
        if kw_end is not None:
            raise bad("a timestamp and a time keyword cannot be mixed", "end_date_time")
        if end <= start:
            raise bad("end_date_time must be after start_date_time", "end_date_time")
        if end - start > MAX_RANGE_DAYS * 86400:
            raise bad(f"the range spans more than {MAX_RANGE_DAYS} days; split it", "end_date_time")
        mode = "range"
    gran_raw = body.get("granularity")
    granularity: int | None = None
    if gran_raw is not None:
        if not isinstance(gran_raw, str) or gran_raw not in GRANULARITIES:
            raise bad(
                f"granularity must be one of {', '.join(GRANULARITIES)}, not {gran_raw!r}",
                "granularity",
            )
        if mode == "now":
            raise bad("granularity is not used with NOW (omit it)", "granularity")
        granularity = GRANULARITIES[gran_raw]
    dims_raw = body.get("dimensions")
    dimensions = () if dims_raw is None else parse_dimensions(dims_raw, "dimensions", DIMENSIONS)
    account, filters = parse_filters(body.get("dimension_filter_clauses"))
    metrics_raw = body.get("metrics")
    if not isinstance(metrics_raw, list) or not metrics_raw:
        raise bad("metrics must be a non-empty array of metric objects", "metrics")
    if len(metrics_raw) > MAX_METRICS:
        raise bad(f"metrics has {len(metrics_raw)} entries; at most {MAX_METRICS}", "metrics")
    metrics = tuple(parse_metric(m, i) for i, m in enumerate(metrics_raw))
    _check_metrics(metrics, mode == "now")
    if metrics[0].name == "sim":
        if granularity is not None:
            raise bad("SIM counts are daily: omit granularity", "granularity")
        if dimensions:
            raise bad("SIM counts are not grouped: omit dimensions", "dimensions")
    _check_grouping(dimensions, filters)
    return ReportQuery(
        mode=mode,
        start=start,
        end=end,
        keyword=kw_start,
        offset=offset,
        suffix=suffix,
        granularity=granularity,
        dimensions=dimensions,
        account=str(account),
        account_echo=account,
        filters=filters,
        metrics=metrics,
    )
