"""Validation of the parts of a report request: dimensions, filter clauses and metrics.

See ``request.py`` for what is accepted; every problem is a 400 naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..problems import bad

__all__ = [
    "AGGREGATIONS",
    "DIMENSIONS",
    "METRICS",
    "Filter",
    "MetricSpec",
    "body_object",
    "parse_dimensions",
    "parse_filters",
    "parse_metric",
    "type_name",
]

METRICS = (
    "time_usage_seconds",
    "uplink_bytes",
    "downlink_bytes",
    "uplink_bandwidth",
    "downlink_bandwidth",
    "ue_connections",
    "ue_online_status",
    "sim",
    "packet_latency",
    "jitter",
    "packet_loss",
)
AGGREGATIONS = ("COUNT", "AVG", "MAX", "MIN", "EXISTS")
DIMENSIONS = ("msisdn", "imsi", "customer_site_id", "enodeb_ip", "ue_ip", "lr_id")
MAX_EXPRESSIONS = 1000


@dataclass(frozen=True)
class MetricSpec:
    """One requested metric entry."""

    name: str
    aggregation: str | None
    percentile: float | None
    index: int


@dataclass(frozen=True)
class Filter:
    """An EXACT filter: the dimension and its accepted values, as sent (str or int)."""

    dimension: str
    values: tuple[str | int, ...]


def body_object(body: Any, allowed: tuple[str, ...]) -> dict[str, Any]:
    """Return a request body that is a JSON object with only ``allowed`` members.

    Raises:
        ApiProblem: 400 for another JSON type, or naming the first unknown member.
    """
    if not isinstance(body, dict):
        raise bad(f"the request body must be a JSON object, not {type_name(body)}")
    for key in body:
        if key not in allowed:
            raise bad(f"unknown field {key!r}; allowed: {', '.join(allowed)}", key)
    return body


def type_name(value: object) -> str:
    """Return how to name the JSON type of ``value`` in a message."""
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
    }.get(type(value), "null")


def parse_dimensions(value: Any, field: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    """Validate a list of distinct dimension names from ``allowed``.

    Raises:
        ApiProblem: 400 naming the entry at fault.
    """
    if not isinstance(value, list):
        raise bad(f"{field} must be an array of strings, not {type_name(value)}", field)
    out: list[str] = []
    for i, item in enumerate(value):
        where = f"{field}[{i}]"
        if not isinstance(item, str):
            raise bad(f"{where} must be a string, not {type_name(item)}", where)
        if item not in allowed:
            raise bad(f"{where}: unknown dimension {item!r}; known: {', '.join(allowed)}", where)
        if item in out:
            raise bad(f"{where}: dimension {item!r} is listed twice", where)
        out.append(item)
    return tuple(out)


def _object(value: Any, field: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise bad(f"{field} must be an object, not {type_name(value)}", field)
    for key in value:
        if key not in allowed:
            raise bad(
                f"{field}: unknown member {key!r}; allowed: {', '.join(allowed)}", f"{field}.{key}"
            )
    return value


def parse_filters(value: Any) -> tuple[str | int, tuple[Filter, ...]]:
    """Validate ``dimension_filter_clauses``; return the account id (as sent) and the filters.

    Raises:
        ApiProblem: 400 naming the clause, filter or expression at fault.
    """
    field = "dimension_filter_clauses"
    if value is None:
        raise bad(f"{field} is required: it must hold an account_id EXACT filter", field)
    if not isinstance(value, list):
        raise bad(f"{field} must be an array of clauses, not {type_name(value)}", field)
    account: list[str | int] = []
    out: list[Filter] = []
    for c, clause in enumerate(value):
        where = f"{field}[{c}]"
        clause = _object(clause, where, ("filters",))
        filters = clause.get("filters")
        if not isinstance(filters, list):
            raise bad(f"{where}.filters must be an array of filters", f"{where}.filters")
        for f, item in enumerate(filters):
            fw = f"{where}.filters[{f}]"
            item = _object(item, fw, ("dimension_name", "operator", "expressions"))
            name = item.get("dimension_name")
            if not isinstance(name, str):
                raise bad(f"{fw}.dimension_name must be a string", f"{fw}.dimension_name")
            if name != "account_id" and name not in DIMENSIONS:
                raise bad(
                    f"{fw}.dimension_name: unknown dimension {name!r}; known: account_id, "
                    + ", ".join(DIMENSIONS),
                    f"{fw}.dimension_name",
                )
            op = item.get("operator")
            if op != "EXACT":
                raise bad(f"{fw}.operator must be 'EXACT', not {op!r}", f"{fw}.operator")
            exprs = item.get("expressions")
            if not isinstance(exprs, list) or not exprs:
                raise bad(f"{fw}.expressions must be a non-empty array", f"{fw}.expressions")
            if len(exprs) > MAX_EXPRESSIONS:
                raise bad(
                    f"{fw}.expressions has {len(exprs)} values; at most {MAX_EXPRESSIONS}",
                    f"{fw}.expressions",
                )
            for e, expr in enumerate(exprs):
                if isinstance(expr, bool) or not isinstance(expr, str | int):
                    raise bad(
                        f"{fw}.expressions[{e}] must be a string or an integer, not "
                        f"{type_name(expr)}",
                        f"{fw}.expressions[{e}]",
                    )
            if name == "account_id":
                account.extend(exprs)
            else:
                out.append(Filter(name, tuple(exprs)))
    if len(account) != 1:
        raise bad(
            f"{field} must hold exactly one account_id EXACT filter with one value "
            f"(found {len(account)} values)",
            field,
        )
    return account[0], tuple(out)


def parse_metric(value: Any, i: int) -> MetricSpec:
    """Validate ``metrics[i]``.

    Raises:
        ApiProblem: 400 naming the member at fault.
    """
    where = f"metrics[{i}]"
    item = _object(value, where, ("name", "aggregation_type", "metric_filter_clauses"))
    name = item.get("name")
    if not isinstance(name, str):
        raise bad(f"{where}.name must be a string", f"{where}.name")
    if name not in METRICS:
        raise bad(
            f"{where}.name: unknown metric {name!r}; known: {', '.join(METRICS)}", f"{where}.name"
        )
    agg = item.get("aggregation_type")
    if agg is not None and (not isinstance(agg, str) or agg not in AGGREGATIONS):
        raise bad(
            f"{where}.aggregation_type must be one of {', '.join(AGGREGATIONS)}, not {agg!r}",
            f"{where}.aggregation_type",
        )
    percentile: float | None = None
    clauses = item.get("metric_filter_clauses")
    if clauses is not None:
        cw = f"{where}.metric_filter_clauses"
        if not isinstance(clauses, list):
            raise bad(f"{cw} must be an array of clauses", cw)
        for c, clause in enumerate(clauses):
            clause = _object(clause, f"{cw}[{c}]", ("filters",))
            filters = clause.get("filters")
            if not isinstance(filters, list):
                raise bad(f"{cw}[{c}].filters must be an array", f"{cw}[{c}].filters")
            for f, flt in enumerate(filters):
                fw = f"{cw}[{c}].filters[{f}]"
                flt = _object(flt, fw, ("operator", "comparison_value"))
                if flt.get("operator") != "PERCENTILE":
                    raise bad(
                        f"{fw}.operator must be 'PERCENTILE', not {flt.get('operator')!r}",
                        f"{fw}.operator",
                    )
                cv = flt.get("comparison_value")
                if isinstance(cv, bool) or not isinstance(cv, int | float):
                    raise bad(f"{fw}.comparison_value must be a number", f"{fw}.comparison_value")
                if not 0 <= cv <= 100:
                    raise bad(
                        f"{fw}.comparison_value must be between 0 and 100 (a percentile), not {cv}",
                        f"{fw}.comparison_value",
                    )
                if percentile is not None:
                    raise bad(f"{where} has more than one PERCENTILE filter", cw)
                percentile = float(cv)
    if percentile is None and agg is None:
        raise bad(
            f"{where}.aggregation_type is required (or a PERCENTILE metric filter)",
            f"{where}.aggregation_type",
        )
    if name == "sim" and (agg != "COUNT" or percentile is not None):
        raise bad(
            f"{where}: metric 'sim' is counted with aggregation_type COUNT",
            f"{where}.aggregation_type",
        )
    return MetricSpec(name, None if percentile is not None else agg, percentile, i)
