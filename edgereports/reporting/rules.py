"""What a fetched frame says about itself: top talkers, empty results, time (its ``attrs``).

Applied once per report after its parts are assembled (docs/design.md, "Time"
and "Top talkers"), from the report's facts (:class:`~.plan.ReportFacts`):

- **range** (applied with ownership, :mod:`.assemble`): a report with buckets keeps exactly
  the buckets that overlap ``[start, end)``; ``df.attrs["dropped_after_end"]`` counts the
  buckets the service added at or after ``end``.
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

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .._dependencies import lazy_import
from ..errors import InputError
from ..query.timegrid import partial_buckets, provisional_from, whole_buckets
from .plan import ReportFacts

if TYPE_CHECKING:
    import pandas as pd

# the frame side (pandas) loads with the first frame, not with the client
_buckets = lazy_import("edgereports.normalize.buckets")

__all__ = [
    "PARTIAL",
    "check_partial",
    "mark",
    "mark_time",
    "not_on_account",
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


def mark(
    frame: pd.DataFrame,
    facts: ReportFacts,
    dropped: int,
    empty_values: Sequence[Mapping[str, Any]],
    clock: tuple[datetime, str],
    partial: str = "keep",
) -> pd.DataFrame:
    """Apply the rules to a report's assembled frame and say in ``frame.attrs`` what it is.

    Drops the rows of devices not on the account (:func:`not_on_account`), sets
    ``top_talker``, ``dropped_after_end``, ``not_on_account`` and ``empty``, then the time
    (:func:`mark_time`).

    Args:
        frame: the report's assembled frame (its ``attrs`` changed in place).
        facts: the report's facts.
        dropped: rows dropped by the range rule.
        empty_values: the fan-out values (``{dimension: value}``) whose parts all succeeded
            without a row.
        clock: the present the pull is judged by, and which clock gave it.
        partial: ``"keep"`` or ``"drop"``.

    Returns:
        The frame (a new one when rows were dropped).
    """
    frame, absent = not_on_account(frame, facts)
    frame.attrs["top_talker"] = list(facts.top_talker)
    frame.attrs["dropped_after_end"] = dropped
    frame.attrs["not_on_account"] = absent
    if absent and not len(frame):
        frame.attrs["empty"] = []  # the warning names the devices
    elif not len(frame):
        frame.attrs["empty"] = [dict(facts.filters)]
    else:
        frame.attrs["empty"] = [dict(v) for v in empty_values]
    return mark_time(frame, facts, *clock, partial)


def not_on_account(frame: pd.DataFrame, facts: ReportFacts) -> tuple[pd.DataFrame, list[str]]:
    """Drop the current-value rows of devices the account does not have at that time.

    A row is such a device's when the report filters on a device id (``imsi``, ``msisdn``)
    and every device attribute the frame has (``enodeb_ip``, ``ue_ip``, ``lr_id``) is null.

    Args:
        frame: the report's assembled frame.
        facts: the report's facts.

    Returns:
        The frame without those rows, and the devices named (``imsi=...``), in row order.
    """
    if not len(frame) or "start_time" not in frame.columns:
        return frame, []
    ids = list(facts.devices)
    attributes = [a for a in _ATTRIBUTES if a in frame.columns]
    if not ids or not attributes:
        return frame, []
    gone = frame[attributes].isna().all(axis=1)
    if not gone.any():
        return frame, []
    shown = [d for d in ids if d in frame.columns]
    named = [
        _device(facts, ids, row) for row in frame.loc[gone, shown].astype(object).to_dict("records")
    ]
    kept = frame.loc[~gone].reset_index(drop=True)
    kept.attrs = frame.attrs
    return kept, list(dict.fromkeys(named))


def _device(facts: ReportFacts, ids: list[str], row: Mapping[Any, Any]) -> str:
    """The device a row speaks for: its echoed id, or the report's one id filter value."""
    for d in ids:
        value = row.get(d)
        if value is not None and value == value:
            return f"{d}={value}"
    for d in ids:
        values = list(dict.fromkeys(facts.devices[d]))
        if len(values) == 1:
            return f"{d}={values[0]}"
    return "a device"


def mark_time(
    frame: pd.DataFrame, facts: ReportFacts, now: datetime, source: str, partial: str = "keep"
) -> pd.DataFrame:
    """Say in ``frame.attrs`` how the report's range lies on the time grid and the present.

    Sets ``clock`` (``{"now", "source"}``: ``"service"`` or ``"local"``), ``relative`` (the
    relative dates the range was written with, when it was), ``partial_buckets`` (each bucket
    the range covers in part, with the share inside it) and ``provisional_from`` (the start of
    the bucket holding the present, when the range reaches it; else None). With ``partial=
    "drop"`` the rows of partial buckets go, counted in ``dropped_partial``.

    Args:
        frame: the report's assembled frame.
        facts: the report's facts, its relative dates resolved.
        now: the present the pull is judged by.
        source: which clock gave ``now``.
        partial: ``"keep"`` or ``"drop"``.

    Returns:
        The frame (a new one when rows were dropped).
    """
    attrs: dict[str, Any] = {"clock": {"now": now.isoformat(), "source": source}}
    if facts.relative:
        attrs["relative"] = dict(zip(("start", "end"), facts.relative, strict=True))
    span, bucket = facts.span, facts.bucket
    if span is not None and bucket is not None:
        parts = partial_buckets(span[0], span[1], bucket)
        attrs["partial_buckets"] = [p.to_dict() for p in parts]
        first = provisional_from(span[1], bucket, now)
        attrs["provisional_from"] = None if first is None else first.isoformat()
        if partial == "drop" and len(frame):
            low, high = whole_buckets(span[0], span[1], bucket)
            starts = _buckets.bucket_start(frame)
            keep = ((starts >= low) & (starts + bucket <= high)).to_numpy()
            kept = frame[keep].reset_index(drop=True)
            kept.attrs = frame.attrs
            attrs["dropped_partial"] = int(len(frame) - len(kept))
            frame = kept
        attrs["partial"] = partial
    frame.attrs.update(attrs)
    return frame
