"""What a fetched frame says about itself: the range rule, top talkers and empty results.

Applied once per report after its parts are assembled (DESIGN.md "Ranges and buckets: one rule
everywhere" and "Unpinned dimensions: the top-talker rule"):

- **range**: a report with buckets (a granularity, or SIM counts) keeps exactly the buckets that
  overlap ``[start, end)``; a bucket the service adds that begins at or after ``end`` is dropped
  and counted in ``df.attrs["dropped_after_end"]``.
- **top talker**: ``df.attrs["top_talker"]`` lists the grouped-by dimensions no filter pins
  (each row is then a total labelled with one member), with a :class:`TopTalkerWarning`.
- **empty**: ``df.attrs["empty"]`` lists the filters that matched nothing over the whole range
  (one entry per fan-out value without a row, or the report's own filters when it has no row
  at all), with an :class:`EmptyResultWarning`. An empty window inside a range with data is
  normal and says nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import EmptyResultWarning, TopTalkerWarning
from ..query import Report
from ..query.pinning import top_talker_message, unpinned_dimensions
from .plan import bucket_of

if TYPE_CHECKING:
    import pandas as pd

    from ..normalize.parts import SeriesPart

__all__ = ["describe_empty", "in_range", "mark", "part_in_range", "range_rule", "warn_about"]


#: A report's range and whether it owns its end (:func:`range_rule`).
RangeRule = tuple[datetime, datetime, bool]


def in_range(frame: pd.DataFrame, rule: RangeRule | None) -> tuple[pd.DataFrame, int]:
    """The rows of ``frame`` whose bucket begins before the report's end, and how many went.

    A v2 frame keeps the stamps up to and including the end (each is the end of a piece).

    Reports without buckets (``NOW``, ``LAST ...``, PERCENTILE over a range; ``rule`` None)
    are kept as sent.

    Args:
        frame: the report's assembled frame.
        rule: the report's :func:`range_rule`.
    """
    from ..normalize.stitching import owned_rows

    if rule is None or not len(frame):
        return frame, 0
    start, end, right = rule
    closed = "right" if right else "left"
    kept = owned_rows(frame, start, end, first=True, last=False, closed=closed)
    return kept, len(frame) - len(kept)


def part_in_range(part: SeriesPart, rule: RangeRule | None) -> tuple[SeriesPart, int]:
    """:func:`in_range` for the points of a part, before any frame is built (no row copied).

    Args:
        part: a part of the report's pull.
        rule: the report's :func:`range_rule` (made once for all of its parts).
    """
    if rule is None:
        return part, 0
    start, end, right = rule
    kept = part.owned(start, end, first=True, last=False, right=right)
    return kept, len(part) - len(kept)


def range_rule(report: Report) -> RangeRule | None:
    """The report's range and whether it owns its end (v2 stamps each piece of the range at its
    end: the range owns the stamps in ``(start, end]``); None for a report without buckets."""
    span = report.time_range()
    if bucket_of(report) is None or span is None:
        return None
    return span[0], span[1], report.stamps_at_end


def _filters(report: Report) -> dict[str, Any]:
    """The report's filters as ``{dimension: value or values}`` (account first)."""
    out: dict[str, Any] = {}
    for dim in ["account_id", *(f.dimension_name for c in report.clauses or () for f in c.filters)]:
        values = list(dict.fromkeys(report.filter_values(dim)))
        if values:
            out[dim] = values[0] if len(values) == 1 else values
    return out


def mark(
    frame: pd.DataFrame,
    report: Report,
    dropped: int,
    empty_values: Sequence[Mapping[str, Any]],
) -> None:
    """Set ``top_talker``, ``empty`` and ``dropped_after_end`` in ``frame.attrs``.

    Args:
        frame: the report's assembled frame (changed in place).
        report: the report.
        dropped: rows dropped by the range rule.
        empty_values: the fan-out values (``{dimension: value}``) whose parts all succeeded
            without a row.
    """
    frame.attrs["top_talker"] = unpinned_dimensions(report)
    frame.attrs["dropped_after_end"] = dropped
    if not len(frame):
        frame.attrs["empty"] = [_filters(report)]
    else:
        frame.attrs["empty"] = [dict(v) for v in empty_values]


def describe_empty(frame: pd.DataFrame) -> str | None:
    """One line naming the filters that matched nothing, or None when nothing is empty.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame()
        >>> df.attrs = {"empty": [{"account_id": "A", "msisdn": "91"}],
        ...             "request": {"start_date_time": "2024-06-01", "end_date_time": "2024-06-02"}}
        >>> describe_empty(df)
        'no rows for account_id=A, msisdn=91 from 2024-06-01 to 2024-06-02'
    """
    empty = frame.attrs.get("empty") or []
    if not empty:
        return None
    request = frame.attrs.get("request") or {}
    span = f" from {request.get('start_date_time')} to {request.get('end_date_time')}"
    named = "; ".join(
        ", ".join(f"{k}={_text(v)}" for k, v in item.items()) or "the report" for item in empty
    )
    if len(frame):
        return f"{len(empty)} filter value(s) matched no row{span}: {named}"
    return f"no rows for {named}{span}"


def _text(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def warn_about(frame: pd.DataFrame, stacklevel: int) -> None:
    """Emit the warnings ``frame.attrs`` calls for (top talker, empty results)."""
    unpinned = frame.attrs.get("top_talker") or []
    if unpinned:
        warnings.warn(top_talker_message(unpinned), TopTalkerWarning, stacklevel=stacklevel + 1)
    empty = describe_empty(frame)
    if empty:
        warnings.warn(empty, EmptyResultWarning, stacklevel=stacklevel + 1)
