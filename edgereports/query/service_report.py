"""``ServiceReport``: the request of the v2 reporting service (see docs/service.md).

The body differs from a report's: a ``step`` (a duration such as ``5m`` or ``1h30m``), a flat
``dimension_filters`` list (no clauses) and one ``metrics`` object (not a list). Times are
ISO-8601 timestamps with an offset, or ``LAST MINUTE|HOUR|DAY|WEEK|MONTH`` paired with ``NOW``.

Example:
    >>> report = (ServiceReport().last("HOUR").step("5m")
    ...           .where(device="PHI-1").metric("ap_count", "COUNT"))
    >>> report.to_request()
    {'start_date_time': 'LAST HOUR', 'end_date_time': 'NOW', 'step': '5m', \
'dimension_filters': [{'dimension_name': 'device', 'operator': 'EXACT', 'expressions': \
['PHI-1']}], 'metrics': {'name': 'ap_count', 'aggregation_type': 'COUNT'}}
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ..errors import QueryError
from .terms import Expression, Filter, expect_keys, expect_list, expressions
from .times import NOW, parse_timestamp
from .vocabulary import OPERATORS, check_known, check_name, check_token

__all__ = [
    "SERVICE_AGGREGATIONS",
    "SERVICE_DIMENSIONS",
    "SERVICE_KEYWORDS",
    "SERVICE_METRICS",
    "SERVICE_REQUEST_KEYS",
    "ServiceReport",
    "parse_step",
]

#: The access-point metrics of the reporting service.
SERVICE_METRICS = ("ap_count", "ap_status", "ue_count", "ue_status")
#: The aggregations it computes over a step's 5-minute slots.
SERVICE_AGGREGATIONS = ("COUNT", "MAX", "MIN", "AVG", "EXISTS")
#: Its dimensions (``device`` is an Edge location such as ``PHI-1``).
SERVICE_DIMENSIONS = ("device", "enb_ip", "seid", "ue_ip")
#: Its time keywords and their lengths (a month is 30 days).
SERVICE_KEYWORDS: dict[str, timedelta] = {
    "LAST MINUTE": timedelta(minutes=1),
    "LAST HOUR": timedelta(hours=1),
    "LAST DAY": timedelta(days=1),
    "LAST WEEK": timedelta(weeks=1),
    "LAST MONTH": timedelta(days=30),
}
#: The keys of the request body, in the order ``to_request`` writes them.
SERVICE_REQUEST_KEYS = ("start_date_time", "end_date_time", "step", "dimension_filters", "metrics")

_UNITS = {
    "s": timedelta(seconds=1),
    "m": timedelta(minutes=1),
    "h": timedelta(hours=1),
    "d": timedelta(days=1),
    "w": timedelta(weeks=1),
    "y": timedelta(days=365),
}
_STEP = re.compile(r"(?:\d+[smhdwy])+")
_PIECE = re.compile(r"(\d+)([smhdwy])")


def parse_step(text: object, field: str = "step") -> timedelta:
    """Read a step: whole numbers with units ``s m h d w y`` (d = 24h, w = 7d, y = 365d).

    Raises:
        QueryError: the text does not parse, or is zero.

    Example:
        >>> parse_step("1h30m")
        datetime.timedelta(seconds=5400)
    """
    if not isinstance(text, str) or not _STEP.fullmatch(text):
        raise QueryError(
            f"{field} {text!r} is not a duration: write whole numbers with units s, m, h, d, "
            "w, y, e.g. '5m', '1h30m' or '1d'",
            field=field,
        )
    try:
        total = sum((int(n) * _UNITS[unit] for n, unit in _PIECE.findall(text)), timedelta())
    except OverflowError:
        raise QueryError(
            f"{field} {text!r} is longer than any range can be; give a duration within the "
            "range, e.g. '5m', '1h30m' or '1d'",
            field=field,
        ) from None
    if total <= timedelta(0):
        raise QueryError(f"{field} {text!r} is zero; give a positive duration", field=field)
    return total


def _time(value: object, field: str) -> str:
    """A reporting-service time: a keyword (normalised) or a timestamp with an offset, verbatim."""
    if not isinstance(value, str) or not value.strip():
        raise QueryError(
            f"{field} must be a timestamp or a time keyword, got {value!r}", field=field
        )
    text = value.strip()
    word = " ".join(text.split()).upper()
    if word == NOW or word in SERVICE_KEYWORDS:
        return word
    if text[:1].isalpha():
        known = (NOW, *SERVICE_KEYWORDS)
        check_known(word, field, known, strict=True, what="time keyword", shown=text)
    parse_timestamp(text, field)
    return value


@dataclass(frozen=True)
class ServiceReport:
    """An immutable request of the reporting service; every method returns a new one.

    Args:
        strict: unknown metric, dimension and aggregation names are errors, not warnings.

    Example:
        >>> ServiceReport().between("2024-08-13T20:00:00Z", "2024-08-13T21:00:00Z").step("1h30m")
        Traceback (most recent call last):
        ...
        edgereports.errors.QueryError: step '1h30m' (1:30:00) is longer than the range \
(1:00:00); it must lie within it
    """

    start: str | None = None
    end: str | None = None
    interval: str | None = None
    filters: tuple[Filter, ...] | None = None
    measure: tuple[str, str] | None = None
    strict: bool = False

    # -- building -------------------------------------------------------------------------

    def between(self, start: str, end: str) -> ServiceReport:
        """Set the range: ISO-8601 timestamps with offsets, or ``LAST HOUR`` and ``NOW``."""
        report = dataclasses.replace(
            self, start=_time(start, "start_date_time"), end=_time(end, "end_date_time")
        )
        report._check_range()
        return report

    def last(self, period: str) -> ServiceReport:
        """A trailing range: ``last("HOUR")`` is ``LAST HOUR`` to ``NOW``."""
        return self.between(f"LAST {period.strip().upper()}", NOW)

    def step(self, duration: str) -> ServiceReport:
        """Set the step: a duration such as ``5m``, ``1h30m`` or ``1d``, within the range."""
        parse_step(duration)
        report = dataclasses.replace(self, interval=duration)
        report._check_range()
        return report

    def where(self, **filters: Expression | Iterable[Expression]) -> ServiceReport:
        """Add EXACT filters; a dimension filtered again is replaced."""
        kept = list(self.filters or ())
        for dimension, values in filters.items():
            field = f"dimension_filters[{len(kept)}]"
            new = self._filter(dimension, values, "EXACT", field)
            same = [i for i, f in enumerate(kept) if f.dimension_name == dimension]
            if same:
                kept[same[0]] = new
            else:
                kept.append(new)
        return dataclasses.replace(self, filters=tuple(kept))

    def metric(self, name: str, aggregation: str) -> ServiceReport:
        """Set the one metric and its aggregation type (a second call replaces it)."""
        checked = check_name(name, "metrics.name", SERVICE_METRICS, strict=self.strict)
        # the reporting service's aggregations are a closed set: another one is answered 400
        agg = check_token(
            aggregation, "metrics.aggregation_type", SERVICE_AGGREGATIONS, strict=True
        )
        return dataclasses.replace(self, measure=(checked, agg))

    # -- reading --------------------------------------------------------------------------

    def span(self) -> timedelta | None:
        """The length of the range (a keyword's own length), or None when it is not set."""
        if self.start is None or self.end is None:
            return None
        if self.start in SERVICE_KEYWORDS:
            return SERVICE_KEYWORDS[self.start]
        start = parse_timestamp(self.start, "start_date_time")
        return parse_timestamp(self.end, "end_date_time") - start

    def validate(self) -> ServiceReport:
        """Check the whole request; returns ``self``.

        Raises:
            QueryError: no range, no step, no metric, or a step longer than the range.
        """
        if self.start is None or self.end is None:
            raise QueryError(
                "no time range; call .between(start, end) or .last('HOUR')",
                field="start_date_time",
            )
        if self.interval is None:
            raise QueryError("step is missing; e.g. .step('5m')", field="step")
        if self.measure is None:
            raise QueryError(
                "metrics is missing; e.g. .metric('ap_count', 'COUNT')", field="metrics"
            )
        self._check_range()
        return self

    def to_request(self) -> dict[str, Any]:
        """The JSON-ready request body, keys in the documented order.

        Raises:
            QueryError: see :meth:`validate`.
        """
        self.validate()
        assert self.start and self.end and self.interval and self.measure
        out: dict[str, Any] = {
            "start_date_time": self.start,
            "end_date_time": self.end,
            "step": self.interval,
        }
        if self.filters is not None:
            out["dimension_filters"] = [f.to_dict() for f in self.filters]
        out["metrics"] = {"name": self.measure[0], "aggregation_type": self.measure[1]}
        return out

    @classmethod
    def from_request(cls, request: Mapping[str, Any], *, strict: bool = False) -> ServiceReport:
        """Read a request body back (``from_request(d).to_request() == d``).

        Raises:
            QueryError: the dict is not a valid request; the message names the field.
        """
        d = expect_keys(request, "request", SERVICE_REQUEST_KEYS, required=SERVICE_REQUEST_KEYS[:3])
        report = cls(strict=strict).between(d["start_date_time"], d["end_date_time"])
        report = report.step(d["step"])
        if "dimension_filters" in d:
            items = expect_list(d["dimension_filters"], "dimension_filters")
            keys = ("dimension_name", "operator", "expressions")
            filters = []
            for i, item in enumerate(items):
                f = expect_keys(item, f"dimension_filters[{i}]", keys, required=keys)
                values = expect_list(f["expressions"], f"dimension_filters[{i}].expressions")
                filters.append(
                    report._filter(
                        f["dimension_name"], values, f["operator"], f"dimension_filters[{i}]"
                    )
                )
            report = dataclasses.replace(report, filters=tuple(filters))
        if "metrics" in d:
            pair = ("name", "aggregation_type")
            m = expect_keys(d["metrics"], "metrics", pair, required=pair)
            report = report.metric(m["name"], m["aggregation_type"])
        return report

    # -- internals ------------------------------------------------------------------------

    def _filter(self, dimension: object, values: object, operator: object, field: str) -> Filter:
        name = check_name(
            dimension, f"{field}.dimension_name", SERVICE_DIMENSIONS, strict=self.strict
        )
        op = check_token(operator, f"{field}.operator", OPERATORS, strict=self.strict)
        return Filter(name, expressions(values, f"{field}.expressions"), op)

    def _check_range(self) -> None:
        if self.start is None or self.end is None:
            return
        start_kw, end_kw = self.start in SERVICE_KEYWORDS, self.end == NOW
        if self.start == NOW or (start_kw and not end_kw):
            raise QueryError(
                f"start_date_time {self.start!r} and end_date_time {self.end!r}: a range is "
                "two timestamps, or a keyword such as 'LAST HOUR' with end 'NOW'",
                field="end_date_time" if start_kw else "start_date_time",
            )
        if end_kw and not start_kw:
            raise QueryError(
                f"end_date_time 'NOW' needs a start keyword such as 'LAST HOUR', got "
                f"{self.start!r}",
                field="start_date_time",
            )
        span = self.span()
        assert span is not None
        if span <= timedelta(0):
            raise QueryError(
                f"start_date_time {self.start!r} must be before end_date_time {self.end!r}",
                field="start_date_time",
            )
        if self.interval is not None and parse_step(self.interval) > span:
            raise QueryError(
                f"step {self.interval!r} ({parse_step(self.interval)}) is longer than the "
                f"range ({span}); it must lie within it",
                field="step",
            )
