"""Compared figures of a report frame: like with like, over the same buckets.

A frame compared with other periods (``compare=``) or cohorts gets, per series and period, both
periods' figure over the rows whose change is computed and the change: the total for COUNT
series, the mean for the others (a mean is never set against a total), named in
``compared``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..plotting import bare, period_title, row_groups, split_compared
from ..schema import TIMESERIES, shape_of
from .summary import by_enodeb, change_text, figures, readable

__all__ = ["comparison_table"]


def comparison_table(df: pd.DataFrame, *, summary: pd.DataFrame | None = None) -> pd.DataFrame:
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
        summary: ``summary_table(df)``, when the caller has it already.

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
    if summary is None:
        summary = summary_table(own)
    stats = ("per bucket", "points", "over the window", "devices", "value")
    keep = []
    for column in summary.columns:
        if column in stats:
            break
        keep.append(column)
    parts, online = _parts(own, shape)
    table = bare(own)
    rows = _Rows(
        table["value"].to_numpy(dtype=float),
        (table["aggregation"].astype(object) == "COUNT").to_numpy(dtype=bool),
        table["metric"],
    )
    changes = bare(df)["change"].notna().to_numpy()
    blocks = []
    for k, name in enumerate(compared.names):
        alike = changes[k * len(own) : (k + 1) * len(own)]
        block = summary[keep].copy()
        if len(compared.names) > 1 or compared.cohorts:
            block["vs"] = period_title(name)
        figures = _figures(rows, compared.values[k], alike, parts, shape, online)
        for column, values in figures.items():
            block[column] = values
        blocks.append(block)
    return pd.concat(blocks, ignore_index=True)


@dataclass(frozen=True)
class _Rows:
    """This period's rows as the figures read them: values, COUNT or not, and metrics."""

    values: npt.NDArray[np.float64]
    count: npt.NDArray[np.bool_]
    metric: pd.Series


def _parts(own: pd.DataFrame, shape: str) -> tuple[list[npt.NDArray[np.int64]], bool]:
    """The positions of the rows of each summary row (in :func:`~.summary.summary_table`'s
    order), and whether they are online devices per eNodeB."""
    if shape == "current" and by_enodeb(own):  # online devices per eNodeB
        status = np.flatnonzero((bare(own)["metric"] == "ue_online_status").to_numpy(dtype=bool))
        groups = row_groups(own.iloc[status], ["enodeb_ip"], sort=True, dropna=True)
        return [status[at] for _, at in groups], True
    if shape == "current":
        return [np.array([i]) for i in range(len(own))], False
    keys = [*TIMESERIES.dimensions_of(own), "metric", "aggregation", "percentile"]
    return [at for _, at in row_groups(own, keys)], False


def _figures(
    rows: _Rows,
    then: npt.NDArray[np.float64],
    alike: npt.NDArray[np.bool_],
    parts: list[npt.NDArray[np.int64]],
    shape: str,
    online: bool,
) -> dict[str, list[str]]:
    """Per summary row (its rows' positions in ``parts``), the compared figure of both periods
    and the change. ``then`` holds the other period's value at each row, ``alike`` whether the
    row's change is computed."""
    out: dict[str, list[str]] = {"compared": [], "this": [], "other": [], "change": []}
    for part in parts:
        total = online or (bool(rows.count[part].all()) and shape != "current")
        metric = str(rows.metric.iloc[int(part[0])])
        mine = part[alike[part]]
        what = "online" if online else "value" if shape == "current" else "mean"
        out["compared"].append("total" if total and not online else what)
        if not len(mine):
            none = bool(np.isnan(then[part]).all())
            out["this"].append("")
            out["other"].append("")
            out["change"].append("no counterpart" if none else "not like for like")
            continue
        now, earlier = figures(rows.values[mine]), figures(then[mine])
        this, other = (now[3], earlier[3]) if total else (now[1], earlier[1])
        out["this"].append(readable(metric, this))
        out["other"].append(readable(metric, other))
        share = f" ({len(mine)} of {len(part)})" if len(mine) < len(part) else ""
        out["change"].append(change_text(this, other) + share)
    return out
