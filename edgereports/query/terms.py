"""The terms of a report request: filters, clauses, metrics and metric filters.

Each term is a frozen dataclass with ``to_dict()`` (the JSON object the service documents,
keys in their documented order) and a ``from_dict()`` reader that validates and names the
offending field.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import QueryError
from .versions import check_aggregation, check_foreign, vocabulary
from .vocabulary import METRIC_FILTER_OPERATORS, OPERATORS, check_name, check_token

__all__ = [
    "Clause",
    "Expression",
    "Filter",
    "Metric",
    "MetricFilter",
    "expect_keys",
    "expect_list",
    "expressions",
]

Expression = str | int


def expect_list(value: object, field: str) -> list[Any]:
    """Return ``value`` if it is a list, else raise a :class:`QueryError` naming ``field``."""
    if not isinstance(value, list):
        raise QueryError(f"{field} must be a list, got {type(value).__name__}", field=field)
    return value


def expect_keys(
    value: object, field: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()
) -> Mapping[str, Any]:
    """Return ``value`` if it is an object with only ``allowed`` keys and every ``required`` one.

    Raises:
        QueryError: naming the field and the allowed keys.
    """
    if not isinstance(value, Mapping):
        raise QueryError(f"{field} must be an object, got {type(value).__name__}", field=field)
    unknown = [k for k in value if k not in allowed]
    if unknown:
        raise QueryError(
            f"{field} has unknown key {unknown[0]!r}; allowed: {', '.join(allowed)}", field=field
        )
    for key in required:
        if key not in value:
            raise QueryError(f"{field}.{key} is missing", field=f"{field}.{key}")
    return value


def expressions(values: object, field: str) -> tuple[Expression, ...]:
    """Validate filter expressions: a string, an integer, or a non-empty list of them.

    Strings and integers keep their type (an msisdn sent as a number stays a number).
    """
    if isinstance(values, (str, int)) and not isinstance(values, bool):
        items: list[object] = [values]
    elif isinstance(values, Iterable) and not isinstance(values, (bytes, str, Mapping)):
        items = list(values)
    else:
        raise QueryError(
            f"{field} must be a string, an integer or a list of them, got {values!r}", field=field
        )
    if not items:
        raise QueryError(f"{field} is empty; give at least one value to match", field=field)
    out: list[Expression] = []
    for i, item in enumerate(items):
        if isinstance(item, bool) or not isinstance(item, (str, int)):
            raise QueryError(
                f"{field}[{i}] must be a string or an integer, got {item!r}", field=f"{field}[{i}]"
            )
        if isinstance(item, str) and not item.strip():
            raise QueryError(f"{field}[{i}] is an empty string", field=f"{field}[{i}]")
        out.append(item)
    return tuple(out)


@dataclass(frozen=True)
class Filter:
    """A dimension filter: ``dimension_name`` ``operator`` one of ``expressions``."""

    dimension_name: str
    expressions: tuple[Expression, ...]
    operator: str = "EXACT"

    @classmethod
    def make(
        cls,
        dimension: object,
        values: object,
        operator: object = "EXACT",
        *,
        field: str,
        strict: bool = False,
        version: str = "v1",
    ) -> Filter:
        """Validate and build a filter; ``field`` names it in messages."""
        known = vocabulary(version).filter_dimensions
        where = f"{field}.dimension_name"
        if isinstance(dimension, str):
            check_foreign(dimension, where, known, version)
        name = check_name(dimension, where, known, strict=strict)
        op = check_token(operator, f"{field}.operator", OPERATORS, strict=strict)
        return cls(name, expressions(values, f"{field}.expressions"), op)

    @classmethod
    def from_dict(
        cls, value: object, field: str, *, strict: bool = False, version: str = "v1"
    ) -> Filter:
        """Read a filter object."""
        keys = ("dimension_name", "operator", "expressions")
        d = expect_keys(value, field, keys, required=keys)
        values = expect_list(d["expressions"], f"{field}.expressions")
        return cls.make(
            d["dimension_name"], values, d["operator"], field=field, strict=strict, version=version
        )

    def to_dict(self) -> dict[str, Any]:
        """The filter object."""
        return {
            "dimension_name": self.dimension_name,
            "operator": self.operator,
            "expressions": list(self.expressions),
        }


@dataclass(frozen=True)
class Clause:
    """A dimension filter clause: a group of filters."""

    filters: tuple[Filter, ...] = ()

    @classmethod
    def from_dict(
        cls, value: object, field: str, *, strict: bool = False, version: str = "v1"
    ) -> Clause:
        """Read a clause object."""
        d = expect_keys(value, field, ("filters",), required=("filters",))
        items = expect_list(d["filters"], f"{field}.filters")
        return cls(
            tuple(
                Filter.from_dict(f, f"{field}.filters[{i}]", strict=strict, version=version)
                for i, f in enumerate(items)
            )
        )

    def to_dict(self) -> dict[str, Any]:
        """The clause object."""
        return {"filters": [f.to_dict() for f in self.filters]}


@dataclass(frozen=True)
class MetricFilter:
    """A metric filter, e.g. ``PERCENTILE`` with ``comparison_value`` 95."""

    operator: str
    comparison_value: int | float

    @classmethod
    def from_dict(cls, value: object, field: str, *, strict: bool = False) -> MetricFilter:
        """Read and validate a metric filter object."""
        keys = ("operator", "comparison_value")
        d = expect_keys(value, field, keys, required=keys)
        op = check_token(d["operator"], f"{field}.operator", METRIC_FILTER_OPERATORS, strict=strict)
        where = f"{field}.comparison_value"
        number = d["comparison_value"]
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            raise QueryError(f"{where} must be a number, got {number!r}", field=where)
        if not math.isfinite(number):
            raise QueryError(f"{where} must be a finite number, got {number!r}", field=where)
        if op == "PERCENTILE" and not 0 <= number <= 100:
            raise QueryError(
                f"{where} must be a percentile between 0 and 100, got {number!r}", field=where
            )
        return cls(op, number)

    def to_dict(self) -> dict[str, Any]:
        """The metric filter object."""
        return {"operator": self.operator, "comparison_value": self.comparison_value}


@dataclass(frozen=True)
class Metric:
    """A requested metric: a name with an aggregation type and/or metric filter clauses.

    Example:
        >>> Metric.from_dict({"name": "uplink_bytes", "aggregation_type": "COUNT"}, "m").name
        'uplink_bytes'
    """

    name: str
    aggregation_type: str | None = None
    filter_clauses: tuple[tuple[MetricFilter, ...], ...] | None = None

    @property
    def percentile(self) -> int | float | None:
        """The comparison value of the first PERCENTILE filter, if any."""
        for clause in self.filter_clauses or ():
            for f in clause:
                if f.operator == "PERCENTILE":
                    return f.comparison_value
        return None

    @classmethod
    def from_dict(
        cls, value: object, field: str, *, strict: bool = False, version: str = "v1"
    ) -> Metric:
        """Read and validate a metric object (or of v2, with ``version="v2"``)."""
        d = expect_keys(
            value, field, ("name", "aggregation_type", "metric_filter_clauses"), required=("name",)
        )
        words = vocabulary(version)
        if isinstance(d["name"], str):
            check_foreign(d["name"], f"{field}.name", words.metrics, version)
        name = check_name(d["name"], f"{field}.name", words.metrics, strict=strict)
        aggregation = d.get("aggregation_type")
        if aggregation is not None or "aggregation_type" in d:
            aggregation = check_token(
                aggregation, f"{field}.aggregation_type", words.aggregations, strict=strict
            )
        if version == "v2" and "metric_filter_clauses" in d:
            raise QueryError(
                f"{field}.metric_filter_clauses: v2 documents no metric filters (PERCENTILE is "
                "v1 only); use an aggregation_type",
                field=f"{field}.metric_filter_clauses",
            )
        if aggregation is not None:
            check_aggregation(name, aggregation, field, version)
        clauses: tuple[tuple[MetricFilter, ...], ...] | None = None
        if "metric_filter_clauses" in d:
            where = f"{field}.metric_filter_clauses"
            clauses = tuple(
                tuple(
                    MetricFilter.from_dict(f, f"{where}[{i}].filters[{j}]", strict=strict)
                    for j, f in enumerate(
                        expect_list(
                            expect_keys(c, f"{where}[{i}]", ("filters",), ("filters",))["filters"],
                            f"{where}[{i}].filters",
                        )
                    )
                )
                for i, c in enumerate(expect_list(d["metric_filter_clauses"], where))
            )
        if aggregation is None and not any(clauses or ()):
            raise QueryError(
                f"{field} ({name!r}) needs an aggregation_type (e.g. COUNT, AVG, MAX) or a "
                "metric filter such as PERCENTILE",
                field=f"{field}.aggregation_type",
            )
        return cls(name, aggregation, clauses)

    def to_dict(self) -> dict[str, Any]:
        """The metric object."""
        out: dict[str, Any] = {"name": self.name}
        if self.aggregation_type is not None:
            out["aggregation_type"] = self.aggregation_type
        if self.filter_clauses is not None:
            out["metric_filter_clauses"] = [
                {"filters": [f.to_dict() for f in clause]} for clause in self.filter_clauses
            ]
        return out
