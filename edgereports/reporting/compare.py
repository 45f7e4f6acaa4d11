"""Period over period (and cohort against cohort): the other rows aligned with a frame's.

``client.fetch(report, compare=...)`` pulls the other periods (planned by
:func:`~.periods.plan_comparison`) in the same pull, and :func:`align` adds
:data:`~edgereports.schema.COMPARE_COLUMNS` to the frame: each row meets the other period's row
at the same offset from its range's start (the time grid's rule,
:func:`edgereports.query.periods.counterparts`) with the same account, echoed dimensions,
metric, aggregation and percentile (a cohort's own dimension aside).

A change is computed only between like and like: where the two rows' values hold the same share
of their buckets' time. A partial bucket (the range covers it in part) or a provisional one
(it holds the service's present) on either side marks the row (``compare_partial``); where the
shares differ (today so far against a whole day) the change stays null, unless
``partial="prorate"``, which scales the other period's COUNT (a total over time) by the ratio
of the shares and says so in ``attrs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..query.periods import counterparts, covered_share, fixed_gap
from ..query.timegrid import (
    epoch_micros,
    floor,
    micros,
    partial_buckets,
    provisional_from,
    row_bucket_micros,
)
from .periods import COMPARE_MODES, Comparison, Other, plan_comparison

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["COMPARE_MODES", "Comparison", "align", "plan_comparison"]

_NONE = -(2**63)  # the key of a row whose counterpart does not exist: it meets nothing
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def align(
    frame: pd.DataFrame,
    others: Sequence[pd.DataFrame],
    comparison: Comparison,
    *,
    partial: str = "keep",
) -> pd.DataFrame:
    """``frame`` with each other period's row at the same offset, and the change.

    Args:
        frame: this period's frame.
        others: the other periods' frames, in the order of ``comparison.others``.
        comparison: what is compared.
        partial: ``"prorate"`` scales the other period's COUNT where the two rows hold
            different shares of their buckets' time; else such a change stays null.

    Returns:
        A new frame: ``frame``'s columns, then for several periods ``period`` (``cohort`` for
        cohorts; one block of ``frame``'s rows per period, in the order asked), then
        ``compare_time_stamp`` and ``compare_value`` (null where the other period has no row),
        ``change`` (``value - compare_value``), ``change_pct`` (in percent of
        ``|compare_value|``; null when that is 0), both null where the rows are not like for
        like, and ``compare_partial``. ``attrs["compare"]`` names this range, and per other
        period its rule, range and request, its rows without a counterpart and its own
        notes (see docs "Comparing periods").
    """
    import pandas as pd

    from ..schema import STRING

    now = _now(frame)
    blocks, facts = [], []
    for other_frame, other in zip(others, comparison.others, strict=True):
        block, said = _compare(frame, other_frame, comparison, other, now, partial)
        if comparison.column is not None:
            block.insert(len(frame.columns), comparison.column,
                         pd.Series(other.name, index=block.index, dtype=STRING))  # fmt: skip
        blocks.append(block)
        facts.append(said)
    out = blocks[0] if len(blocks) == 1 else pd.concat(blocks, ignore_index=True)
    out.attrs.update(frame.attrs)
    request = comparison.report.to_request()
    summary: dict[str, Any] = {
        "range": {"start": request["start_date_time"], "end": request["end_date_time"]},
        "partial": partial,
        "column": comparison.column,
        "others": facts,
    }
    if comparison.by is not None:
        summary.update(by=comparison.by, base=comparison.base)
    if comparison.column is None:  # one period: its facts at the top, as they always were
        summary.update(facts[0])
    out.attrs["compare"] = summary
    return out


def _compare(
    frame: pd.DataFrame,
    other_frame: pd.DataFrame,
    comparison: Comparison,
    other: Other,
    now: datetime | None,
    partial: str,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """``frame`` with the comparison's columns for one other period, and what to say of it."""
    import numpy as np
    import pandas as pd

    from ..schema import FLOAT, TIMESTAMP

    when = "time_stamp" if "time_stamp" in frame.columns else "start_time"
    at = _meet(frame, other_frame, comparison, other)
    matched = at >= 0
    taken = np.where(matched, at, 0)
    stamps = other_frame[when].array.take(at, allow_fill=True) if len(other_frame) else None
    raw = other_frame["value"].to_numpy(dtype=float)
    compare_value = np.where(matched, raw[taken] if len(raw) else np.nan, np.nan)
    share, marked = _time_facts(frame, comparison, comparison.start, comparison.end, now)
    share_o, marked_o = _time_facts(other_frame, comparison, other.start, other.end, now)
    if len(other_frame):
        share_o, marked_o = share_o[taken], marked_o[taken] & matched
    else:
        share_o, marked_o = np.ones(len(frame)), np.zeros(len(frame), dtype=bool)
    alike = matched & np.isclose(share, share_o, rtol=0, atol=1e-9)
    prorated = np.zeros(len(frame), dtype=bool)
    if partial == "prorate":
        totals = frame["aggregation"].astype(object).to_numpy() == "COUNT"
        prorated = matched & ~alike & totals & (share_o > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            compare_value = np.where(prorated, compare_value * share / share_o, compare_value)
    compared = alike | prorated
    value = frame["value"].to_numpy(dtype=float)
    change = np.where(compared, value - compare_value, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        pct = np.where(compare_value != 0, change / np.abs(compare_value) * 100.0, np.nan)
    out = frame.copy()
    if stamps is None:
        out["compare_time_stamp"] = pd.Series(pd.NaT, index=frame.index, dtype=TIMESTAMP)
    else:
        out["compare_time_stamp"] = pd.Series(stamps, index=frame.index).astype(TIMESTAMP)
    out["compare_value"] = pd.Series(compare_value, index=frame.index, dtype=FLOAT)
    out["change"] = pd.Series(change, index=frame.index, dtype=FLOAT)
    out["change_pct"] = pd.Series(pct, index=frame.index, dtype=FLOAT)
    out["compare_partial"] = pd.Series(marked | marked_o, index=frame.index, dtype=bool)
    hits = int(matched.sum())
    facts = _facts(other, other_frame)
    facts.update(
        unmatched=len(frame) - hits,
        unmatched_other=len(other_frame) - hits,
        partial_rows=int(out["compare_partial"].sum()),
        not_alike=int((matched & ~compared).sum()),
    )
    if partial == "prorate":
        facts["prorated"] = int(prorated.sum())
    return out, facts


def _meet(
    frame: pd.DataFrame, other: pd.DataFrame, comparison: Comparison, period: Other
) -> np.ndarray:
    """Per row of ``frame``, the position in ``other`` of the row it meets, or -1."""
    import numpy as np
    import pandas as pd

    from ..schema import STRING, schema_for, shape_of

    spec = schema_for(shape_of(frame))
    when = "time_stamp" if "time_stamp" in frame.columns else "start_time"
    dims = list(dict.fromkeys((*spec.dimensions_of(frame), *spec.dimensions_of(other))))
    keys = [k for k in ("account_id", *dims, "metric", "aggregation") if k != comparison.by]
    if "percentile" in frame.columns:
        keys.append("percentile")
    # Both periods' rows in one table: a key column one side lacks is null there, and a row
    # meets the row of the other side with the same series, key and rank at that key.
    rows = pd.concat(
        [
            df.assign(**{k: pd.Series(pd.NA, index=df.index, dtype=STRING) for k in keys
                         if k not in df})[keys]
            for df in (frame, other)
        ],
        ignore_index=True,
    )  # fmt: skip
    series = rows.groupby(keys, dropna=False, sort=False).ngroup().to_numpy()
    bucket = comparison.bucket
    if bucket is not None and period.start is not None and comparison.start is not None:
        mine, theirs = (_bucket_micros(df, when, comparison) for df in (frame, other))
        key = np.concatenate([_met(mine, comparison, period), theirs])
    else:  # no buckets: rows meet by their rank in time within their series
        stamps = pd.concat([frame[when], other[when]], ignore_index=True)
        side = np.repeat([0, 1], [len(frame), len(other)])
        key = stamps.groupby([side, series]).rank(method="first").to_numpy(dtype="int64")
    ids = pd.DataFrame({"_series": series, "_key": key})
    cut = len(frame)
    ids["_n"] = np.concatenate([_rank(series[:cut], key[:cut]), _rank(series[cut:], key[cut:])])
    theirs_ids = ids[len(frame) :].assign(_at=np.arange(len(other)))
    joined = ids[: len(frame)].merge(theirs_ids, on=["_series", "_key", "_n"], how="left")
    at: np.ndarray = joined["_at"].fillna(-1).to_numpy(dtype="int64")
    return at


def _rank(series: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Per row, how many rows before it (in order) have its series and key: 0 as a rule."""
    import numpy as np

    order = np.lexsort((key, series))  # stable: equal pairs keep their order
    pairs_s, pairs_k = series[order], key[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (pairs_s[1:] != pairs_s[:-1]) | (pairs_k[1:] != pairs_k[:-1])
    positions = np.arange(len(order))
    first = np.maximum.accumulate(np.where(new, positions, 0))
    rank = np.empty(len(order), dtype="int64")
    rank[order] = positions - first
    return rank


def _bucket_micros(df: pd.DataFrame, when: str, comparison: Comparison) -> np.ndarray:
    """The start (microseconds, UTC) of the bucket each row covers."""
    assert comparison.bucket is not None
    stamps = df[when].to_numpy(dtype="datetime64[us]").view("int64")
    starts: np.ndarray = row_bucket_micros(stamps, comparison.bucket, at_end=comparison.at_end)
    return starts


def _met(starts: np.ndarray, comparison: Comparison, period: Other) -> np.ndarray:
    """The bucket (microseconds) of the other period that each of ``starts`` meets
    (:data:`_NONE` where there is none)."""
    import numpy as np

    if period.shift is None:  # a cohort: the same range, bucket for bucket
        return starts
    bucket = comparison.bucket
    assert bucket is not None and comparison.start is not None and period.start is not None
    first, other_first = floor(comparison.start, bucket), floor(period.start, bucket)
    gap = fixed_gap(bucket, comparison.zone, period.shift, first, other_first)
    if gap is not None:  # the same distance for every bucket
        moved: np.ndarray = starts - micros(gap)
        return moved
    grid, at = _grid(starts, bucket)
    met = counterparts(grid, bucket, comparison.zone, period.shift, first, other_first)
    table = np.array([_NONE if m is None else epoch_micros(m) for m in met], dtype="int64")
    found: np.ndarray = table[at]
    return found


def _time_facts(
    df: pd.DataFrame,
    comparison: Comparison,
    start: datetime | None,
    end: datetime | None,
    now: datetime | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the share of its bucket's time its value holds, and whether its bucket is
    partial (the range covers it in part) or provisional (it holds the present)."""
    import numpy as np

    n = len(df)
    if start is None or end is None:  # time keywords (a cohort of NOW): the same window
        return np.ones(n), np.zeros(n, dtype=bool)
    bucket = comparison.bucket
    if bucket is None or n == 0:  # one value over the range
        share = covered_share(start, end - start, start, end, now, pieces=True)
        late = now is not None and end > now
        return np.full(n, share), np.full(n, late, dtype=bool)
    when = "time_stamp" if "time_stamp" in df.columns else "start_time"
    starts = _bucket_micros(df, when, comparison)
    shares, marks = np.ones(n), np.zeros(n, dtype=bool)
    # only the partial buckets and those from the present on are not whole and final
    special = [p.start for p in partial_buckets(start, end, bucket)]
    first = provisional_from(end, bucket, now) if now is not None else None
    if first is not None:
        marks |= starts >= epoch_micros(first)
        special += [_moment(int(t)) for t in np.unique(starts[marks])]
    for moment in dict.fromkeys(special):
        rows = starts == epoch_micros(moment)
        shares[rows] = covered_share(moment, bucket, start, end, now, pieces=comparison.at_end)
        marks |= rows
    return shares, marks


def _grid(starts: np.ndarray, bucket: timedelta) -> tuple[list[datetime], np.ndarray]:
    """The buckets from the first of ``starts`` (microseconds, bucket starts) to the last, and
    the position of each start among them: a rule is worked out once per bucket, not per row."""

    step = micros(bucket)
    low, high = int(starts.min()), int(starts.max())
    grid = [_moment(t) for t in range(low, high + 1, step)]
    at: np.ndarray = (starts - low) // step
    return grid, at


def _moment(stamp: int) -> datetime:
    """An instant from microseconds since the epoch (UTC)."""
    return _EPOCH + timedelta(microseconds=stamp)


def _now(frame: pd.DataFrame) -> datetime | None:
    """The service's present the pull was judged by (``attrs["clock"]``), if it says."""
    clock = frame.attrs.get("clock")
    text = clock.get("now") if isinstance(clock, dict) else None
    try:
        return datetime.fromisoformat(text) if isinstance(text, str) else None
    except ValueError:
        return None


def _facts(other: Other, other_frame: pd.DataFrame) -> dict[str, Any]:
    """What ``attrs["compare"]`` says of one other period (the counts of rows are added once
    the rows have met)."""
    request = other.report.to_request()
    facts: dict[str, Any] = {
        "name": other.name,
        "mode": other.mode,
        "rule": other.rule,
        "start": request["start_date_time"],
        "end": request["end_date_time"],
        "shift": None if other.shift is None else other.shift.to_dict(),
        "request": request,
    }
    if other.cohort is not None:
        facts["cohort"] = other.cohort
    for name in ("partial_buckets", "provisional_from", "dropped_after_end", "failures"):
        if other_frame.attrs.get(name):
            facts[name] = other_frame.attrs[name]
    return facts
