"""Period over period: the other period's rows aligned with a frame's.

``client.fetch(report, compare=...)`` pulls the other period (planned by
:func:`~.periods.plan_comparison`) in the same pull and :func:`align` adds
:data:`~edgereports.schema.COMPARE_COLUMNS` to the frame: each row meets the row of the other
period at the same offset (the same bucket count from the period's first bucket) with the same
account, echoed dimensions, metric, aggregation and percentile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..query.timegrid import epoch_micros, floor, micros, row_bucket_micros
from .periods import COMPARE_MODES, Comparison, plan_comparison

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COMPARE_MODES", "Comparison", "align", "plan_comparison"]


def align(frame: pd.DataFrame, other: pd.DataFrame, comparison: Comparison) -> pd.DataFrame:
    """``frame`` with the other period's rows (``other``) at the same offset, and the change.

    Returns:
        A new frame: ``frame``'s columns, then ``compare_time_stamp`` and ``compare_value``
        (null where the other period has no row), ``change`` (``value - compare_value``) and
        ``change_pct`` (the change in percent of ``|compare_value|``; null when that is 0).
        ``attrs["compare"]`` says which period it was (``mode``, ``start``, ``end``, its
        ``request``), how many rows had no counterpart on either side (``unmatched``,
        ``unmatched_other``) and the other period's ``partial_buckets``,
        ``provisional_from``, ``dropped_after_end`` and (with ``on_error="collect"``) its
        ``failures`` when it has them.
    """
    import numpy as np
    import pandas as pd

    from ..schema import FLOAT, STRING, TIMESTAMP, schema_for, shape_of

    facts = _facts(comparison, other)
    shape = shape_of(frame)
    spec = schema_for(shape)
    when = "time_stamp" if shape == "timeseries" else "start_time"
    dims = list(dict.fromkeys((*spec.dimensions_of(frame), *spec.dimensions_of(other))))
    keys = ["account_id", *dims, "metric", "aggregation"]
    if shape == "timeseries":
        keys.append("percentile")
    # Both periods' rows in one table: a key column one side lacks is null there, and a row
    # meets the row of the other side with the same series, offset and rank at that offset.
    rows = pd.concat(
        [
            df.assign(**{k: pd.Series(pd.NA, index=df.index, dtype=STRING) for k in keys
                         if k not in df})[keys]
            for df in (frame, other)
        ],
        ignore_index=True,
    )  # fmt: skip
    side = np.repeat([0, 1], [len(frame), len(other)])
    series = rows.groupby(keys, dropna=False, sort=False).ngroup().to_numpy()
    stamps = pd.concat([frame[when], other[when]], ignore_index=True)
    if comparison.bucket is not None and len(rows):
        step = micros(comparison.bucket)
        at = stamps.to_numpy(dtype="datetime64[us]").view("int64")
        starts = row_bucket_micros(at, comparison.bucket, at_end=comparison.at_end)
        first = [floor(t, comparison.bucket) for t in (comparison.start, comparison.other_start)]
        offset = (starts - np.where(side == 0, *(epoch_micros(t) for t in first))) // step
    else:  # no buckets: rows meet by their rank in time within their series
        ranks = stamps.groupby([side, series]).rank(method="first")
        offset = ranks.to_numpy(dtype="int64")
    # The n-th row of a series at an offset meets the other side's n-th (one, as a rule).
    ids = pd.DataFrame({"_series": series, "_offset": offset})
    sides = (ids[: len(frame)], ids[len(frame) :])  # grouped apart: cheaper than at once
    ids["_n"] = np.concatenate(
        [s.groupby(["_series", "_offset"], sort=False).cumcount() for s in sides]
    )
    theirs = ids[len(frame) :].assign(
        compare_time_stamp=other[when].array, compare_value=other["value"].to_numpy(float)
    )
    joined = ids[: len(frame)].merge(theirs, on=["_series", "_offset", "_n"], how="left")
    out = frame.copy()
    out["compare_time_stamp"] = pd.Series(
        joined["compare_time_stamp"].array, index=frame.index
    ).astype(TIMESTAMP)
    compare_value = joined["compare_value"].to_numpy(dtype=float)
    value = frame["value"].to_numpy(dtype=float)
    change = value - compare_value
    with np.errstate(divide="ignore", invalid="ignore"):
        pct = np.where(compare_value != 0, change / np.abs(compare_value) * 100.0, np.nan)
    out["compare_value"] = pd.Series(compare_value, index=frame.index, dtype=FLOAT)
    out["change"] = pd.Series(change, index=frame.index, dtype=FLOAT)
    out["change_pct"] = pd.Series(pct, index=frame.index, dtype=FLOAT)
    matched = int(joined["compare_time_stamp"].notna().sum())
    facts.update(unmatched=len(frame) - matched, unmatched_other=len(other) - matched)
    out.attrs.update(frame.attrs)
    out.attrs["compare"] = facts
    return out


def _facts(comparison: Comparison, other: pd.DataFrame) -> dict[str, Any]:
    """What ``attrs["compare"]`` says of the other period (the counts of unmatched rows are
    added once the rows have met)."""
    request = comparison.report.to_request()
    facts: dict[str, Any] = {
        "mode": comparison.mode,
        "start": request["start_date_time"],
        "end": request["end_date_time"],
        "request": request,
    }
    for name in ("partial_buckets", "provisional_from", "dropped_after_end", "failures"):
        if other.attrs.get(name):
            facts[name] = other.attrs[name]
    return facts
