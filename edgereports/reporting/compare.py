"""Period over period: the other period's report, and its rows aligned with a frame's.

``client.fetch(report, compare=...)`` pulls the other period through the same client and
:func:`align` adds :data:`~edgereports.schema.COMPARE_COLUMNS` to the frame: each row meets the
row of the other period at the same offset (the same bucket count from the period's first
bucket) with the same account, echoed dimensions, metric, aggregation and percentile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..errors import QueryError
from ..query import Report
from ..query.timegrid import floor
from .periods import COMPARE_MODES, previous_range
from .plan import bucket_of

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COMPARE_MODES", "Comparison", "align", "plan_comparison"]

_ALLOWED = "'previous_period', 'previous_year' or a (start, end) pair"


@dataclass(frozen=True)
class Comparison:
    """What a comparison compares: this period and the other one.

    Attributes:
        mode: ``"previous_period"``, ``"previous_year"`` or ``"range"`` (given by the caller).
        report: the other period's report (the same report over the other range).
        start: this period's start.
        other_start: the other period's start.
        bucket: the bucket length, or None for a report without buckets (rows then meet by
            their rank in time within their series).
    """

    mode: str
    report: Report
    start: datetime
    other_start: datetime
    bucket: timedelta | None


def plan_comparison(report: Report, compare: object) -> Comparison | None:
    """Check ``compare=`` and build the other period's report (before any request).

    Args:
        report: the report asked for.
        compare: None, ``"previous_period"``, ``"previous_year"`` or ``(start, end)`` (any
            value :meth:`Report.between` takes).

    Returns:
        The comparison, or None when ``compare`` is None.

    Raises:
        QueryError: an unknown value, a report ranged by time keywords (``NOW``,
            ``LAST ...``) or SIM counts; the message names ``compare`` and what it takes.
    """
    if compare is None:
        return None
    if isinstance(compare, str):
        if compare not in COMPARE_MODES:
            raise QueryError(f"compare must be {_ALLOWED}, got {compare!r}", field="compare")
    elif not (isinstance(compare, Sequence) and len(compare) == 2):
        raise QueryError(f"compare must be {_ALLOWED}, got {compare!r}", field="compare")
    span = report.time_range()
    if span is None:
        raise QueryError(
            "compare needs a report over a range of dates, not one written with time keywords "
            f"(NOW, LAST ...); got start={report.start!r}, end={report.end!r}",
            field="compare",
        )
    if report.metrics and all(m.name == "sim" for m in report.metrics):
        raise QueryError(
            "compare works on time series and current values, not on SIM counts",
            field="compare",
        )
    bucket = bucket_of(report)
    if isinstance(compare, str):
        other = report.between(*previous_range(compare, span[0], span[1], bucket))
        mode = compare
    else:
        try:
            other = report.between(compare[0], compare[1])
        except QueryError as exc:
            raise QueryError(f"compare: {exc}", field="compare") from None
        if other.time_range() is None:
            raise QueryError(
                f"compare takes dates, not time keywords; got {tuple(compare)!r}", field="compare"
            )
        mode = "range"
    other_span = other.time_range()
    assert other_span is not None
    return Comparison(mode, other, span[0], other_span[0], bucket)


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
