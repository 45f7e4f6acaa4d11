"""What a chart's labels say a number is: top talkers, counted things, bucket names."""

from __future__ import annotations

from datetime import timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from ..query.pinning import top_talker_label

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "bucket_word",
    "counted",
    "member_text",
    "over_what",
    "shown_columns",
    "top_talkers",
    "whose",
]

#: What an aggregation does over the 5-minute samples of a bucket or window.
_OVER = {
    "AVG": "time average",
    "MAX": "peak 5 minutes",
    "MIN": "lowest 5 minutes",
    "COUNT": "total",
    "EXISTS": "any activity",
}
#: The filters that name one member, and what the member is called.
_MEMBERS = {
    "msisdn": "device",
    "imsi": "device",
    "customer_site_id": "site",
    "device": "Edge Point",  # v2: the customer site
    "customer_name": "customer",
    "enb_ip": "eNodeB",
    "enodeb_ip": "eNodeB",
}

_FRAME: Any = object()  # member_text's default: the frame's one aggregation


def _missing(value: Any) -> bool:
    """None, NaN or pandas' NA (whose truth value raises)."""
    try:
        return value is None or bool(value != value)
    except TypeError:
        return True


def top_talkers(df: pd.DataFrame) -> set[str]:
    """The dimensions of ``df`` that no filter pinned (``df.attrs["top_talker"]``)."""
    return {str(d) for d in df.attrs.get("top_talker") or ()}


def _frame_aggregation(df: pd.DataFrame) -> str | None:
    """The one aggregation of ``df``'s rows (or its request's metrics), else None."""
    if "aggregation" in df.columns:
        aggs = {str(a).upper() for a in df["aggregation"].dropna()}
    else:
        metrics = (df.attrs.get("request") or {}).get("metrics") or []
        aggs = {str(m.get("aggregation_type")).upper() for m in metrics if isinstance(m, dict)}
    return aggs.pop() if len(aggs) == 1 else None


def member_text(df: pd.DataFrame, dimension: str, value: Any, aggregation: Any = _FRAME) -> str:
    """A dimension value as a label; an unpinned dimension's by the top-talker rule.

    A COUNT row of an unpinned dimension is ``total (top talker X)``; a MAX, MIN or AVG row is
    ``X only (the top talker; other members not shown)``. ``aggregation`` is the row's; by
    default the frame's one aggregation (with several, the label names the top talker only).

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"aggregation": ["COUNT"]})
        >>> df.attrs["top_talker"] = ["customer_site_id"]
        >>> member_text(df, "customer_site_id", "MUM-1002")
        'total (top talker MUM-1002)'
        >>> member_text(df, "customer_site_id", "MUM-1002", "MAX")
        'MUM-1002 only (the top talker; other members not shown)'
    """
    text = "—" if _missing(value) else str(value)
    if dimension not in top_talkers(df):
        return text
    agg = _frame_aggregation(df) if aggregation is _FRAME else aggregation
    if _missing(agg) or not str(agg):
        return f"{text} (the top talker)"
    return top_talker_label(text, str(agg))


def shown_columns(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` for a table: a top talker's cells say whether the row is a total or its own value.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"customer_site_id": ["MUM-1002", "MUM-1002"],
        ...                    "aggregation": ["COUNT", "MAX"], "value": [24.0, 12.0]})
        >>> df.attrs["top_talker"] = ["customer_site_id"]
        >>> shown_columns(df)["customer_site_id (top talker)"].tolist()
        ['total (top talker MUM-1002)', 'MUM-1002 only (the top talker; other members not shown)']
    """
    unpinned = [d for d in top_talkers(df) if d in df.columns]
    if not unpinned:
        return df
    aggs = list(df["aggregation"]) if "aggregation" in df.columns else [_FRAME] * len(df)
    out = df.copy()
    for d in unpinned:
        out[d] = [member_text(df, d, v, a) for v, a in zip(df[d], aggs, strict=True)]
    return out.rename(columns={d: f"{d} (top talker)" for d in unpinned})


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


def over_what(aggregation: Any) -> str:
    """What an aggregation gives over the 5-minute samples of a bucket: ``AVG`` a time average.

    Example:
        >>> over_what("AVG"), over_what("MAX")
        ('time average', 'peak 5 minutes')
    """
    agg = "" if _missing(aggregation) else str(aggregation).upper()
    return _OVER.get(agg, agg.lower())


def whose(df: pd.DataFrame) -> str | None:
    """Whose value a frame's rows are when no dimension names it: the account's, or one member's.

    The service sums the devices in scope in every 5-minute sample: without a dimension or a
    filter on one member, a value is the account total (all its devices), not a per-device one.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame()
        >>> df.attrs["request"] = {"dimension_filter_clauses": [{"filters": [
        ...     {"dimension_name": "account_id", "expressions": ["A"]}]}]}
        >>> whose(df)
        'account total (all devices)'
    """
    request = df.attrs.get("request") or {}
    if not request:
        return None
    named: list[str] = []
    filters = [
        f for c in request.get("dimension_filter_clauses") or () for f in c.get("filters") or ()
    ]
    filters += list(request.get("dimension_filters") or ())  # the v2 reporting service's
    for f in filters:
        if isinstance(f, dict):
            name = str(f.get("dimension_name"))
            values = list(f.get("expressions") or ())
            if name in _MEMBERS:
                one = len(values) == 1
                named.append(f"{_MEMBERS[name]} {values[0]}" if one else f"{len(values)} {name}s")
    if named:
        return ", ".join(named)
    return "account total (all devices)"
