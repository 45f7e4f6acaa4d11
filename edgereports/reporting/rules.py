"""What a fetched frame says about itself: top talkers, empty results, time (its ``attrs``).

Applied once per report after its parts are assembled, from the report's facts (the rules are
in docs/design.md, "Time" and "Top talkers"; the range rule is applied with ownership, in
:mod:`.assemble`). What the code relies on:

- a filter is *empty* only when it matched nothing over the whole range; an empty window
  inside a range with data is normal and says nothing;
- a current value (``NOW``) for a device the account does not have at that time (an unknown
  IMSI or MSISDN, a SIM not yet or no longer active) comes back with the device's id and none
  of its attributes (eNodeB, UE IP, LR id): an unknown device, not an offline one, so its row
  is dropped and named in ``df.attrs["not_on_account"]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..normalize.buckets import bucket_start
from ..query.timegrid import partial_buckets, provisional_from, whole_buckets
from .plan import ReportFacts

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PARTIAL",
    "check_partial",
    "mark",
    "mark_time",
    "not_on_account",
]

#: What a device has besides its ids: null in a current value for a device not on the account.
_ATTRIBUTES = ("enodeb_ip", "ue_ip", "lr_id")

#: What ``partial=`` takes: keep the buckets a range covers in part (named), drop them, or
#: keep them and prorate a comparison's other value where the shares of time differ.
PARTIAL = ("keep", "drop", "prorate")


def check_partial(partial: object) -> str:
    """Return ``partial`` when it is ``"keep"``, ``"drop"`` or ``"prorate"``.

    Raises:
        InputError: any other value (named, with the allowed ones).
    """
    if partial not in PARTIAL:
        raise InputError(f"partial must be 'keep', 'drop' or 'prorate', got {partial!r}")
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
    (:func:`mark_time`). ``empty_values`` are the fan-out values whose parts all succeeded
    without a row; ``dropped`` counts the rows the range rule dropped.

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
            starts = bucket_start(frame)
            keep = ((starts >= low) & (starts + bucket <= high)).to_numpy()
            kept = frame[keep].reset_index(drop=True)
            kept.attrs = frame.attrs
            attrs["dropped_partial"] = int(len(frame) - len(kept))
            frame = kept
        attrs["partial"] = partial
    frame.attrs.update(attrs)
    return frame
