"""The ledger's columns and what it is per: names only (no pandas or numpy here)."""

from __future__ import annotations

__all__ = ["BY", "COLUMNS", "GRANULARITIES", "SERIES", "aggregation", "place_columns"]

#: What a ledger is per: a customer site, an eNodeB or a subscriber (its column's name).
BY = {"customer_site_id": "customer_site_id", "enodeb": "enodeb_ip", "msisdn": "msisdn"}
#: The buckets a ledger counts in (None: the whole range, one row per subject).
GRANULARITIES = ("HOUR", "DAY", "MONTH", None)
#: The counted columns, in order (after the bucket, the account and the subject's columns).
COLUMNS = (
    "hours",
    "available_hours",
    "unavailable_hours",
    "excluded_hours",
    "maintenance_hours",
    "inactive_hours",
    "unknown_hours",
    "availability_pct",
    "basis",
)
#: The metrics of the long form, in order (hours counted, and the percentage).
SERIES = COLUMNS[:-1]


def place_columns(by: str) -> list[str]:
    """The columns that name a row's subject and where it is, for ``by``.

    Example:
        >>> place_columns("enodeb")
        ['enodeb_ip', 'customer_site_id']
    """
    if by == "msisdn":
        return ["msisdn", "customer_site_id", "enodeb_ip"]
    if by == "enodeb":
        return ["enodeb_ip", "customer_site_id"]
    return ["customer_site_id"]


def aggregation(column: str) -> str:
    """How the long form names a counted column's aggregation: the hours are COUNTs (they
    add up), the percentage an AVG (the share of the decided hours that were available).

    Example:
        >>> aggregation("unknown_hours"), aggregation("availability_pct")
        ('COUNT', 'AVG')
    """
    return "AVG" if column == "availability_pct" else "COUNT"
