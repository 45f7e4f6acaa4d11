"""Where a chart puts a row in time, and how it shows partial and provisional buckets."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta, tzinfo
from typing import TYPE_CHECKING

import pandas as pd

from ..normalize.buckets import bucket_start
from ..query.timegrid import frame_buckets
from ._axes import date_numbers

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["mark_buckets", "placed", "time_note"]

_PARTIAL_HATCH = "////"
_PROVISIONAL_HATCH = "...."


def placed(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with each row's ``time_stamp`` at the start of the bucket it covers (a v2 row is
    stamped at the end of its piece), as a v1 row is, so v1 and v2 charts of the same days
    agree; other frames as they are."""
    rule = frame_buckets(df.attrs)
    if rule is None or not rule[1] or "time_stamp" not in df.columns:
        return df
    out = df.assign(time_stamp=bucket_start(df).to_numpy())
    out.attrs = df.attrs
    return out


def _partials(df: pd.DataFrame) -> list[tuple[datetime, float]]:
    out = []
    for item in df.attrs.get("partial_buckets") or []:
        if isinstance(item, Mapping) and df.attrs.get("partial") != "drop":
            out.append((datetime.fromisoformat(str(item["start"])), float(item["share"])))
    return out


def _provisional(df: pd.DataFrame) -> datetime | None:
    text = df.attrs.get("provisional_from")
    return datetime.fromisoformat(text) if isinstance(text, str) else None


def _last_bucket(df: pd.DataFrame) -> pd.Timestamp:
    """The start of the last bucket a chart draws: the newest ``time_stamp``, or for SIM
    counts the newest ``date`` (a UTC calendar day)."""
    if "time_stamp" in df.columns:
        return pd.Timestamp(df["time_stamp"].max())
    return pd.Timestamp(df["date"].max()).tz_localize("UTC")


def mark_buckets(ax: Axes, df: pd.DataFrame, width_days: float) -> None:
    """Hatch the partial buckets (``df.attrs["partial_buckets"]``) and the provisional ones
    (from ``df.attrs["provisional_from"]``) on ``ax`` (x in matplotlib days)."""
    rule = frame_buckets(df.attrs)
    if rule is None or df.empty:
        return
    last = _last_bucket(df)
    spans = [(start, _PARTIAL_HATCH) for start, _ in _partials(df)]
    first = _provisional(df)
    if first is not None and pd.Timestamp(first) <= last:
        count = int((last - pd.Timestamp(first)) // pd.Timedelta(rule[0])) + 1
        spans += [(first + rule[0] * i, _PROVISIONAL_HATCH) for i in range(count)]
    for start, hatch in spans:
        x0 = float(date_numbers(pd.Series([pd.Timestamp(start)]))[0])
        ax.axvspan(x0, x0 + width_days, facecolor="none", edgecolor="0.55", hatch=hatch,
                   linewidth=0, zorder=0)  # fmt: skip


def time_note(df: pd.DataFrame, zone: tzinfo) -> str:
    """The note under a chart's title about partial and provisional buckets, or ``""``.

    Example:
        >>> df = pd.DataFrame({"time_stamp": pd.to_datetime(["2022-07-08"], utc=True)})
        >>> df.attrs = {"request": {"start_date_time": "2022-07-01T00:00:00+05:30",
        ...             "end_date_time": "2022-07-09T00:00:00+05:30", "granularity": "DAY"},
        ...             "partial_buckets": [{"start": "2022-06-30T00:00:00+00:00", "share": 0.23}],
        ...             "provisional_from": "2022-07-08T00:00:00+00:00"}
        >>> from datetime import timezone
        >>> time_note(df, timezone.utc)
        'hatched: partial bucket 30 Jun (23% in range); dotted: 8 Jul so far (provisional)'
    """
    rule = frame_buckets(df.attrs)
    if rule is None:
        return ""
    hourly = rule[0] < timedelta(days=1)
    parts = []
    partial = [f"{_when(s, zone, hourly)} ({share:.0%} in range)" for s, share in _partials(df)]
    if partial:
        noun = "bucket" if len(partial) == 1 else "buckets"
        parts.append(f"hatched: partial {noun} {', '.join(partial)}")
    first = _provisional(df)
    if first is not None and not df.empty and pd.Timestamp(first) <= _last_bucket(df):
        parts.append(f"dotted: {_when(first, zone, hourly)} so far (provisional)")
    return "; ".join(parts)


def _when(moment: datetime, zone: tzinfo, hourly: bool) -> str:
    local = moment.astimezone(zone)
    return f"{local.day} {local:%b %H:%M}" if hourly else f"{local.day} {local:%b}"
