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

from .report import Report

__all__ = ["DEVICE_DIMENSIONS", "DEVICE_IDS", "top_talker_message", "unpinned_dimensions"]

#: The filters that name one device.
DEVICE_IDS = ("msisdn", "imsi")
#: The dimensions one device pins (it has one value of each).
DEVICE_DIMENSIONS = ("msisdn", "imsi", "enodeb_ip", "ue_ip", "lr_id", "customer_site_id")


def _distinct(report: Report, dimension: str) -> set[str]:
    return {str(v).strip() for v in report.filter_values(dimension)}


def unpinned_dimensions(report: Report) -> list[str]:
    """The dimensions ``report`` groups by that no filter pins to values, in request order.

    Args:
        report: a report.

    Returns:
        The unpinned dimensions; empty when every grouped dimension is pinned (or none is
        grouped by).
    """
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


def top_talker_message(dimensions: list[str]) -> str:
    """The warning for a report grouped by unpinned ``dimensions``: what it means, the fix.

    Example:
        >>> print(top_talker_message(["customer_site_id"]))  # doctest: +NORMALIZE_WHITESPACE
        grouped by customer_site_id, which no filter pins: each row is a total labelled with
        one customer_site_id (the top talker), not one row per customer_site_id; pass
        customer_site_id values (e.g. .where(customer_site_id=[...]) or a preset's
        customer_site_id=...) for one row each
    """
    names = ", ".join(dimensions)
    first = dimensions[0]
    fix = first
    if first in ("enodeb_ip", "ue_ip", "lr_id"):
        fix = "imsi"  # a device filter pins the device's other dimensions
    return (
        f"grouped by {names}, which no filter pins: each row is a total labelled with one "
        f"{first} (the top talker), not one row per {first}; pass {fix} values (e.g. "
        f".where({fix}=[...]) or a preset's {fix}=...) for one row each"
    )
