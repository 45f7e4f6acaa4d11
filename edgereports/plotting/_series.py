"""Charts of time-series frames: metrics over time, average vs peak, percentiles per site."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta, tzinfo
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..query.timegrid import BUCKETS
from ..schema import TIMESERIES
from ._axes import (
    colors,
    date_numbers,
    day_axis,
    grouped_barh,
    legend_outside,
    new_axes,
    no_data,
    time_axis,
    value_axis,
)
from ._common import (
    TzLike,
    bare,
    chart_frame,
    check_shape,
    dimension_columns,
    dimension_title,
    first_upper,
    frame_metrics,
    metric_kind,
    metric_title,
    metrics_title,
    ordinal,
    request_granularity,
    request_range_text,
    resolve_tz,
    row_groups,
    unit_scale,
    zone_name,
)
from ._compare import (
    DASHES,
    Compared,
    compare_text,
    draw_others,
    other_handles,
    own_rows,
    split_compared,
)
from ._labels import bucket_word, counted, member_text, whose
from ._time import mark_buckets, placed, time_note

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_percentiles", "plot_timeseries", "plot_ue_connections"]

_KIND_NAMES = {"bytes": "Bytes", "seconds": "Time", "bandwidth": "Bandwidth", "count": "Count"}
_GRAIN_WORDS = {"DAY": "per day", "HOUR": "per hour"}
_BUCKET_DAYS = {g: b / timedelta(days=1) for g, b in BUCKETS.items()}  # matplotlib: days
_DASHES = ("-", "--", ":", "-.")


@dataclass
class _Series:
    """One line of a chart: the key columns' values and its points, sorted by time; with a
    comparison, each other period's values at the same rows and where a bucket on either side
    is partial or provisional."""

    key: dict[str, object]
    stamps: pd.Series
    values: np.ndarray
    previous: list[np.ndarray]
    marked: list[np.ndarray]

    @property
    def total(self) -> float:
        return float(np.nansum(np.abs(self.values)))


def _split(df: pd.DataFrame, keys: list[str], compared: Compared | None) -> list[_Series]:
    """The series of ``df`` (this period's rows, index = row position in ``compared``)."""
    table = bare(df)
    stamps = table["time_stamp"]
    when = stamps.to_numpy(dtype="datetime64[us]")
    labels = table.index.to_numpy()
    values = table["value"].to_numpy(dtype=float)
    out: list[_Series] = []
    for key, at in row_groups(df, keys):
        at = at[np.argsort(when[at], kind="stable")]
        rows = labels[at]
        previous = [] if compared is None else list(compared.values[:, rows])
        marked = [] if compared is None else list(compared.partial[:, rows])
        named = dict(zip(keys, key, strict=True))
        out.append(_Series(named, stamps.iloc[at], values[at], previous, marked))
    return out


def _text(value: object) -> str:
    return "—" if value is None or value is pd.NA or value != value else str(value)


def _labels(series: list[_Series], dims: list[str], df: pd.DataFrame) -> list[str]:
    """Name each series by what varies between them (dimension values, metric, aggregation).

    A top talker's value is named as what it is, a total (COUNT) or its own value (MAX, MIN,
    AVG): :func:`._labels.member_text`.
    """
    columns = [*dims, "metric", "aggregation", "percentile"]
    varying = {c for c in columns if len({_text(s.key[c]) for s in series}) > 1}

    def varies(column: str) -> bool:
        return column in varying

    varying_dims = [d for d in dims if varies(d)]
    labels = []
    for s in series:
        parts = (
            [" / ".join(member_text(df, d, s.key[d], s.key["aggregation"]) for d in varying_dims)]
            if varying_dims
            else []
        )
        if varies("metric") or not parts:
            metric = metric_title(str(s.key["metric"]))
            if varies("aggregation") and _text(s.key["aggregation"]) != "—":
                metric += f" ({s.key['aggregation']})"
            if varies("percentile") and _text(s.key["percentile"]) != "—":
                metric += f" ({ordinal(float(str(s.key['percentile'])))} pct.)"
            parts.append(metric)
        labels.append(" · ".join(parts))
    return labels


def _aggregation(df: pd.DataFrame) -> str | None:
    """The one aggregation of the frame's rows, if there is one."""
    aggs = set(df["aggregation"].dropna().astype(str))
    return aggs.pop() if len(aggs) == 1 else None


def _what(metrics: Sequence[str], kind: str, *, axis: bool = False) -> str:
    names = [metric_title(m) for m in dict.fromkeys(metrics)]
    if len(names) == 1:
        return names[0]
    if len(names) == 2 and not axis:
        return metrics_title(metrics)
    return _KIND_NAMES[kind]


def plot_timeseries(
    df: pd.DataFrame,
    *,
    ax: Axes | None = None,
    tz: TzLike = None,
    title: str | None = None,
    metrics: Sequence[str] | None = None,
    kind: str = "auto",
    max_series: int = 10,
) -> Axes:
    """Plot a time-series frame: one line (or bar group) per metric and dimension value.

    Values are shown in a readable unit (bytes as KB/MB/GB, seconds as minutes/hours,
    bandwidth as kbps/Mbps); times in the report's UTC offset unless ``tz`` says otherwise.

    Args:
        df: a ``timeseries`` frame.
        ax: the axes to draw on; a new figure when omitted.
        tz: the zone of the time axis: an IANA name, an offset such as ``"+05:30"``, ``"UTC"``
            or a ``tzinfo``; default the offset of the report's ``start_date_time``.
        title: the title; a default names the metrics, grouping and range.
        metrics: only these metrics (needed when the frame mixes units, e.g. bytes and seconds).
        kind: ``"line"``, ``"bar"`` (a bar per bucket, spanning it) or ``"auto"`` (bars for
            daily data with at most four series, lines otherwise).
        max_series: draw at most this many series, the largest by total; the title says so.

    Returns:
        The matplotlib ``Axes``.

    Raises:
        InputError: not a time-series frame, unknown ``metrics`` or ``kind``, or metrics in
            different units.
    """
    df = chart_frame(df, "plot_timeseries")
    check_shape(df, "timeseries", "plot_timeseries")
    compared_line = compare_text(df, resolve_tz(tz, df))
    df, compared = split_compared(df)  # this period's rows once; the others beside them
    df = placed(df)  # a v2 row at the start of the bucket it covers
    if kind not in ("auto", "line", "bar"):
        raise InputError(f"kind must be 'auto', 'line' or 'bar', got {kind!r}")
    if max_series < 1:
        raise InputError(f"max_series must be at least 1, got {max_series}")
    if metrics is not None:
        unknown = sorted(set(metrics) - set(df["metric"].dropna()))
        if unknown:
            raise InputError(
                f"metric(s) {', '.join(unknown)} not in the frame; it has "
                f"{', '.join(sorted(set(df['metric'].dropna())))}"
            )
        df = df[df["metric"].isin(list(metrics))]
    zone = resolve_tz(tz, df)
    grain = request_granularity(df) or _infer_grain(df)
    dims = dimension_columns(df, TIMESERIES.fixed)
    ax = new_axes(ax, (10.0, 4.8))
    present = list(dict.fromkeys(m for m, _, _ in frame_metrics(df)))
    kinds = sorted({metric_kind(m) for m in present})
    if len(kinds) > 1:
        raise InputError(
            f"the frame mixes units ({', '.join(kinds)}); plot one kind at a time with "
            f"metrics=[...] (metrics: {', '.join(present)})"
        )
    kind_of_values = kinds[0] if kinds else "count"
    heading = _heading(present, kind_of_values, grain, dims, df, zone)
    if df.empty:
        return no_data(ax, title or heading)
    series = _split(df, [*dims, "metric", "aggregation", "percentile"], compared)
    labels = _labels(series, dims, df)
    shown = sorted(range(len(series)), key=lambda i: -series[i].total)[:max_series]
    shown.sort()
    if len(shown) < len(series):
        first, _, rest = heading.partition("\n")
        heading = f"{first} (largest {len(shown)} of {len(series)})\n{rest}".rstrip()
    scale = unit_scale(present[0], df["value"].to_numpy(dtype=float))
    bar = kind == "bar" or (kind == "auto" and grain == "DAY" and len(shown) <= 4)
    width = _BUCKET_DAYS.get(grain or "", _guess_bucket(df))
    styles = _styles([series[i] for i in shown], dims, bar)
    for n, (i, (color, dash)) in enumerate(zip(shown, styles, strict=True)):
        s = series[i]
        x, y = date_numbers(s.stamps), s.values / scale.divisor
        if bar:
            each = 0.8 * width / len(shown)
            left = x + 0.1 * width + n * each
            draw_others(ax, s.previous, s.marked, scale.divisor, color, bar=(left, each))
            ax.bar(left + each * 0.2, y, width=each * 0.6, align="edge",
                   label=labels[i], color=color, zorder=2)  # fmt: skip
        else:
            marker = "o" if len(x) <= 60 else None
            if grain == "DAY":  # a day's point in the middle of its day, under its date
                x = x + width / 2
            draw_others(ax, s.previous, s.marked, scale.divisor, color, x=x)
            ax.plot(x, y, marker=marker, markersize=3.5, linewidth=1.6, label=labels[i],
                    color=color, linestyle=dash)  # fmt: skip
    if bar or grain == "DAY":
        _day_ticks(ax, df, width, grain, zone)
    else:
        time_axis(ax, zone)
    mark_buckets(ax, df, width)
    note = time_note(df, zone)
    if note:
        heading = f"{heading}\n{note}"
    what = _what(present, kind_of_values, axis=True)
    if len(present) == 1:
        what = counted(present[0], _aggregation(df), what)
    value_axis(ax, scale, scale.label(what))
    if float(np.nanmin(df["value"].to_numpy(dtype=float))) >= 0:
        ax.set_ylim(bottom=0)
    ax.grid(axis="y", alpha=0.3)
    if compared_line:
        heading = f"{heading}\n{compared_line}"
    ax.set_title(title or heading)
    varying = [d for d in dims if df[d].nunique(dropna=False) > 1]
    if len(shown) > 1 or compared_line:
        handles, _ = ax.get_legend_handles_labels()
        if compared_line and compared is not None:
            handles += other_handles(compared, bar)
        legend_outside(
            ax, title=", ".join(dimension_title(d) for d in varying) or None, handles=handles
        )
    return ax


def _day_ticks(ax: Axes, df: pd.DataFrame, width: float, grain: str | None, zone: tzinfo) -> None:
    """Label day buckets with their dates (``7 Mar``) at their middles, not hours of a day."""
    starts = pd.DatetimeIndex(df["time_stamp"].drop_duplicates().sort_values())
    middles = starts + pd.Timedelta(days=width / 2)
    days = [t.tz_convert(zone).to_pydatetime() for t in middles]
    day_axis(ax, date_numbers(starts) + width / 2, days, bucket_word(grain, zone, zone_name(zone)))


def _styles(series: list[_Series], dims: list[str], bar: bool) -> list[tuple[Any, str]]:
    """Colour and dash per series: by dimension value and metric when both vary (lines)."""
    groups = list(dict.fromkeys(tuple(_text(s.key[d]) for d in dims) for s in series))
    metrics = list(
        dict.fromkeys((_text(s.key["metric"]), _text(s.key["aggregation"])) for s in series)
    )
    if bar or len(groups) < 2 or len(metrics) < 2 or len(metrics) > len(_DASHES):
        return [(c, "-") for c in colors(len(series))]
    palette = colors(len(groups))
    return [
        (
            palette[groups.index(tuple(_text(s.key[d]) for d in dims))],
            _DASHES[metrics.index((_text(s.key["metric"]), _text(s.key["aggregation"])))],
        )
        for s in series
    ]


def _heading(
    metrics: list[str],
    kind: str,
    grain: str | None,
    dims: list[str],
    df: pd.DataFrame,
    zone: tzinfo,
) -> str:
    what = _what(metrics, kind) if metrics else "Report"
    parts = [what, _GRAIN_WORDS.get(grain or "", "")]
    varying = [d for d in dims if df[d].nunique(dropna=False) > 1]
    fixed = [d for d in dims if d not in varying and df[d].notna().any()]
    if varying:
        parts.append("by " + ", ".join(dimension_title(d) for d in varying))
    if fixed:
        parts.append(
            "for "
            + ", ".join(
                f"{dimension_title(d)} {member_text(df, d, df[d].dropna().iloc[0])}" for d in fixed
            )
        )
    elif dims and df.empty:
        parts.append("by " + ", ".join(dimension_title(d) for d in dims))
    if not dims:
        who = whose(df)  # whose value it is: the account's total, or one member's
        parts.append(f"· {who}" if who else "")
    head = " ".join(p for p in parts if p)
    return f"{head}\n{request_range_text(df.attrs.get('request'), zone)}".rstrip()


def _infer_grain(df: pd.DataFrame) -> str | None:
    """DAY or HOUR when the frame carries no request but its buckets are that far apart."""
    if df.empty:
        return None
    step = _guess_bucket(df)
    for grain, days in _BUCKET_DAYS.items():
        if len(df["time_stamp"].unique()) > 1 and abs(step - days) < 1e-9:
            return grain
    return None


def _guess_bucket(df: pd.DataFrame) -> float:
    stamps = np.unique(date_numbers(df["time_stamp"].dropna()))
    if len(stamps) < 2:
        return 1.0
    return float(np.min(np.diff(stamps)))


def plot_ue_connections(
    df: pd.DataFrame, *, ax: Axes | None = None, tz: TzLike = None, title: str | None = None
) -> Axes:
    """Plot average vs peak UE connections: the peak as a line over the shaded average.

    Args:
        df: a ``timeseries`` frame of ``ue_connections`` with ``MAX`` and ``AVG`` (the
            ``ue_connections_avg_peak`` preset).
        ax: the axes to draw on; a new figure when omitted.
        tz: the zone of the time axis (default: the report's offset).
        title: the title (default names the range).

    Returns:
        The matplotlib ``Axes``.

    Raises:
        InputError: not a time-series frame, or it lacks ``ue_connections`` MAX or AVG.
    """
    df = chart_frame(df, "plot_ue_connections")
    check_shape(df, "timeseries", "plot_ue_connections")
    zone = resolve_tz(tz, df)
    compared_line = compare_text(df, zone)
    df, compared = split_compared(df)
    df = placed(df)
    grain = request_granularity(df) or _infer_grain(df)
    heading = f"UE connections {_GRAIN_WORDS.get(grain or '', '')}: peak and average".replace(
        "  ", " "
    )
    who = whose(df)
    span = request_range_text(df.attrs.get("request"), zone)
    heading = f"{heading}{f', {who}' if who else ''}\n{span}".rstrip()
    ax = new_axes(ax, (10.0, 4.8))
    if df.empty:
        return no_data(ax, title or heading)
    rows = df[df["metric"] == "ue_connections"]
    parts = {
        agg: rows[rows["aggregation"] == agg].sort_values("time_stamp") for agg in ("MAX", "AVG")
    }
    missing = [agg for agg, part in parts.items() if part.empty]
    if missing:
        raise InputError(
            f"plot_ue_connections needs ue_connections with MAX and AVG; {' and '.join(missing)} "
            "missing (use plot_timeseries for other frames)"
        )
    peak, avg = parts["MAX"], parts["AVG"]
    shift = 0.5 if grain == "DAY" else 0.0  # a day's point in the middle of its day
    xa, ya = date_numbers(avg["time_stamp"]) + shift, avg["value"].to_numpy(dtype=float)
    ax.fill_between(xa, 0, ya, step=None, alpha=0.35, color="tab:blue", linewidth=0)
    ax.plot(xa, ya, color="tab:blue", linewidth=1.4, label="Average (AVG, time average)")
    ax.plot(date_numbers(peak["time_stamp"]) + shift, peak["value"].to_numpy(dtype=float),
            color="tab:red", linewidth=1.6, marker="o" if len(peak) <= 60 else None,
            markersize=3, label="Peak (MAX, peak 5 minutes)")  # fmt: skip
    if compared_line and compared is not None:  # the others at the same offsets, faint
        for part, color in ((avg, "tab:blue"), (peak, "tab:red")):
            at = part.index.to_numpy()
            for values, dash in zip(compared.values[:, at], DASHES, strict=False):
                ax.plot(date_numbers(part["time_stamp"]) + shift, values, color=color,
                        alpha=0.35, linewidth=1.4, linestyle=dash)  # fmt: skip
        heading = f"{heading}\n{compared_line}"
    if grain == "DAY":
        _day_ticks(ax, rows, 1.0, grain, zone)
    else:
        time_axis(ax, zone)
    mark_buckets(ax, df, _BUCKET_DAYS.get(grain or "", _guess_bucket(df)))
    note = time_note(df, zone)
    heading = f"{heading}\n{note}" if note else heading
    value_axis(ax, unit_scale("ue_connections", []), "UE connections (devices at once)")
    ax.set_ylim(bottom=0)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(title or heading)
    handles, _ = ax.get_legend_handles_labels()
    if compared_line and compared is not None:
        handles += other_handles(compared, False)
    legend_outside(ax, handles=handles)
    return ax


def plot_percentiles(
    df: pd.DataFrame, *, ax: Axes | None = None, tz: TzLike = None, title: str | None = None
) -> Axes:
    """Plot percentile metrics per dimension value (bandwidth percentiles per site) as bars.

    A frame with several points per site and metric is drawn over time instead (as
    :func:`plot_timeseries` does).

    Args:
        df: a ``timeseries`` frame whose rows carry a ``percentile`` (the
            ``bandwidth_percentile`` preset), one value per metric and site.
        ax: the axes to draw on; a new figure when omitted.
        tz: the zone of the range in the default title (default: the report's offset).
        title: the title.

    Returns:
        The matplotlib ``Axes``.

    Raises:
        InputError: not a time-series frame, no percentile rows, or metrics in different units.
    """
    full = chart_frame(df, "plot_percentiles")
    check_shape(full, "timeseries", "plot_percentiles")
    df = own_rows(full)  # a compared frame: this period's rows
    zone = resolve_tz(tz, df)
    dims = dimension_columns(df, TIMESERIES.fixed)
    rows = df[df["percentile"].notna()]
    if rows.duplicated([*dims, "metric", "percentile"]).any():
        # several points per site and metric (e.g. per bucket): show them over time
        return plot_timeseries(full, ax=ax, tz=tz, title=title, kind="line")
    ax = new_axes(ax, (10.0, max(3.0, 1.2 + 0.45 * rows[dims].drop_duplicates().shape[0])))
    pcts = sorted({float(p) for p in rows["percentile"]})
    pct_text = " and ".join(ordinal(p) for p in pcts) or "Percentile"
    kinds = sorted({metric_kind(str(m)) for m in rows["metric"]})
    metrics = list(dict.fromkeys(str(m) for m in rows["metric"]))
    what = _what(metrics, kinds[0]) if metrics else "Bandwidth"
    by = f" per {dimension_title(dims[0])}" if dims else ""
    span = request_range_text(df.attrs.get("request"), zone)
    heading = f"{what}, {pct_text} percentile{by}\n{span}".rstrip()
    if df.empty:
        return no_data(ax, title or heading)
    if rows.empty:
        raise InputError("plot_percentiles needs rows with a percentile (PERCENTILE metrics)")
    if len(kinds) > 1:
        raise InputError(f"the frame mixes units ({', '.join(kinds)}); plot one kind at a time")
    cats = [" / ".join(_text(v) for v in r) for r in rows[dims].itertuples(index=False)]
    rows = rows.assign(_cat=cats if dims else "all")
    categories = sorted(dict.fromkeys(rows["_cat"]))
    groups: dict[str, list[float]] = {}
    for (metric, pct), part in rows.groupby(["metric", "percentile"], sort=False):
        suffix = f" ({ordinal(float(str(pct)))})" if len(pcts) > 1 else ""
        label = metric_title(str(metric)) + suffix
        values = part.set_index("_cat")["value"]
        groups[label] = [float(values.get(c, math.nan)) for c in categories]
    scale = unit_scale(metrics[0], rows["value"].to_numpy(dtype=float))
    grouped_barh(ax, categories, groups, scale, scale.label(_what(metrics, kinds[0], axis=True)))
    if dims:
        ax.set_ylabel(first_upper(dimension_title(dims[0])))
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(title or heading)
    return ax
