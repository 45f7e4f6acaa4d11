"""Drawing helpers shared by the charts: axes, time and value axes, legends, bar groups.

matplotlib is imported when a chart is first drawn, not when the module is imported.
"""

from __future__ import annotations

import math
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._dependencies import lazy_import
from ._common import Scale, zone_name

if TYPE_CHECKING:
    from matplotlib.axes import Axes

matplotlib = lazy_import("matplotlib")
mdates = lazy_import("matplotlib.dates")
plt = lazy_import("matplotlib.pyplot")
ticker = lazy_import("matplotlib.ticker")
__all__ = [
    "colors",
    "date_numbers",
    "day_axis",
    "grouped_barh",
    "legend_outside",
    "new_axes",
    "no_data",
    "tick_text",
    "time_axis",
    "value_axis",
]


def date_numbers(stamps: pd.Series | pd.Index) -> np.ndarray:
    """Return UTC timestamps (aware or naive-as-UTC) as matplotlib date numbers (days)."""
    index = pd.DatetimeIndex(stamps)
    if index.tz is not None:
        index = index.tz_convert("UTC").tz_localize(None)
    result: np.ndarray = mdates.date2num(index.to_numpy())
    return result


def time_axis(ax: Axes, tz: tzinfo, *, label: bool = True) -> None:
    """Give ``ax`` a date x axis in ``tz`` with concise, non-overlapping ticks."""
    locator = mdates.AutoDateLocator(tz=tz, minticks=3, maxticks=8)
    ax.xaxis.set_major_locator(locator)
    formatter = mdates.ConciseDateFormatter(locator, tz=tz)
    ax.xaxis.set_major_formatter(formatter)
    if label:
        ax.set_xlabel(f"Time ({zone_name(tz)})")


def day_axis(ax: Axes, centers: np.ndarray, days: list[datetime], label: str) -> None:
    """Label bars that stand for days with their dates (``7 Jul``), thinned to about 12 ticks."""
    years = {d.year for d in days}
    fmt = "{d.day} {d:%b}" if len(years) == 1 else "{d.day} {d:%b} {d.year}"
    texts = [fmt.format(d=d) for d in days]
    step = max(1, math.ceil(len(days) / 12))
    ax.set_xticks(centers[::step], texts[::step])
    if len(years) == 1:
        ax.set_xlabel(f"{label}, {years.pop()}")
    else:
        ax.set_xlabel(label)


def tick_text(value: float) -> str:
    """Return a tick value without needless digits: ``0.5``, ``12``, ``1,500``."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:g}"


def value_axis(ax: Axes, scale: Scale, label: str, *, axis: str = "y") -> None:
    """Label a value axis; values are drawn already divided by ``scale.divisor``."""
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(ticker.FuncFormatter(lambda v, _pos: tick_text(v)))
    if scale.kind == "count":
        target.set_major_locator(ticker.MaxNLocator(nbins="auto", integer=True, min_n_ticks=3))
    (ax.set_ylabel if axis == "y" else ax.set_xlabel)(label)


def new_axes(ax: Axes | None, size: tuple[float, float]) -> Axes:
    """Return ``ax``, or the axes of a new figure with constrained layout."""
    if ax is not None:
        return ax
    _fig, new = plt.subplots(figsize=size, layout="constrained")
    result: Axes = new
    return result


def legend_outside(
    ax: Axes, *, title: str | None = None, handles: list[Any] | None = None, max_rows: int = 16
) -> None:
    """Put the legend to the right of the axes, where it cannot cover data, when the figure
    makes room for it (constrained layout, as on the figures plot() makes); on axes of a
    figure that does not (``plot(df, ax=my_axes)``), inside the axes, where it stays in the
    figure."""
    if handles is None:
        handles, _labels = ax.get_legend_handles_labels()
    if not handles:
        return
    figure = ax.get_figure()
    engine = figure.get_layout_engine() if figure is not None else None
    outside = type(engine).__name__ == "ConstrainedLayoutEngine"
    ax.legend(
        handles=handles,
        title=title,
        loc="upper left" if outside else "best",
        bbox_to_anchor=(1.01, 1.0) if outside else None,
        borderaxespad=0.0 if outside else 0.5,
        frameon=not outside,
        ncols=max(1, math.ceil(len(handles) / max_rows)),
        fontsize="small",
        handlelength=2.6,
    )


def no_data(ax: Axes, title: str) -> Axes:
    """Show an empty chart that says so."""
    ax.set_title(title)
    ax.text(0.5, 0.5, "No data for this report", ha="center", va="center", transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


def colors(n: int) -> list[Any]:
    """Return ``n`` distinct colours (tab10, or tab20 beyond ten)."""
    cmap = matplotlib.colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def grouped_barh(
    ax: Axes, categories: list[str], groups: dict[str, list[float]], scale: Scale, label: str
) -> None:
    """Draw horizontal bars: one row per category, one bar per group, values written at the end.

    Args:
        ax: the axes.
        categories: the row labels, top to bottom.
        groups: ``{legend label: values aligned with categories}``.
        scale: the unit of the values.
        label: the value axis label.
    """
    n = max(1, len(groups))
    height = 0.8 / n
    positions = np.arange(len(categories), dtype=float)
    top = 0.0
    for i, ((name, values), color) in enumerate(zip(groups.items(), colors(n), strict=True)):
        y = positions - 0.4 + height * (i + 0.5)
        shown = [v / scale.divisor for v in values]
        bars = ax.barh(y, shown, height=height * 0.9, label=name, color=color)
        texts = [scale.text(v) for v in values]
        ax.bar_label(bars, labels=texts, padding=3, fontsize="small")
        top = max([top, *(v for v in shown if math.isfinite(v))])
    ax.set_yticks(positions, categories, fontsize="small" if len(categories) > 12 else None)
    ax.invert_yaxis()
    ax.set_xlim(0, top * 1.25 if top > 0 else 1)
    value_axis(ax, scale, label, axis="x")
    if len(groups) > 1:
        legend_outside(ax)
