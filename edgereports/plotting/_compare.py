"""What a chart draws of a comparison: this period's rows once, the other periods' values
beside them, and their names.

A frame compared with one period has its values in ``compare_value``; one compared with several
(or with cohorts) holds one block of this period's rows per other period, named in ``period``
(``cohort``), each block in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..schema import COMPARE_DTYPES, COMPARE_LABELS
from ._common import request_range_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "Compared",
    "compare_text",
    "draw_others",
    "other_handles",
    "own_rows",
    "period_title",
    "split_compared",
]

_TITLES = {
    "previous_period": "previous period",
    "previous_week": "previous week",
    "previous_year": "previous year",
    "previous_year_dow": "previous year, same weekday",
}
#: How the other periods' lines are dashed, in order (the first: dotted, as for one period).
DASHES: tuple[Any, ...] = (":", "--", "-.", (0, (1, 4)))


def period_title(name: str) -> str:
    """A period's name as a reader reads it (``previous_year_dow``: ``previous year, same
    weekday``); a range or a cohort's value as it is.

    Example:
        >>> period_title("previous_year_dow"), period_title("2023-12-01..2023-12-08")
        ('previous year, same weekday', '2023-12-01..2023-12-08')
    """
    return _TITLES.get(name, name)


@dataclass(frozen=True)
class Compared:
    """The other periods of a compared frame, aligned with its own rows.

    Attributes:
        names: each other period's name (the rule, the range or the cohort's value).
        values: ``(periods, rows)``: each period's value at each row (NaN where none).
        partial: ``(periods, rows)``: a partial or provisional bucket on either side.
        cohorts: the others are cohorts (``compare_by``), not periods.
    """

    names: list[str]
    values: np.ndarray
    partial: np.ndarray
    cohorts: bool = False

    def titles(self) -> list[str]:
        """The names as a legend shows them."""
        return [period_title(n) for n in self.names]


def own_rows(df: pd.DataFrame) -> pd.DataFrame:
    """This period's rows, each once, without the comparison's columns (``attrs`` kept)."""
    return split_compared(df)[0]


def split_compared(df: pd.DataFrame) -> tuple[pd.DataFrame, Compared | None]:
    """This period's rows (each once, without the comparison's columns) and the other periods'
    values aligned with them; None when the frame is not compared.

    Raises:
        InputError: the blocks of a frame compared with several periods do not hold the same
            rows (the frame was cut unevenly).
    """
    if "compare_value" not in df.columns:
        return df, None
    column = next((c for c in COMPARE_LABELS if c in df.columns), None)
    if column is None:
        facts = df.attrs.get("compare")
        name = str(facts.get("mode", "")) if isinstance(facts, Mapping) else ""
        blocks = [(name or "previous_period", df)]
    else:
        labels = df[column].astype(object)
        blocks = [(str(n), df[labels == n]) for n in dict.fromkeys(labels)]
    own = blocks[0][1]
    for _, block in blocks[1:]:
        if (
            len(block) != len(own)
            or not (
                block["time_stamp" if "time_stamp" in df else "start_time"].to_numpy()
                == own["time_stamp" if "time_stamp" in df else "start_time"].to_numpy()
            ).all()
        ):
            raise InputError(
                f"the blocks of the compared {column}s hold different rows; filter every "
                f"{column} alike (or plot one: df[df[{column!r}] == ...])"
            )
    values = np.vstack([b["compare_value"].to_numpy(dtype=float) for _, b in blocks])
    partial = np.vstack(
        [
            b["compare_partial"].to_numpy(dtype=bool)
            if "compare_partial" in b
            else np.zeros(len(b), dtype=bool)
            for _, b in blocks
        ]
    )
    base = own.drop(columns=[c for c in COMPARE_DTYPES if c in own.columns])
    base = base.reset_index(drop=True)
    base.attrs = df.attrs
    return base, Compared([n for n, _ in blocks], values, partial, column == "cohort")


def compare_text(df: pd.DataFrame, tz: tzinfo) -> str:
    """The title line of a compared frame: ``vs 24–30 Jun 2022 (UTC), lighter``, or the other
    periods by name and range; else empty."""
    facts = df.attrs.get("compare")
    if "compare_value" not in df.columns or not isinstance(facts, Mapping):
        return ""
    if not bool(df["compare_value"].notna().any()):
        return ""
    others = [o for o in facts.get("others") or [facts] if isinstance(o, Mapping)]
    marked = "compare_partial" in df.columns and bool(df["compare_partial"].any())
    mark = "; x: a partial or provisional bucket on either side" if marked else ""
    if facts.get("column") == "cohort":
        names = ", ".join(str(o.get("name")) for o in others)
        return f"vs {facts.get('by')} {names} (same range; {facts.get('base')} solid){mark}"
    ranges = [request_range_text(o.get("request"), tz) for o in others]
    if len(others) == 1:
        return f"vs {ranges[0]}, lighter{mark}" if ranges[0] else ""
    shown = "; ".join(
        f"{period_title(str(o.get('name')))} {r}" for o, r in zip(others, ranges, strict=True)
    )
    return f"vs {shown}{mark}"


def draw_others(
    ax: Axes,
    previous: list[np.ndarray],
    marked: list[np.ndarray],
    divisor: float,
    color: Any,
    *,
    x: np.ndarray | None = None,
    bar: tuple[np.ndarray, float] | None = None,
) -> None:
    """The other periods' values of one series (``previous``, with ``marked`` where a bucket
    on either side is partial or provisional): one period as a lighter, wider bar behind each
    bar (or a faint dotted line), several as dashed ticks across the bars (or faint dashed
    lines); an x at each marked value."""
    single = len(previous) == 1
    for k, (values, marks) in enumerate(zip(previous, marked, strict=True)):
        before = values / divisor
        if bar is not None:
            left, each = bar
            if single:  # the compared period: a lighter, wider bar behind
                ax.bar(left, before, width=each * 0.95, align="edge", color=color, alpha=0.3,
                       zorder=1.5)  # fmt: skip
            else:
                ax.hlines(before, left, left + each * 0.95, colors=color, alpha=0.75,
                          linestyles=DASHES[k], linewidth=1.8, zorder=2.5)  # fmt: skip
            where = left + each * 0.5
        else:
            assert x is not None
            ax.plot(x, before, linewidth=1.4, color=color, alpha=0.35 if single else 0.55,
                    linestyle=DASHES[k])  # fmt: skip
            where = x
        if marks.any():
            ax.plot(where[marks], before[marks], linestyle="none", marker="x", color=color,
                    markersize=6, zorder=3)  # fmt: skip


def other_handles(compared: Compared, bar: bool) -> list[Any]:
    """The legend entries of the other periods (and of the x marking partial buckets)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    titles = compared.titles()
    if len(titles) == 1 and bar:
        handles: list[Any] = [Patch(color="grey", alpha=0.3, label=f"{titles[0]} (lighter)")]
    elif len(titles) == 1:
        handles = [Line2D([], [], color="grey", alpha=0.5, linestyle=":", label=titles[0])]
    else:
        handles = [
            Line2D([], [], color="grey", linestyle=dash, label=title)
            for title, dash in zip(titles, DASHES, strict=False)
        ]
    if compared.partial.any():
        mark = Line2D([], [], color="grey", linestyle="none", marker="x")
        mark.set_label("partial or provisional (either side)")
        handles.append(mark)
    return handles
