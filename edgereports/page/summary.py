"""A short summary table of a report frame, with values in readable units."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..normalize.buckets import bucket_start
from ..plotting import bare, member_text, over_what, own_rows, row_groups, unit_scale, whose
from ..query.timegrid import frame_buckets
from ..schema import CURRENT, TIMESERIES, shape_of

__all__ = ["by_enodeb", "change_text", "figures", "readable", "summary_table"]

_MANY_DEVICES = 12


def summary_table(df: pd.DataFrame) -> pd.DataFrame:
    """Summarize a frame in a few rows of text, values in readable units.

    Time series: one row per series (dimension values, or whose value it is when none, e.g. the
    account total; metric, aggregation and what it is per bucket, e.g. a time average) with
    its points, first and last bucket (the last marked "so far" when the service may still
    revise it; a PERCENTILE over a range gives the range, its last day included), and min,
    mean and max (plus the total for COUNT). Current values: one row per value (per eNodeB
    with online counts when there are many devices). SIM counts: one row per kind with min,
    mean, max and the latest day. A frame compared with other periods is summarized by its own
    rows (:func:`~.compared.comparison_table` compares them).

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
    own = own_rows(df)
    return _series(own) if shape == "timeseries" else _current(own)


def _series(df: pd.DataFrame) -> pd.DataFrame:
    dims = TIMESERIES.dimensions_of(df)
    keys = [*dims, "metric", "aggregation", "percentile"]
    rows = []
    # a v2 row covers the bucket before its stamp
    starts = bucket_start(df).to_numpy(dtype="datetime64[us]")
    values = bare(df)["value"].to_numpy(dtype=float)
    bucketed = frame_buckets(df.attrs) is not None
    provisional = df.attrs.get("provisional_from")
    for key, at in row_groups(df, keys):
        named = dict(zip(keys, key, strict=True))
        low, mean, high, total = figures(values[at])
        metric = str(named["metric"])
        agg = _text(named["aggregation"])
        pct = _text(named["percentile"])
        how = f"p{float(pct):g}" if pct else agg
        stamps = starts[at]
        early, late = pd.Timestamp(stamps.min(), tz="UTC"), pd.Timestamp(stamps.max(), tz="UTC")
        first, last = f"{early:%Y-%m-%d %H:%M}Z", f"{late:%Y-%m-%d %H:%M}Z"
        if not bucketed:  # one value over the whole range (PERCENTILE): the range
            first, last = _request_range(df)
        elif provisional and late >= pd.Timestamp(provisional):
            last += " (so far)"
        rows.append(
            {
                **{d: _member(df, d, named[d], named["aggregation"]) for d in dims},
                **_whose(df, dims),
                "metric": str(named["metric"]),
                "agg": how,
                "per bucket": over_what(agg) if not pct else f"{how} of the 5-minute samples",
                "points": len(at),
                "from": first,
                "to": last,
                "min": readable(metric, low),
                "mean": readable(metric, mean),
                "max": readable(metric, high),
                "total": readable(metric, total) if agg == "COUNT" else "",
            }
        )
    return pd.DataFrame(rows)


def figures(values: npt.NDArray[np.float64]) -> tuple[float, float, float, float]:
    """The minimum, mean, maximum and total of ``values``, NaN left out, as pandas' ``min``,
    ``mean``, ``max`` and ``sum`` give them (NaN for all but the total when none is left).

    Example:
        >>> figures(np.array([1.0, float("nan"), 5.0]))
        (1.0, 3.0, 5.0, 6.0)
    """
    seen = ~np.isnan(values)
    count = int(seen.sum())
    total = float(np.where(seen, values, 0.0).sum())
    if not count:
        return math.nan, math.nan, math.nan, total
    kept = values[seen]
    return float(kept.min()), total / count, float(kept.max()), total


def by_enodeb(df: pd.DataFrame) -> bool:
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
    if by_enodeb(df) and "enodeb_ip" in dims:
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
        text = readable(metric, value) if value == value else ""
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


def readable(metric: str, value: float) -> str:
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
