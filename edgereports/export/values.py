"""The values a report fans out over: what a report's definition says, by dimension."""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from typing import Any

from .reports import ReportJob

__all__ = ["Values", "fanout_values", "read_values", "split_definition"]

#: Fan-out values by dimension.
Values = dict[str, tuple[str, ...]]


def read_values(raw: object) -> Values | None:
    """Fan-out values as a saved state or a table's description records them (JSON:
    ``{dimension: [value, ...]}``), or None when ``raw`` is not such a record."""
    if not isinstance(raw, dict):
        return None
    return {str(d): tuple(str(v) for v in vals) for d, vals in raw.items()}


def split_definition(definition: Mapping[str, Any]) -> tuple[dict[str, Any], Values]:
    """Split a report's definition (its request without range) into identity and values.

    The values are the EXACT filter values of the dimensions the report groups by (not
    ``account_id``); the identity is the definition without those filters.

    Example:
        >>> identity, values = split_definition({"dimensions": ["msisdn"],
        ...     "dimension_filter_clauses": [{"filters": [{"dimension_name": "msisdn",
        ...     "operator": "EXACT", "expressions": ["91", "92"]}]}]})
        >>> identity
        {'dimensions': ['msisdn'], 'dimension_filter_clauses': [], 'fanned_out': ['msisdn']}
        >>> values
        {'msisdn': ('91', '92')}
    """
    identity = copy.deepcopy(dict(definition))
    grouped = {d for d in identity.get("dimensions") or () if d != "account_id"}
    values: dict[str, dict[str, None]] = {}  # ordered sets
    clauses = identity.get("dimension_filter_clauses")
    if isinstance(clauses, list):
        kept_clauses = []
        for clause in clauses:
            filters = clause.get("filters") if isinstance(clause, dict) else None
            if not isinstance(filters, list):
                kept_clauses.append(clause)
                continue
            kept = []
            for f in filters:
                name = f.get("dimension_name") if isinstance(f, dict) else None
                if name in grouped and f.get("operator", "EXACT") == "EXACT":
                    bucket = values.setdefault(str(name), {})
                    bucket.update(dict.fromkeys(str(v).strip() for v in f.get("expressions") or ()))
                else:
                    kept.append(f)
            if kept:
                kept_clauses.append({**clause, "filters": kept})
        identity["dimension_filter_clauses"] = kept_clauses
    if values:  # all the values of a dimension and a list of them are different reports
        identity["fanned_out"] = sorted(values)
    return identity, {k: tuple(v) for k, v in values.items()}


@functools.lru_cache(maxsize=64)
def fanout_values(report: ReportJob) -> Values:
    """The values ``report`` fans out over, by dimension (empty when it fans out over none)."""
    return split_definition(report.definition())[1]
