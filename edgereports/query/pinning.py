"""Which grouped-by dimensions no filter pins: the top-talker rule.

The service answers one request with one echoed value per dimension. A dimension grouped by
but pinned by no filter is labelled with one member (the "top talker"): COUNT totals the whole
scope, MAX/MIN/AVG are that member's. A filter on a device (``msisdn`` or ``imsi``) that names
one device (one value, or several fanned out because the report groups by it) pins every
dimension of that device.

Example:
    >>> from edgereports.query import Report
    >>> r = Report(account_id="A").now().by("customer_site_id").metric("ue_connections", "COUNT")
    >>> unpinned_dimensions(r)
    ['customer_site_id']
    >>> unpinned_dimensions(r.where(customer_site_id=["MUM-1002", "MUM-1003"]))
    []
"""

from __future__ import annotations

from collections.abc import Iterable

from .report import Report

__all__ = [
    "DEVICE_DIMENSIONS",
    "DEVICE_IDS",
    "is_total",
    "top_talker_label",
    "top_talker_message",
    "unpinned_dimensions",
]

#: The filters that name one device.
DEVICE_IDS = ("msisdn", "imsi")
#: The dimensions one device pins (it has one value of each).
DEVICE_DIMENSIONS = ("msisdn", "imsi", "enodeb_ip", "ue_ip", "lr_id", "customer_site_id")


def _distinct(report: Report, dimension: str) -> set[str]:
    return {str(v).strip() for v in report.filter_values(dimension)}


def unpinned_dimensions(report: Report) -> list[str]:
    """The dimensions ``report`` groups by that no filter pins to values, in request order
    (empty when every grouped dimension is pinned, or none is grouped by)."""
    grouped = list(report.dimensions or ())
    one_device = any(
        len(_distinct(report, d)) == 1 or (d in grouped and _distinct(report, d))
        for d in DEVICE_IDS
    )
    return [
        d
        for d in grouped
        if not _distinct(report, d) and not (one_device and d in DEVICE_DIMENSIONS)
    ]


def is_total(aggregation: str | None) -> bool:
    """Whether a top talker's row under ``aggregation`` is a total (COUNT) of the whole scope."""
    return (aggregation or "").strip().upper() == "COUNT"


def top_talker_label(value: object, aggregation: str | None) -> str:
    """The label of a top talker's row: a COUNT row is a total, any other the member's own value.

    Example:
        >>> top_talker_label("MUM-1002", "COUNT")
        'total (top talker MUM-1002)'
        >>> top_talker_label("MUM-1002", "MAX")
        'MUM-1002 only (the top talker; other members not shown)'
    """
    if is_total(aggregation):
        return f"total (top talker {value})"
    return f"{value} only (the top talker; other members not shown)"


def top_talker_message(dimensions: list[str], aggregations: Iterable[str | None] = ()) -> str:
    """The warning for a report grouped by unpinned ``dimensions``: what its rows are, the fix.

    With no aggregation known, both readings are named.

    Example:
        >>> print(top_talker_message(["customer_site_id"], ["MAX"]))
        ... # doctest: +NORMALIZE_WHITESPACE
        grouped by customer_site_id, which no filter pins: not one row per customer_site_id;
        a MAX row is the value of one customer_site_id only (the top talker; other members not
        shown), not a total; pass customer_site_id values (e.g. .where(customer_site_id=[...])
        or a preset's customer_site_id=...) for one row each
        >>> print(top_talker_message(["customer_site_id"], ["COUNT"]))
        ... # doctest: +NORMALIZE_WHITESPACE
        grouped by customer_site_id, which no filter pins: not one row per customer_site_id;
        a COUNT row is the total of the whole scope labelled with one customer_site_id (the
        top talker); pass customer_site_id values (e.g. .where(customer_site_id=[...]) or a
        preset's customer_site_id=...) for one row each
    """
    names = ", ".join(dimensions)
    first = dimensions[0]
    fix = first
    if first in ("enodeb_ip", "ue_ip", "lr_id"):
        fix = "imsi"  # a device filter pins the device's other dimensions
    aggs = [str(a).strip().upper() for a in aggregations if a]
    totals = any(is_total(a) for a in aggs) or not aggs
    own = [a for a in dict.fromkeys(aggs) if not is_total(a)] or ([] if aggs else ["MAX/MIN/AVG"])
    said = []
    if totals:
        said.append(
            f"a COUNT row is the total of the whole scope labelled with one {first} "
            "(the top talker)"
        )
    if own:
        said.append(
            f"a {'/'.join(own)} row is the value of one {first} only (the top talker; other "
            "members not shown), not a total"
        )
    return (
        f"grouped by {names}, which no filter pins: not one row per {first}; "
        + "; ".join(said)
        + f"; pass {fix} values (e.g. .where({fix}=[...]) or a preset's {fix}=...) for one "
        "row each"
    )
