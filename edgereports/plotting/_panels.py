"""Charts of SIM counts and current values: stacked daily bars, value tiles, device status."""

from __future__ import annotations

import ipaddress
import math
from datetime import tzinfo
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .._dependencies import lazy_import
from ..schema import CURRENT
from ._axes import (
    date_numbers,
    day_axis,
    grouped_barh,
    legend_outside,
    new_axes,
    no_data,
    value_axis,
)
from ._common import (
    TzLike,
    chart_frame,
    check_shape,
    dimension_columns,
    dimension_title,
    first_upper,
    frame_metrics,
    metric_title,
    metrics_title,
    request_dimensions,
    request_range_text,
    resolve_tz,
    unit_scale,
    zone_name,
)
from ._compare import own_rows
from ._labels import member_text, over_what, top_talkers, whose
from ._time import mark_buckets, time_note

if TYPE_CHECKING:
    from matplotlib.axes import Axes

mcolors = lazy_import("matplotlib.colors")
patches = lazy_import("matplotlib.patches")

__all__ = ["plot_current", "plot_device_status", "plot_sim_count"]

_ONLINE, _OFFLINE, _UNKNOWN = "#1a9850", "#c8c8c8", "#fdae61"


def plot_sim_count(
    df: pd.DataFrame, *, ax: Axes | None = None, tz: TzLike = None, title: str | None = None
) -> Axes:
    """Plot active SIMs per day as stacked bars: physical below, eSIM on top.

    A day the range covers only in part is hatched, and the days the service may still revise
    are dotted, with a note under the title (as on time-series charts).

    Args:
        df: a ``sim_count`` frame (several accounts are summed per day).
        ax: the axes to draw on; a new figure when omitted.
        tz: the zone of the range in the default title (the dates themselves are calendar days).
        title: the title.

    Returns:
        The matplotlib ``Axes``.

    Raises:
        InputError: not a ``sim_count`` frame.
    """
    df = own_rows(chart_frame(df, "plot_sim_count"))  # a compared frame: this period's rows
    check_shape(df, "sim_count", "plot_sim_count")
    zone = resolve_tz(tz, df)
    span = request_range_text(df.attrs.get("request"), zone)
    heading = f"Active SIMs per day: physical and eSIM\n{span}"
    ax = new_axes(ax, (10.0, 4.8))
    if df.empty:
        return no_data(ax, title or heading.rstrip())
    days = df.groupby("date", sort=True)[["physical", "esim"]].sum(min_count=1)
    x = date_numbers(days.index) + 0.5  # the middle of each calendar day
    physical = days["physical"].astype("float64").fillna(0).to_numpy()
    esim = days["esim"].astype("float64").fillna(0).to_numpy()
    width = 0.8 if len(x) < 2 else 0.8 * float(np.min(np.diff(x)))
    ax.bar(x, physical, width=width, label="Physical", color="tab:blue")
    ax.bar(x, esim, width=width, bottom=physical, label="eSIM", color="tab:orange")
    day_axis(ax, x, [d.to_pydatetime() for d in pd.DatetimeIndex(days.index)], "Date")
    if len(x) == 1:
        ax.set_xlim(x[0] - 2, x[0] + 2)
    value_axis(ax, unit_scale("sim", []), "Active SIMs")
    ax.grid(axis="y", alpha=0.3)
    mark_buckets(ax, df, 1.0)
    note = time_note(df, zone)
    ax.set_title(title or (f"{heading.rstrip()}\n{note}" if note else heading.rstrip()))
    legend_outside(ax)
    return ax


def _window_text(df: pd.DataFrame, zone: tzinfo) -> str:
    start = pd.Timestamp(df["start_time"].min()).tz_convert(zone)
    end = pd.Timestamp(df["end_time"].max()).tz_convert(zone)
    return f"{start.day} {start:%b %Y %H:%M}–{end:%H:%M} ({zone_name(zone)})"


def plot_current(
    df: pd.DataFrame, *, ax: Axes | None = None, tz: TzLike = None, title: str | None = None
) -> Axes:
    """Plot current values: a compact panel of tiles, or bars per dimension value.

    A frame with one row per metric (e.g. ``realtime_bandwidth``) becomes tiles with the value
    in a readable unit; a frame with dimension values (e.g. ``concurrent_online_ues`` per site)
    becomes horizontal bars. ``ue_online_status`` frames are better shown by
    :func:`plot_device_status`.

    Args:
        df: a ``current`` frame.
        ax: the axes to draw on; a new figure when omitted.
        tz: the zone of the window in the default title (default UTC for ``NOW`` reports).
        title: the title.

    Returns:
        The matplotlib ``Axes``.

    Raises:
        InputError: not a ``current`` frame.
    """
    df = own_rows(chart_frame(df, "plot_current"))  # a compared frame: this period's rows
    check_shape(df, "current", "plot_current")
    zone = resolve_tz(tz, df)
    dims = [d for d in dimension_columns(df, CURRENT.fixed) if df[d].notna().any()]
    asked = [d for d in request_dimensions(df) if d in dims]
    if asked and not df.duplicated(["metric", *asked]).any():
        dims = asked  # a dimension the service echoed unasked only when it is needed
    metrics = list(dict.fromkeys(m for m, _, _ in frame_metrics(df)))
    named = metrics_title(metrics) or "Current values"
    when = _window_text(df, zone) if not df.empty else ""
    by = f" per {dimension_title(dims[0])}" if dims else ""
    if dims and dims[0] in top_talkers(df):
        by = f" ({_top_talker_words(df, dimension_title(dims[0]))})"
    heading = f"{named} now{by}\n{when}".rstrip()
    if not dims:
        ax = new_axes(ax, (max(4.0, 3.2 * max(1, len(df))), 2.6))
        if df.empty:
            return no_data(ax, title or heading)
        _tiles(ax, df)
        ax.set_title(title or heading)
        return ax
    cats = [
        " / ".join(member_text(df, d, v, r[-1]) for d, v in zip(dims, r[:-1], strict=True))
        for r in df[[*dims, "aggregation"]].itertuples(index=False)
    ]
    frame = df.assign(_cat=cats)
    categories = sorted(dict.fromkeys(cats))
    ax = new_axes(ax, (10.0, max(3.0, 1.2 + 0.4 * len(categories))))
    groups: dict[str, list[float]] = {}
    for metric, part in frame.groupby("metric", sort=False):
        values = part.groupby("_cat")["value"].last()
        groups[metric_title(str(metric))] = [float(values.get(c, math.nan)) for c in categories]
    scale = unit_scale(metrics[0], frame["value"].to_numpy(dtype=float))
    label = scale.label(named if len(metrics) == 1 else "Value")
    if metrics == ["ue_connections"]:  # one 5-minute sample per device: devices online
        label = "UE connections (devices online in the 5 minutes)"
    grouped_barh(ax, categories, groups, scale, label)
    ax.set_ylabel(first_upper(" / ".join(dimension_title(d) for d in dims)))
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(title or heading)
    return ax


def _tiles(ax: Axes, df: pd.DataFrame) -> None:
    """Draw one tile per row: the metric's name and its value in a readable unit."""
    ax.set_axis_off()
    n = len(df)
    for i, row in enumerate(df.itertuples(index=False)):
        metric = str(row.metric)
        left = i / n
        ax.add_patch(
            patches.FancyBboxPatch((left + 0.02, 0.05), 1 / n - 0.04, 0.85,
                                   boxstyle="round,pad=0.01", transform=ax.transAxes,
                                   facecolor="#f2f5fa", edgecolor="#c5cfdd")
        )  # fmt: skip
        value = float(str(row.value))
        text = str(row.value_text) if row.value_text is not pd.NA and math.isnan(value) else (
            unit_scale(metric, [value]).text(value))  # fmt: skip
        how = [w for w in (whose(df), over_what(row.aggregation)) if w]
        if str(row.aggregation) == "EXISTS":
            how = how[:1]
        agg = f"\n{', '.join(how)}" if how else ""
        ax.text(left + 0.5 / n, 0.68, metric_title(metric) + agg, ha="center", va="center",
                transform=ax.transAxes, fontsize="medium", color="#444444")  # fmt: skip
        ax.text(left + 0.5 / n, 0.35, text, ha="center", va="center", transform=ax.transAxes,
                fontsize="xx-large", fontweight="bold")  # fmt: skip


def _sort_key(text: str) -> tuple[int, int, int, str]:
    """Sort IP addresses numerically and before other text."""
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return (1, 0, 0, text)
    return (0, ip.version, int(ip), "")


def plot_device_status(
    df: pd.DataFrame, *, ax: Axes | None = None, tz: TzLike = None, title: str | None = None
) -> Axes:
    """Plot device status as a heat strip: one row per eNodeB, one cell per device.

    Online devices are green, offline grey, and a status that is neither (text the service
    sent) orange. The title counts the devices online.

    Args:
        df: a ``current`` frame of ``ue_online_status`` (the ``device_status`` preset).
        ax: the axes to draw on; a new figure when omitted.
        tz: the zone of the window in the default title (default UTC for ``NOW`` reports).
        title: the title.

    Returns:
        The matplotlib ``Axes``.

    Raises:
        InputError: not a ``current`` frame.
    """
    df = own_rows(chart_frame(df, "plot_device_status"))  # a compared frame: this period's rows
    check_shape(df, "current", "plot_device_status")
    zone = resolve_tz(tz, df)
    rows = df[df["metric"] == "ue_online_status"]
    dims = [d for d in dimension_columns(df, CURRENT.fixed) if rows[d].notna().any()]
    online = int((rows["value"] == 1.0).sum())
    when = _window_text(rows, zone) if not rows.empty else ""
    heading = f"Device status now: {online} of {len(rows)} online\n{when}".rstrip()
    group = "enodeb_ip" if "enodeb_ip" in dims else (dims[0] if dims else None)
    members = [d for d in dims if d != group]
    keys = rows[group].fillna("—").astype(str) if group else pd.Series("all", index=rows.index)
    names = sorted(set(keys), key=_sort_key)
    ax = new_axes(ax, (10.0, min(10.0, max(2.6, 1.3 + 0.32 * len(names)))))
    if rows.empty:
        return no_data(ax, title or heading)
    codes = np.where(rows["value"] == 1.0, 2.0, np.where(rows["value"] == 0.0, 1.0, 0.0))
    cells: dict[str, list[tuple[tuple[int, int, int, str], str, float]]] = {n: [] for n in names}
    firsts = rows[members[0]].fillna("—").astype(str) if members else keys
    texts = rows[members].fillna("—").astype(str).agg("\n".join, axis=1) if members else keys
    for key, first, text, code in zip(keys, firsts, texts, codes, strict=True):
        cells[key].append((_sort_key(first), text, float(code)))
    width = max(len(v) for v in cells.values())
    grid = np.full((len(names), width), np.nan)
    labels: dict[tuple[int, int], str] = {}
    for r, name in enumerate(names):
        ordered = sorted(cells[name], key=lambda t: t[0])
        for c, (_, text, code) in enumerate(ordered):
            grid[r, c] = code
            labels[(r, c)] = text
    cmap = mcolors.ListedColormap([_UNKNOWN, _OFFLINE, _ONLINE]).with_extremes(bad="white")
    ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=-0.5, vmax=2.5, aspect="auto",
              interpolation="nearest")  # fmt: skip
    if len(names) <= 40 and width <= 40:  # cell borders while cells are large enough
        ax.set_xticks(np.arange(-0.5, width, 1), minor=True)
        ax.set_yticks(np.arange(-0.5, len(names), 1), minor=True)
        ax.grid(which="minor", color="white", linewidth=1.5)
        ax.tick_params(which="minor", length=0)
    step = max(1, math.ceil(len(names) / 30))
    ax.set_yticks(np.arange(0, len(names), step), names[::step], fontsize="small")
    xstep = max(1, math.ceil(width / 12))
    ax.set_xticks(np.arange(0, width, xstep), [str(i + 1) for i in range(0, width, xstep)])
    if len(names) * width <= 48:
        for (r, c), label in labels.items():
            ax.text(c, r, label, ha="center", va="center", fontsize="x-small", color="black")
    sorted_by = f", by {dimension_title(members[0])}" if members else ""
    noun = "eNodeB" if group == "enodeb_ip" else dimension_title(group or "network")
    ax.set_xlabel(f"Device on the {noun}{sorted_by}")
    ax.set_ylabel(first_upper(noun) if group else "")
    ax.set_title(title or heading)
    handles = [
        patches.Patch(color=_ONLINE, label="Online"),
        patches.Patch(color=_OFFLINE, label="Offline"),
    ]
    if (codes == 0.0).any():
        handles.append(patches.Patch(color=_UNKNOWN, label="Other status"))
    legend_outside(ax, handles=handles)
    return ax


def _top_talker_words(df: pd.DataFrame, dimension: str) -> str:
    """What a top talker's bars are: a total (COUNT) or one member's own value (MAX, MIN, AVG)."""
    aggs = {str(a).upper() for a in df["aggregation"].dropna()}
    if aggs == {"COUNT"}:
        return f"total; the {dimension} shown is the top talker"
    if aggs and "COUNT" not in aggs:
        return f"the top talker's own value; other {dimension}s not shown"
    return f"COUNT: total, others: the top talker's own value; the {dimension} is the top talker"
