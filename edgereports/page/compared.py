"""Compared figures of a report frame: like with like, over the same buckets.

A frame compared with other periods (``compare=``) or cohorts gets, per series and period, both
periods' figure over the rows whose change is computed and the change: the total for COUNT
series, the mean for the others (a mean is never set against a total), named in
``compared``.
"""

from __future__ import annotations

import pandas as pd

from ..plotting import period_title, split_compared
from ..schema import TIMESERIES, shape_of
from .summary import by_enodeb, change_text, readable

__all__ = ["comparison_table"]


def comparison_table(df: pd.DataFrame) -> pd.DataFrame:
    """This period against each other one, per series, in a few rows of text.

    One row per series (and per other period, named in ``vs`` when there are several, or per
    cohort): its dimension values (or whose value it is), metric and aggregation, then
    ``compared`` (``total`` for COUNT, ``mean`` for the others; ``value`` or ``online`` for
    current values: like with like), ``this`` and ``other`` (that figure of both periods over
    the rows whose change is computed: rows with a counterpart whose buckets hold the same share
    of their time) and ``change`` (in percent of ``other``, with the rows it rests on when that
    is not all of them; ``not like for like`` when it is none, ``no counterpart`` when no row
    met one).

    Args:
        df: a frame fetched with ``compare=`` or ``compare_by=``.

    Returns:
        A frame of strings; empty (no columns) for a frame that is not compared or has no row.

    Example:
        >>> compared = client.fetch(report, compare="previous_week")
        >>> comparison_table(compared).iloc[0].tolist()[3:]
        ['total', '30.3 hours', '30.7 hours', '-1.3%']
    """
    from .summary import summary_table

    own, compared = split_compared(df)
    if compared is None or own.empty:
        return pd.DataFrame()
    shape = shape_of(df)
    summary = summary_table(own)
    stats = ("per bucket", "points", "over the window", "devices", "value")
    keep = []
    for column in summary.columns:
        if column in stats:
            break
        keep.append(column)
    blocks = []
    for k, name in enumerate(compared.names):
        alike = df["change"].iloc[k * len(own) : (k + 1) * len(own)].notna().to_numpy()
        rows = own.assign(_then=compared.values[k], _alike=alike)
        block = summary[keep].copy()
        if len(compared.names) > 1 or compared.cohorts:
            block["vs"] = period_title(name)
        for column, values in _figures(rows, shape).items():
            block[column] = values
        blocks.append(block)
    return pd.concat(blocks, ignore_index=True)


def _figures(rows: pd.DataFrame, shape: str) -> dict[str, list[str]]:
    """Per summary row (in :func:`_series`'s or :func:`_current`'s order), the compared
    figure of both periods and the change. ``rows`` holds this period's rows with the other
    period's value (``_then``) and whether their change is computed (``_alike``)."""
    out: dict[str, list[str]] = {"compared": [], "this": [], "other": [], "change": []}
    dims = [d for d in TIMESERIES.dimensions_of(rows) if d not in ("_then", "_alike")]
    online = shape == "current" and by_enodeb(rows)
    if online:  # online devices per eNodeB
        status = rows[rows["metric"] == "ue_online_status"]
        parts = [part for _, part in status.groupby("enodeb_ip", sort=True)]
    elif shape == "current":
        parts = [rows.iloc[[i]] for i in range(len(rows))]
    else:
        keys = [*dims, "metric", "aggregation", "percentile"]
        parts = [part for _, part in rows.groupby(keys, dropna=False, sort=False)]
    for part in parts:
        count = bool((part["aggregation"].astype(object) == "COUNT").all())
        total = online or (count and shape != "current")
        metric = str(part["metric"].iloc[0])
        alike = part[part["_alike"]]
        what = "online" if online else "value" if shape == "current" else "mean"
        out["compared"].append("total" if total and not online else what)
        if alike.empty:
            none = part["_then"].isna().all()
            out["this"].append("")
            out["other"].append("")
            out["change"].append("no counterpart" if none else "not like for like")
            continue
        now, then = alike["value"].astype(float), alike["_then"].astype(float)
        mine, theirs = (now.sum(), then.sum()) if total else (now.mean(), then.mean())
        out["this"].append(readable(metric, mine))
        out["other"].append(readable(metric, theirs))
        share = f" ({len(alike)} of {len(part)})" if len(alike) < len(part) else ""
        out["change"].append(change_text(mine, theirs) + share)
    return out
