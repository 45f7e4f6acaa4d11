"""Health flags drawn on a chart: a shaded span per flag that concerns the chart's subjects."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ..errors import InputError
from ._axes import date_numbers

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["FLAG_COLOURS", "draw_flags", "flags_for"]

#: The colour of each kind of flag (another kind is drawn grey).
FLAG_COLOURS = {
    "site_dark": "#4d4d4d",
    "enodeb_dark": "#7a5c3e",
    "device_offline": "#b3261e",
    "usage_drop": "#1f5fa8",
    "usage_spike": "#a05a00",
    "sim_idle": "#6b4fa0",
}
_COLUMNS = ("kind", "subject", "start", "end")


def flags_for(flags: pd.DataFrame, df: pd.DataFrame) -> pd.DataFrame:
    """The flags that concern a frame's rows.

    A frame per subscriber (an ``msisdn`` column) is concerned by its subscribers' flags and
    by the dark hours of their sites and eNodeBs (when it has ``customer_site_id`` or
    ``enodeb_ip``); a frame per site by its sites' flags; a frame of the whole account by
    every flag. Only flags overlapping the
    frame's time span count.

    Raises:
        InputError: ``flags`` is not a flags frame.
    """
    if not isinstance(flags, pd.DataFrame) or not set(_COLUMNS) <= set(flags.columns):
        raise InputError(
            "flags= takes the frame er.health returns (columns kind, subject, start, end)"
        )
    subjects: set[str] = set()
    scoped = False
    for column in ("msisdn", "customer_site_id", "enodeb_ip"):
        if column in df.columns:
            scoped = True
            subjects |= {str(v) for v in df[column].dropna().unique()}
    chosen = flags if not scoped else flags[flags["subject"].astype(str).isin(subjects)]
    if "time_stamp" in df.columns and len(df):
        first, last = df["time_stamp"].min(), df["time_stamp"].max()
        chosen = chosen[(chosen["end"] > first) & (chosen["start"] <= last)]
    return chosen


def draw_flags(ax: Axes, flags: pd.DataFrame, df: pd.DataFrame) -> int:
    """Shade each flag concerning ``df`` on ``ax`` (a time axis) and label it; returns how
    many were drawn. The axis keeps its limits: a flag reaching past them is cut."""
    import matplotlib.transforms as mtransforms

    chosen = flags_for(flags, df)
    if not len(chosen):
        return 0
    left, right = ax.get_xlim()
    starts = date_numbers(pd.DatetimeIndex(chosen["start"]))
    ends = date_numbers(pd.DatetimeIndex(chosen["end"]))
    several = chosen["subject"].nunique() > 1
    band = mtransforms.blended_transform_factory(ax.transData, ax.transAxes)
    for n, (kind, subject) in enumerate(zip(chosen["kind"], chosen["subject"], strict=True)):
        colour = FLAG_COLOURS.get(str(kind), "#888888")
        a, b = max(float(starts[n]), left), min(float(ends[n]), right)
        if b <= a:
            continue
        ax.axvspan(a, b, color=colour, alpha=0.15, linewidth=0, zorder=0)
        text = f"{kind} {subject}" if several else str(kind)
        ax.text(a, 0.98, text, transform=band, fontsize=7, color=colour, va="top",
                ha="left", rotation=90, clip_on=True)  # fmt: skip
    ax.set_xlim(left, right)
    return len(chosen)
