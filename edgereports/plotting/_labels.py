"""What a chart's labels say a number is: top-talker totals, counted things, bucket names.

- A row grouped by a dimension no filter pins (``df.attrs["top_talker"]``) is a total labelled
  with one member: it is named ``total (top talker X)``, never as one member of a breakdown.
- ``ue_connections`` COUNT totals five-minute samples (one per connected device and slot);
  its MAX and AVG count devices connected at once: the axis says which.
- DAY and HOUR buckets are UTC days and hours: in a zone that is not UTC a bucket straddles
  two local days, so the axis says ``UTC day``.
"""

from __future__ import annotations

from datetime import timedelta, tzinfo
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["bucket_word", "counted", "member_text", "shown_columns", "top_talkers"]


def top_talkers(df: pd.DataFrame) -> set[str]:
    """The dimensions of ``df`` that no filter pinned (``df.attrs["top_talker"]``)."""
    return {str(d) for d in df.attrs.get("top_talker") or ()}


def member_text(df: pd.DataFrame, dimension: str, value: Any) -> str:
    """A dimension value as a label: ``total (top talker X)`` for an unpinned dimension.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame()
        >>> df.attrs["top_talker"] = ["customer_site_id"]
        >>> member_text(df, "customer_site_id", "MUM-1002")
        'total (top talker MUM-1002)'
    """
    text = "—" if value is None or value != value else str(value)
    return f"total (top talker {text})" if dimension in top_talkers(df) else text


def shown_columns(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` for a table: a top talker's column says its rows are totals.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"customer_site_id": ["MUM-1002"], "value": [24.0]})
        >>> df.attrs["top_talker"] = ["customer_site_id"]
        >>> list(shown_columns(df).columns)
        ['customer_site_id (top talker; the value is the total)', 'value']
    """
    unpinned = [d for d in top_talkers(df) if d in df.columns]
    if not unpinned:
        return df
    return df.rename(columns={d: f"{d} (top talker; the value is the total)" for d in unpinned})


def counted(metric: str, aggregation: str | None, title: str) -> str:
    """An axis label that names what is counted (``ue_connections``: samples or devices).

    Example:
        >>> counted("ue_connections", "COUNT", "UE connections")
        'UE connections (5-minute samples)'
    """
    if metric != "ue_connections":
        return title
    if (aggregation or "").upper() == "COUNT":
        return f"{title} (5-minute samples)"
    return f"{title} (devices at once)"


def bucket_word(grain: str | None, zone: tzinfo, zone_text: str) -> str:
    """The axis label of buckets: ``Day (UTC)``, or ``UTC day (times in ...)`` elsewhere.

    Buckets are UTC days and hours: in another zone a day bucket straddles two local days.

    Example:
        >>> from datetime import timezone, timedelta
        >>> bucket_word("DAY", timezone(timedelta(hours=5, minutes=30)), "UTC+05:30")
        'UTC day (times in UTC+05:30)'
    """
    word = "hour" if (grain or "").upper() == "HOUR" else "day"
    offset = zone.utcoffset(None)
    if offset is None or offset != timedelta(0):
        return f"UTC {word} (times in {zone_text})"
    return f"{word.capitalize()} ({zone_text})"
