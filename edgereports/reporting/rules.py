"""What a fetched frame says about itself: the range rule, top talkers and empty results.

Applied once per report after its parts are assembled (DESIGN.md "Ranges and buckets: one rule
everywhere" and "Unpinned dimensions: the top-talker rule"):

- **range**: a report with buckets (a granularity, or SIM counts) keeps exactly the buckets that
  overlap ``[start, end)``; a bucket the service adds that begins at or after ``end`` is dropped
  and counted in ``df.attrs["dropped_after_end"]``.
- **top talker**: ``df.attrs["top_talker"]`` lists the grouped-by dimensions no filter pins
  (a COUNT row is then a total labelled with one member, a MAX, MIN or AVG row that member's
  own value), with a :class:`TopTalkerWarning`.
- **empty**: ``df.attrs["empty"]`` lists the filters that matched nothing over the whole range
  (one entry per fan-out value without a row, or the report's own filters when it has no row
  at all), with an :class:`EmptyResultWarning`. An empty window inside a range with data is
  normal and says nothing.
- **not on the account**: a current value (``NOW``) for a device the account does not have at
  that time (an unknown IMSI or MSISDN, or a SIM not yet or no longer active) comes back with
  the device's id and none of its attributes (eNodeB, UE IP, LR id). Such a row is dropped and
  the id listed in ``df.attrs["not_on_account"]``, with an :class:`EmptyResultWarning`: an
  unknown device is not an offline one.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import EmptyResultWarning, TopTalkerWarning
from ..query import Report
from ..query.pinning import DEVICE_IDS, top_talker_message, unpinned_dimensions
from .plan import bucket_of

if TYPE_CHECKING:
    import pandas as pd

    from ..normalize.parts import SeriesPart

__all__ = [
    "describe_empty",
    "in_range",
    "mark",
    "not_on_account",
    "part_in_range",
    "range_rule",
    "warn_about",
]

#: What a device has besides its ids: null in a current value for a device not on the account.
_ATTRIBUTES = ("enodeb_ip", "ue_ip", "lr_id")


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


def not_on_account(frame: pd.DataFrame, report: Report) -> tuple[pd.DataFrame, list[str]]:
    """Drop the current-value rows of devices the account does not have at that time.

    A row is such a device's when the report filters on a device id (``imsi``, ``msisdn``)
    and every device attribute the frame has (``enodeb_ip``, ``ue_ip``, ``lr_id``) is null.

    Args:
        frame: the report's assembled frame.
        report: the report.

    Returns:
        The frame without those rows, and the devices named (``imsi=...``), in row order.
    """
    if not len(frame) or "start_time" not in frame.columns:
        return frame, []
    ids = [d for d in DEVICE_IDS if report.filter_values(d)]
    attributes = [a for a in _ATTRIBUTES if a in frame.columns]
    if not ids or not attributes:
        return frame, []
    gone = frame[attributes].isna().all(axis=1)
    if not gone.any():
        return frame, []
    shown = [d for d in ids if d in frame.columns]
    named = [
        _device(report, ids, row)
        for row in frame.loc[gone, shown].astype(object).to_dict("records")
    ]
    kept = frame.loc[~gone].reset_index(drop=True)
    kept.attrs = frame.attrs
    return kept, list(dict.fromkeys(named))


def _device(report: Report, ids: list[str], row: Mapping[Any, Any]) -> str:
    """The device a row speaks for: its echoed id, or the report's one id filter value."""
    for d in ids:
        value = row.get(d)
        if value is not None and value == value:
            return f"{d}={value}"
    for d in ids:
        values = list(dict.fromkeys(str(v) for v in report.filter_values(d)))
        if len(values) == 1:
            return f"{d}={values[0]}"
    return "a device"


def mark(
    frame: pd.DataFrame,
    report: Report,
    dropped: int,
    empty_values: Sequence[Mapping[str, Any]],
    absent: Sequence[str] = (),
) -> None:
    """Set ``top_talker``, ``empty`` and ``dropped_after_end`` in ``frame.attrs``.

    Args:
        frame: the report's assembled frame (changed in place).
        report: the report.
        dropped: rows dropped by the range rule.
        empty_values: the fan-out values (``{dimension: value}``) whose parts all succeeded
            without a row.
        absent: the devices :func:`not_on_account` dropped.
    """
    frame.attrs["top_talker"] = unpinned_dimensions(report)
    frame.attrs["dropped_after_end"] = dropped
    frame.attrs["not_on_account"] = list(absent)
    if absent and not len(frame):
        frame.attrs["empty"] = []  # the warning names the devices
    elif not len(frame):
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


def _aggregations(frame: pd.DataFrame) -> list[str | None]:
    """The aggregations the frame's request asked for (what its top talker's rows are)."""
    metrics = (frame.attrs.get("request") or {}).get("metrics") or []
    return [m.get("aggregation_type") for m in metrics if isinstance(m, dict)]


def warn_about(frame: pd.DataFrame, stacklevel: int) -> None:
    """Emit the warnings ``frame.attrs`` calls for (top talker, empty results)."""
    unpinned = frame.attrs.get("top_talker") or []
    if unpinned:
        message = top_talker_message(unpinned, _aggregations(frame))
        warnings.warn(message, TopTalkerWarning, stacklevel=stacklevel + 1)
    absent = frame.attrs.get("not_on_account") or []
    if absent:
        message = (
            f"{', '.join(absent)}: not a device of the account at that time (unknown, or its "
            "SIM not active then): no row"
        )
        warnings.warn(message, EmptyResultWarning, stacklevel=stacklevel + 1)
    empty = describe_empty(frame)
    if empty:
        warnings.warn(empty, EmptyResultWarning, stacklevel=stacklevel + 1)
