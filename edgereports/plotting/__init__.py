"""Charts over the schema frames (matplotlib, imported only when a chart is drawn).

One function per kind of report; each takes a frame, returns the matplotlib ``Axes`` and
accepts ``ax=`` to draw into an existing figure. :func:`plot` picks the chart from
``df.attrs`` and the metric names. Plotting never fetches: give it a frame.

Example:
    >>> import edgereports as er
    >>> ax = er.plot(er.fetch("active_sim_count", start="30d", end="today", sandbox=True))
    >>> ax.get_title().splitlines()[0]
    'Active SIMs per day: physical and eSIM'
    >>> ax.figure.savefig("sims.png")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pandas as pd

from ..errors import InputError
from ._common import (
    Scale,
    TzLike,
    bare,
    chart_frame,
    frame_metrics,
    frame_shape,
    request_range_text,
    row_groups,
    unit_scale,
)
from ._compare import own_rows, period_title, split_compared
from ._labels import member_text, over_what, shown_columns, whose
from ._panels import plot_current, plot_device_status, plot_sim_count
from ._series import plot_percentiles, plot_timeseries, plot_ue_connections

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "Scale",
    "bare",
    "chart_for",
    "chart_png",
    "figure_png",
    "member_text",
    "over_what",
    "own_rows",
    "period_title",
    "plot",
    "plot_current",
    "plot_device_status",
    "plot_percentiles",
    "plot_sim_count",
    "plot_timeseries",
    "plot_ue_connections",
    "request_range_text",
    "row_groups",
    "shown_columns",
    "split_compared",
    "unit_scale",
    "whose",
]

Chart = Callable[..., "Axes"]


def chart_for(df: pd.DataFrame) -> Chart:
    """Return the chart function that suits a frame.

    ``sim_count`` frames get :func:`plot_sim_count`; current ``ue_online_status`` frames
    :func:`plot_device_status`, other current frames :func:`plot_current`; time series of
    percentile metrics :func:`plot_percentiles`, ``ue_connections`` with MAX and AVG
    :func:`plot_ue_connections`, any other time series :func:`plot_timeseries`.

    Args:
        df: a normalized frame (``df.attrs["shape"]``, else its columns, tell the shape), as
            pandas, a ``pyarrow.Table`` or polars.

    Returns:
        The chart function.

    Raises:
        InputError: the frame is not one of the three shapes.
    """
    df = chart_frame(df, "chart_for")
    shape = frame_shape(df, "plot")
    if shape == "sim_count":
        return plot_sim_count
    metrics = frame_metrics(df)
    names = {m for m, _, _ in metrics}
    if shape == "current":
        return plot_device_status if names == {"ue_online_status"} else plot_current
    if metrics and all(p for _, _, p in metrics):
        return plot_percentiles
    aggregations = {a for _, a, _ in metrics}
    if names == {"ue_connections"} and {"MAX", "AVG"} <= aggregations:
        return plot_ue_connections
    return plot_timeseries


def plot(
    df: pd.DataFrame,
    *,
    ax: Axes | None = None,
    tz: TzLike = None,
    title: str | None = None,
    flags: pd.DataFrame | None = None,
) -> Axes:
    """Draw the chart that suits a frame (see :func:`chart_for`).

    Args:
        df: a normalized frame: a pandas DataFrame, or the ``pyarrow.Table`` or polars frame
            of ``output="arrow"``/``"polars"`` (their provenance says what the chart needs).
            A frame compared with other periods (``compare=``) draws them too.
        ax: the axes to draw on; a new figure when omitted.
        tz: the zone of times shown (default: the report's UTC offset, UTC for ``NOW``).
        title: the title (default describes the report).
        flags: health flags (what ``er.health`` returns) to draw as shaded, labelled spans:
            those of the frame's subscribers and their sites, of its sites, or every flag
            for a frame of the whole account, where they overlap the chart's time span (a
            time series or SIM counts; other charts have no time axis).

    Returns:
        The matplotlib ``Axes``.

    Raises:
        InputError: the frame cannot be plotted (wrong shape, mixed units, a bad ``tz``), or
            ``flags`` is not a flags frame or meets a chart without a time axis.

    Example:
        >>> import edgereports as er
        >>> df = er.to_frame({"result": [[
        ...     {"time_stamp": "2022-07-07T00:00:00Z", "name": "sim", "value": 3,
        ...      "aggregation_type": "COUNT"},
        ...     {"time_stamp": "2022-07-08T00:00:00Z", "name": "sim", "value": 5,
        ...      "aggregation_type": "COUNT"}]]})
        >>> ax = plot(df)
        >>> ax.figure.savefig("report.png")
    """
    df = chart_frame(df, "plot")
    chart = chart_for(df)
    if flags is not None and chart not in (plot_timeseries, plot_ue_connections, plot_sim_count):
        raise InputError(f"flags= needs a chart with a time axis; {chart.__name__} has none")
    drawn = chart(df, ax=ax, tz=tz, title=title)
    if flags is not None:
        from ._flags import draw_flags

        draw_flags(drawn, flags, df)
    return drawn


def chart_png(
    df: pd.DataFrame,
    *,
    tz: TzLike = None,
    dpi: int = 96,
    flags: pd.DataFrame | None = None,
    timed: bool = False,
) -> bytes:
    """Draw the chart that suits a frame and return it as PNG bytes (the figure is closed).

    Args:
        df: a normalized frame.
        tz: as in :func:`plot` (e.g. the zone of a ``LAST ...`` report, whose request carries
            no offset).
        dpi: the image's resolution.
        flags: health flags to draw, as in :func:`plot`.
        timed: draw ``flags`` only on a chart with a time axis (instead of refusing them on
            the others).

    Returns:
        The PNG file's bytes.

    Raises:
        InputError: the frame cannot be plotted.

    Example:
        >>> chart_png(df)[:4]
        b'\\x89PNG'
    """
    df = chart_frame(df, "chart_png")
    if timed and chart_for(df) not in (plot_timeseries, plot_ue_connections, plot_sim_count):
        flags = None
    return figure_png(plot(df, tz=tz, flags=flags), dpi=dpi)


def figure_png(ax: Axes, *, dpi: int = 96) -> bytes:
    """The figure of ``ax`` as PNG bytes (white background); the figure is closed, so a
    notebook does not show it again.

    The figure is drawn once, its layout worked out in that draw (``savefig`` draws a figure
    with a layout engine twice: once to lay it out, once to render it).

    Example:
        >>> import matplotlib.pyplot as plt
        >>> figure_png(plt.figure().add_subplot())[:4]
        b'\\x89PNG'
    """
    import io

    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = ax.figure
    assert isinstance(figure, Figure)
    buffer = io.BytesIO()
    try:
        figure.set_dpi(dpi)
        figure.set_facecolor("white")
        FigureCanvasAgg(figure).print_png(buffer)  # type: ignore[no-untyped-call]
    finally:
        plt.close(figure)
    return buffer.getvalue()
