"""A short summary table of a report frame, with values in readable units.

A frame compared with other periods (``compare=``) gets, per series and period, both periods'
figure over the same buckets and the change: like with like, the total for COUNT series and the
mean for the others, named in ``compared``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pandas as pd

from ..normalize.buckets import bucket_start
from ..plotting import member_text, over_what, period_title, split_compared, unit_scale, whose
from ..query.timegrid import frame_buckets
from ..schema import CURRENT, TIMESERIES, shape_of

__all__ = ["change_text", "summary_table"]

_MANY_DEVICES = 12


def summary_table(df: pd.DataFrame) -> pd.DataFrame:
    """Summarize a frame in a few rows of text, values in readable units.

    Time series: one row per series (dimension values, or whose value it is when none, e.g. the
    account total; metric, aggregation and what it is per bucket, e.g. a time average) with
    its points, first and last bucket (the last marked "so far" when the service may still
    revise it; a PERCENTILE over a range gives the range, its last day included), and min,
    mean and max (plus the total for COUNT); with a comparison, per other period (named in
    ``vs`` when there are several) ``compared`` (``total`` for COUNT, ``mean`` for the
    others: like with like), ``this`` and ``other`` (that figure of each period over the rows
    whose change is computed: rows with a counterpart, whose buckets hold the same share of
    their time) and ``change`` (in percent of ``other``, with the rows it rests on when not all
    of them). Current values: one row per value (per eNodeB with online counts when there are
    many devices). SIM counts: one row per kind with min, mean, max and the latest day.

    Args:
        df: a normalized frame.

    Returns:
        A frame of strings (empty with a ``note`` column when ``df`` has no rows).

    Raises:
        ValueError: the frame's shape cannot be told.
    """
    if df.empty:
        return pd.DataFrame({"note": ["no rows"]})
    shape = shape_of(df)
    if shape == "sim_count":
        return _sims(df)
    own, compared = split_compared(df)
    summary = _series(own) if shape == "timeseries" else _current(own)
    if compared is None:
        return summary
    blocks = []
    for k, name in enumerate(compared.names):
        rows = own.assign(_then=compared.values[k], _alike=_alike(df, k, len(own)))
        block = summary.copy()
        if len(compared.names) > 1 or compared.cohorts:
            block["vs"] = period_title(name)
        figures = _figures(rows, shape)
        for column in ("compared", "this", "other", "change"):
            block[column] = figures[column]
        blocks.append(block)
    return pd.concat(blocks, ignore_index=True)


def _alike(df: pd.DataFrame, k: int, n: int) -> Any:
    """Which rows of block ``k`` of a compared frame have a change (like for like)."""
    return df["change"].iloc[k * n : (k + 1) * n].notna().to_numpy()


def _series(df: pd.DataFrame) -> pd.DataFrame:
    dims = TIMESERIES.dimensions_of(df)
    keys = [*dims, "metric", "aggregation", "percentile"]
    rows = []
    starts = bucket_start(df)  # a v2 row covers the bucket before its stamp
    bucketed = frame_buckets(df.attrs) is not None
    provisional = df.attrs.get("provisional_from")
    for key, part in df.groupby(keys, dropna=False, sort=False):
        named = dict(zip(keys, key, strict=True))
        values = part["value"].astype(float)
        metric = str(named["metric"])
        agg = _text(named["aggregation"])
        pct = _text(named["percentile"])
        how = f"p{float(pct):g}" if pct else agg
        stamps = starts.loc[part.index]
        first, last = f"{stamps.min():%Y-%m-%d %H:%M}Z", f"{stamps.max():%Y-%m-%d %H:%M}Z"
        if not bucketed:  # one value over the whole range (PERCENTILE): the range
            first, last = _request_range(df)
        elif provisional and stamps.max() >= pd.Timestamp(provisional):
            last += " (so far)"
        rows.append(
            {
                **{d: _member(df, d, named[d], named["aggregation"]) for d in dims},
                **_whose(df, dims),
                "metric": str(named["metric"]),
                "agg": how,
                "per bucket": over_what(agg) if not pct else f"{how} of the 5-minute samples",
                "points": len(part),
                "from": first,
                "to": last,
                "min": _readable(metric, values.min()),
                "mean": _readable(metric, values.mean()),
                "max": _readable(metric, values.max()),
                "total": _readable(metric, values.sum()) if agg == "COUNT" else "",
            }
        )
    return pd.DataFrame(rows)


def _figures(rows: pd.DataFrame, shape: str) -> dict[str, list[str]]:
    """Per summary row (in :func:`_series`'s or :func:`_current`'s order), the compared
    figure of both periods and the change. ``rows`` holds this period's rows with the other
    period's value (``_then``) and whether their change is computed (``_alike``)."""
    out: dict[str, list[str]] = {"compared": [], "this": [], "other": [], "change": []}
    dims = [d for d in TIMESERIES.dimensions_of(rows) if d not in ("_then", "_alike")]
    online = shape == "current" and _by_enodeb(rows)
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
        out["this"].append(_readable(metric, mine))
        out["other"].append(_readable(metric, theirs))
        share = f" ({len(alike)} of {len(part)})" if len(alike) < len(part) else ""
        out["change"].append(change_text(mine, theirs) + share)
    return out


def _by_enodeb(df: pd.DataFrame) -> bool:
    """The current values are summed up per eNodeB (many devices' online status)."""
    status = df[df["metric"] == "ue_online_status"]
    return len(status) > _MANY_DEVICES and "enodeb_ip" in CURRENT.dimensions_of(df)


def change_text(value: float, previous: float) -> str:
    """The change from ``previous`` to ``value`` in percent, signed (``+4.2%``).

    Example:
        >>> change_text(110.0, 100.0), change_text(0.0, 0.0), change_text(5.0, 0.0)
        ('+10.0%', '0.0%', 'new')
    """
    if previous == 0:
        return "0.0%" if value == 0 else "new"
    pct = (value - previous) / abs(previous) * 100.0
    return f"{pct:+.1f}%" if round(pct, 1) != 0 else "0.0%"


def _request_range(df: pd.DataFrame) -> tuple[str, str]:
    """The request's range in UTC, its end excluded (``to`` is the instant it stops)."""
    request = df.attrs.get("request") or {}
    shown = []
    for key in ("start_date_time", "end_date_time"):
        try:
            moment = pd.Timestamp(datetime.fromisoformat(str(request.get(key))))
        except ValueError:
            shown.append(str(request.get(key, "")))
            continue
        shown.append(f"{moment.tz_convert('UTC'):%Y-%m-%d %H:%M}Z")
    return shown[0], f"before {shown[1]}"


def _current(df: pd.DataFrame) -> pd.DataFrame:
    dims = [d for d in CURRENT.dimensions_of(df) if df[d].notna().any()]
    status = df[df["metric"] == "ue_online_status"]
    if _by_enodeb(df) and "enodeb_ip" in dims:
        grouped = status.groupby("enodeb_ip", sort=True)["value"]
        out = pd.DataFrame(
            {
                "devices": grouped.size(),
                "online": grouped.apply(lambda v: int((v == 1.0).sum())),
                "offline": grouped.apply(lambda v: int((v == 0.0).sum())),
            }
        ).reset_index()
        return out.astype(str)
    rows = []
    for row in df.itertuples(index=False):
        metric = str(row.metric)
        value = float(str(row.value))
        text = _readable(metric, value) if value == value else ""
        rows.append(
            {
                **{d: _member(df, d, getattr(row, d), row.aggregation) for d in dims},
                **_whose(df, dims),
                "metric": metric,
                "agg": _text(row.aggregation),
                "over the window": over_what(_text(row.aggregation)),
                "value": text or _text(row.value_text),
                "window": f"{row.start_time:%Y-%m-%d %H:%M}–{row.end_time:%H:%M}Z",
            }
        )
    return pd.DataFrame(rows)


def _sims(df: pd.DataFrame) -> pd.DataFrame:
    days = df.groupby("date", sort=True)[["physical", "esim"]].sum(min_count=1)
    days["total"] = days["physical"] + days["esim"]
    latest = days.index.max()
    rows = [
        {
            "kind": kind,
            "days": len(days),
            "from": f"{days.index.min():%Y-%m-%d}",
            "to": f"{latest:%Y-%m-%d}",
            "min": _text(days[kind].min()),
            "mean": f"{float(days[kind].mean()):.1f}",
            "max": _text(days[kind].max()),
            "latest": _text(days.loc[latest, kind]),
        }
        for kind in ("physical", "esim", "total")
    ]
    return pd.DataFrame(rows)


def _readable(metric: str, value: float) -> str:
    """One value in the unit that suits it (each value its own unit)."""
    return unit_scale(metric, [float(value)]).text(float(value))


def _member(df: pd.DataFrame, dimension: str, value: object, aggregation: object) -> str:
    """A dimension value; a top talker's as what its row is (a total, or its own value)."""
    return member_text(df, dimension, value, aggregation) if _text(value) else ""


def _whose(df: pd.DataFrame, dims: Sequence[str]) -> dict[str, str]:
    """``{"whose": ...}`` when no dimension names a row's member (the account total, a device)."""
    who = None if dims else whose(df)
    return {"whose": who} if who else {}


def _text(value: object) -> str:
    return "" if value is None or value is pd.NA or value != value else str(value)
