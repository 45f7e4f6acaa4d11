"""Period over period: the other period's rows aligned with a frame's.

``client.fetch(report, compare=...)`` pulls the other period (planned by
:func:`~.periods.plan_comparison`) in the same pull and :func:`align` adds
:data:`~edgereports.schema.COMPARE_COLUMNS` to the frame: each row meets the row of the other
period at the same offset (the same bucket count from the period's first bucket) with the same
account, echoed dimensions, metric, aggregation and percentile.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..errors import EdgeReportsError
from ..query.timegrid import floor
from .periods import COMPARE_MODES, Comparison, plan_comparison
from .results import FetchResult, settle

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COMPARE_MODES", "Comparison", "align", "align_pulled", "plan_comparison"]


def align_pulled(result: FetchResult, comparison: Comparison, on_error: str) -> pd.DataFrame:
    """The frame of a pull of both periods (report 0, then the other period's): the first
    settled (:func:`~.results.settle`) and aligned with the other (:func:`align`).

    Raises:
        PartialFailure, EdgeReportsError: as :meth:`ReportingClient.fetch` does; the other
            period's failures carry a note saying whose they are.
    """
    frame = settle(result, 0, on_error)
    try:
        if on_error == "collect" and result.frames[1] is None:  # no row of the other period
            other = frame.iloc[0:0].copy()
            other.attrs = {"failures": [f.to_dict() for f in result.failures_of(1)]}
        else:
            other = settle(result, 1, on_error)
    except EdgeReportsError as exc:
        exc.add_note(
            f"these failures are of the compared period ({comparison.mode}, report 1 of the "
            "pull); the report's own period was fetched"
        )
        raise
    return align(frame, other, comparison)


def align(frame: pd.DataFrame, other: pd.DataFrame, comparison: Comparison) -> pd.DataFrame:
    """``frame`` with the other period's rows at the same offset, and the change.

    Args:
        frame: this period's frame (time series or current values).
        other: the other period's frame (the same report over the other range).
        comparison: what :func:`plan_comparison` planned.

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

    from ..schema import FLOAT, TIMESTAMP, schema_for, shape_of

    shape = shape_of(frame)
    spec = schema_for(shape)
    when = "time_stamp" if shape == "timeseries" else "start_time"
    dims = list(dict.fromkeys((*spec.dimensions_of(frame), *spec.dimensions_of(other))))
    keys = ["account_id", *dims, "metric", "aggregation"]
    if shape == "timeseries":
        keys.append("percentile")
    series = _series_ids(frame, other, keys)
    mine = _keyed(frame, series[: len(frame)], when, comparison.start, comparison)
    theirs = _keyed(other, series[len(frame) :], when, comparison.other_start, comparison)
    theirs = theirs.rename(columns={when: "compare_time_stamp", "value": "compare_value"})
    on = ["_series", "_offset", "_n"]  # unique on each side, by construction
    joined = mine[on].merge(theirs, on=on, how="left", sort=False)
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
    out.attrs.update(frame.attrs)
    out.attrs["compare"] = _facts(comparison, other, len(frame) - matched, len(other) - matched)
    return out


def _series_ids(frame: pd.DataFrame, other: pd.DataFrame, keys: list[str]) -> Any:
    """One integer per series (the ``keys``' values) over the rows of both frames, in order;
    a column one frame lacks is null there, and nulls meet nulls."""
    import pandas as pd

    from ..schema import STRING

    def columns(df: pd.DataFrame) -> pd.DataFrame:
        missing = {k: pd.Series(pd.NA, index=df.index, dtype=STRING) for k in keys if k not in df}
        return df.assign(**missing)[keys]

    both = pd.concat([columns(frame), columns(other)], ignore_index=True)
    return both.groupby(keys, dropna=False, sort=False).ngroup().to_numpy()


def _keyed(
    frame: pd.DataFrame, series: Any, when: str, start: datetime, comparison: Comparison
) -> pd.DataFrame:
    """Each row's series, offset (and rank among rows of one series at one offset), time and
    value."""
    import pandas as pd

    out = pd.DataFrame({"_series": series}, index=frame.index)
    stamps = frame[when]
    if comparison.bucket is not None and len(frame):
        out["_offset"] = _offsets(frame, start, comparison.bucket)
    else:  # no buckets: rows meet by their rank in time within their series
        out["_offset"] = stamps.groupby(series).rank(method="first").astype("int64")
    # Two rows of one series in one bucket (not expected): the n-th meets the n-th.
    out["_n"] = out.groupby(["_series", "_offset"], sort=False).cumcount()
    out[when] = stamps
    out["value"] = frame["value"].astype(float)
    return out.reset_index(drop=True)


def _offsets(frame: pd.DataFrame, start: datetime, bucket: timedelta) -> pd.Series:
    """Each row's bucket count from the bucket holding ``start``: the bucket a row covers
    (:func:`~edgereports.normalize.bucket_start`: a v2 row, stamped at the end of its piece,
    covers the bucket before its stamp)."""
    import pandas as pd

    from ..normalize.buckets import bucket_start

    first = pd.Timestamp(floor(start, bucket))
    return ((bucket_start(frame) - first) // pd.Timedelta(bucket)).astype("int64")


def _facts(comparison: Comparison, other: pd.DataFrame, mine: int, theirs: int) -> dict[str, Any]:
    request = comparison.report.to_request()
    facts: dict[str, Any] = {
        "mode": comparison.mode,
        "start": request["start_date_time"],
        "end": request["end_date_time"],
        "request": request,
        "unmatched": mine,
        "unmatched_other": theirs,
    }
    for name in ("partial_buckets", "provisional_from", "dropped_after_end", "failures"):
        if other.attrs.get(name):
            facts[name] = other.attrs[name]
    return facts
