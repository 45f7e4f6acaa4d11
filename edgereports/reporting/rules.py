"""What a fetched frame says about itself: the range rule, top talkers and empty results.

Applied once per report after its parts are assembled (docs/design.md, "Time"
and "Top talkers"):

- **range**: a report with buckets (a granularity, or SIM counts) keeps exactly the buckets that
  overlap ``[start, end)``; a bucket the service adds that begins at or after ``end`` is dropped
  and counted in ``df.attrs["dropped_after_end"]``.
- **top talker**: ``df.attrs["top_talker"]`` lists the grouped-by dimensions no filter pins
  (a COUNT row is then a total labelled with one member, a MAX, MIN or AVG row that member's
  own value), with a :class:`TopTalkerWarning`.
- **empty**: ``df.attrs["empty"]`` lists the filters that matched nothing over the whole range
  (one entry per fan-out value without a row, or the report's own filters when it has no row
  at all), with an :class:`EmptyResultWarning`; a range that starts after the service's present
  says so. An empty window inside a range with data is normal and says nothing.
- **not on the account**: a current value (``NOW``) for a device the account does not have at
  that time (an unknown IMSI or MSISDN, or a SIM not yet or no longer active) comes back with
  the device's id and none of its attributes (eNodeB, UE IP, LR id). Such a row is dropped and
  the id listed in ``df.attrs["not_on_account"]``, with an :class:`EmptyResultWarning`: an
  unknown device is not an offline one.
- **time** (:func:`mark_time`): ``df.attrs["clock"]`` is the present the pull was judged by
  (the service's, from its latest answer, else the local clock), ``partial_buckets`` the
  buckets the range covers only in part (with a :class:`PartialBucketWarning`; ``partial=
  "drop"`` removes them) and ``provisional_from`` the first bucket the service may still revise.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import EmptyResultWarning, InputError, PartialBucketWarning, TopTalkerWarning
from ..query import Report
from ..query.pinning import DEVICE_IDS, top_talker_message, unpinned_dimensions
from ..query.timegrid import partial_buckets, provisional_from, whole_buckets
from .plan import bucket_of

if TYPE_CHECKING:
    import pandas as pd

    from ..normalize.parts import SeriesPart

__all__ = [
    "PARTIAL",
    "check_partial",
    "describe_empty",
    "describe_partial",
    "in_range",
    "mark",
    "mark_time",
    "not_on_account",
    "part_in_range",
    "range_rule",
    "warn_about",
]

#: What a device has besides its ids: null in a current value for a device not on the account.
_ATTRIBUTES = ("enodeb_ip", "ue_ip", "lr_id")

#: What ``partial=`` takes: keep the buckets a range covers in part (named), or drop them.
PARTIAL = ("keep", "drop")


def check_partial(partial: object) -> str:
    """Return ``partial`` when it is ``"keep"`` or ``"drop"``.

    Raises:
        InputError: any other value (named, with the allowed ones).
    """
    if partial not in PARTIAL:
        raise InputError(f"partial must be 'keep' or 'drop', got {partial!r}")
    return str(partial)


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


def mark_time(
    frame: pd.DataFrame, report: Report, now: datetime, source: str, partial: str = "keep"
) -> pd.DataFrame:
    """Say in ``frame.attrs`` how the report's range lies on the time grid and the present.

    Sets ``clock`` (``{"now", "source"}``: ``"service"`` or ``"local"``), ``relative`` (the
    relative dates the range was written with, when it was), ``partial_buckets`` (each bucket
    the range covers in part, with the share inside it) and ``provisional_from`` (the start of
    the bucket holding the present, when the range reaches it; else None). With ``partial=
    "drop"`` the rows of partial buckets go, counted in ``dropped_partial``.

    Args:
        frame: the report's assembled frame.
        report: the report, its relative dates resolved.
        now: the present the pull is judged by.
        source: which clock gave ``now``.
        partial: ``"keep"`` or ``"drop"``.

    Returns:
        The frame (a new one when rows were dropped).
    """
    attrs: dict[str, Any] = {"clock": {"now": now.isoformat(), "source": source}}
    if report.relative:
        attrs["relative"] = dict(zip(("start", "end"), report.relative, strict=True))
    span, bucket = report.time_range(), bucket_of(report)
    if span is not None and bucket is not None:
        parts = partial_buckets(span[0], span[1], bucket)
        attrs["partial_buckets"] = [p.to_dict() for p in parts]
        first = provisional_from(span[1], bucket, now)
        attrs["provisional_from"] = None if first is None else first.isoformat()
        if partial == "drop" and len(frame):
            from ..normalize.buckets import bucket_start

            low, high = whole_buckets(span[0], span[1], bucket)
            starts = bucket_start(frame)
            keep = ((starts >= low) & (starts + bucket <= high)).to_numpy()
            kept = frame[keep].reset_index(drop=True)
            kept.attrs = frame.attrs
            attrs["dropped_partial"] = int(len(frame) - len(kept))
            frame = kept
        attrs["partial"] = partial
    frame.attrs.update(attrs)
    return frame


def describe_partial(frame: pd.DataFrame) -> str | None:
    """One line naming the buckets the range covers only in part, or None.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame()
        >>> df.attrs = {"partial": "keep", "request": {"granularity": "DAY"}, "partial_buckets":
        ...             [{"start": "2022-06-30T00:00:00+00:00", "share": 0.229}]}
        >>> describe_partial(df).split(";")[0]
        'the range covers 1 DAY bucket only in part (2022-06-30T00:00Z: 23%)'
    """
    parts = frame.attrs.get("partial_buckets") or []
    if not parts or frame.attrs.get("partial") == "drop":
        return None
    grain = (frame.attrs.get("request") or {}).get("granularity") or "DAY"
    shown = ", ".join(f"{p['start'].replace(':00+00:00', 'Z')}: {p['share']:.0%}" for p in parts)
    noun = "bucket" if len(parts) == 1 else "buckets"
    return (
        f"the range covers {len(parts)} {grain} {noun} only in part ({shown}); "
        f"{'it is' if len(parts) == 1 else 'they are'} kept whole and count"
        f'{"s" if len(parts) == 1 else ""} time outside the range: pass partial="drop" to '
        "keep whole buckets only"
    )


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
    return f"no rows for {named}{span}{_after_present(frame)}"


def _after_present(frame: pd.DataFrame) -> str:
    """``": the range starts after the service's present (...)"`` when it does."""
    clock = frame.attrs.get("clock") or {}
    start = (frame.attrs.get("request") or {}).get("start_date_time")
    try:
        begin, now = datetime.fromisoformat(str(start)), datetime.fromisoformat(clock["now"])
    except (KeyError, TypeError, ValueError):
        return ""
    if begin.tzinfo is None or begin < now:
        return ""
    whose = "the service's present" if clock.get("source") == "service" else "the present"
    return f": the range starts after {whose} ({now.isoformat(timespec='seconds')})"


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
    partial = describe_partial(frame)
    if partial:
        warnings.warn(partial, PartialBucketWarning, stacklevel=stacklevel + 1)
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
