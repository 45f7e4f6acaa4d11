"""Planning a pull: which requests one report becomes.

Two steps, in this order:

1. **Fan-out** (:func:`branches`): a report grouped by a dimension whose filter lists several
   values is sent once per value (the service echoes one value per answer); a report whose
   answer would hold two indistinguishable parts (the same metric twice with PERCENTILE
   filters, or twice in a ``NOW`` report) is split into requests whose metrics the answer tells
   apart (:func:`metric_groups`).
2. **Windows** (:func:`plan_windows`): a long range is split on UTC bucket boundaries (DAY
   buckets at 00:00Z, HOUR buckets on whole UTC hours). A plan covers ``[start, end)`` exactly,
   with no gap and no overlap: the first window starts at the user's start, the last ends at
   the user's end, and every boundary in between is a bucket boundary, written in the offset of
   the user's start.

:func:`plan_parts` puts both together: per branch, one :class:`Part` (one request) per window.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ..errors import InputError
from ..query import Report
from ..query.pinning import unpinned_dimensions
from ..query.terms import Expression, Metric
from ..query.timegrid import BUCKETS, bucket_length, floor

__all__ = [
    "BUCKETS",
    "DEFAULT_POINTS",
    "MAX_WINDOW",
    "Branch",
    "Part",
    "Window",
    "branches",
    "bucket_of",
    "budget_window",
    "metric_groups",
    "plan_parts",
    "plan_windows",
    "split_window",
    "window_plan",
    "window_points",
]

# -- windows --------------------------------------------------------------------------------------

#: The default points budget of one request (buckets x metrics). The service documents no
#: range limit, so it is conservative; an answer that says a request is too large makes the
#: client split that part and learn a smaller budget.
DEFAULT_POINTS = 100_000
#: The longest default window, whatever the budget: a year (and a day for leap years).
MAX_WINDOW = timedelta(days=366)


@dataclass(frozen=True)
class Window:
    """One window of a plan: ``[start, end)`` and its place in the plan.

    Attributes:
        start: tz-aware start (the user's start for the first window).
        end: tz-aware end (the user's end for the last window).
        index: position in the plan, from 0.
        count: number of windows in the plan.
    """

    start: datetime
    end: datetime
    index: int = 0
    count: int = 1

    def __str__(self) -> str:
        return (
            f"window {self.index + 1}/{self.count} {self.start.isoformat()}..{self.end.isoformat()}"
        )


def plan_windows(
    start: datetime, end: datetime, *, bucket: timedelta, size: timedelta
) -> list[Window]:
    """Split ``[start, end)`` into windows of ``size`` whose inner boundaries are bucket starts.

    The first boundary is the first multiple of ``size`` past the bucket holding ``start``
    (counted from that bucket's start), so every inner boundary lies on a bucket boundary.

    Args:
        start: tz-aware range start.
        end: tz-aware range end, after ``start``.
        bucket: the bucket length (1 hour or 1 day).
        size: the window length, a positive whole number of buckets.

    Returns:
        The windows, in order; inner boundaries are in ``start``'s time zone.

    Raises:
        InputError: naive or unordered bounds, or a size that is not a whole number of buckets.

    Example:
        >>> from datetime import datetime, timedelta
        >>> ws = plan_windows(datetime.fromisoformat("2022-07-07T09:50:00+05:30"),
        ...                   datetime.fromisoformat("2022-07-10T09:50:00+05:30"),
        ...                   bucket=timedelta(days=1), size=timedelta(days=1))
        >>> [str(w.end) for w in ws]
        ['2022-07-08 05:30:00+05:30', '2022-07-09 05:30:00+05:30', '2022-07-10 05:30:00+05:30', \
'2022-07-10 09:50:00+05:30']
    """
    for name, value in (("start", start), ("end", end)):
        if value.tzinfo is None or value.utcoffset() is None:
            raise InputError(f"window planning needs a tz-aware {name}, got {value.isoformat()}")
    if start >= end:
        raise InputError(f"range start {start.isoformat()} must be before end {end.isoformat()}")
    if bucket <= timedelta(0) or size < bucket or size % bucket:
        raise InputError(
            f"window {size} must be a positive whole number of buckets of {bucket} "
            f"(e.g. timedelta(days=7))"
        )
    zone = start.tzinfo
    bounds = [start]
    boundary = floor(start, bucket) + size
    while boundary < end:
        bounds.append(boundary.astimezone(zone))
        boundary += size
    bounds.append(end)
    count = len(bounds) - 1
    return [Window(bounds[i], bounds[i + 1], i, count) for i in range(count)]


def bucket_of(report: Report) -> timedelta | None:
    """The bucket length of a report that is split into windows, else None.

    Reports with a granularity of known alignment (HOUR, DAY) and SIM counts (metric ``sim``
    without granularity: daily) are windowed; NOW/LAST reports, single values over a range
    (e.g. PERCENTILE) and unknown granularities are sent whole. A v2 report without a
    granularity is HOUR (the service's default).
    """
    if report.time_range() is None:
        return None
    if report.grain is None and report.api_version == "v2":
        return BUCKETS["HOUR"]
    daily = bool(report.metrics) and all(m.name == "sim" for m in report.metrics)
    return bucket_length(report.grain, daily=daily)


def window_plan(
    report: Report, window: timedelta | None = None, *, points: int = DEFAULT_POINTS
) -> list[Window] | None:
    """Plan the windows of ``report``; None when it is sent whole.

    Args:
        report: a valid report.
        window: the window length; by default as many buckets as ``points`` allows for the
            report's metrics (:func:`budget_window`).
        points: the budget of one request in points (buckets x metrics).

    Returns:
        The windows (one when the range fits in one), or None for a report sent whole.

    Raises:
        InputError: ``window`` is not a positive whole number of the report's buckets.

    Example:
        >>> r = (Report(account_id="A").between("2024-01-01", "2024-04-01").granularity("HOUR")
        ...      .metric("uplink_bytes", "COUNT").metric("downlink_bytes", "COUNT"))
        >>> len(window_plan(r)), len(window_plan(r, points=1_000))
        (1, 5)
    """
    bucket = bucket_of(report)
    span = report.time_range()
    if bucket is None or span is None:
        return None
    if window is None:
        window = budget_window(report, bucket, points)
    return plan_windows(span[0], span[1], bucket=bucket, size=window)


def budget_window(report: Report, bucket: timedelta, points: int) -> timedelta:
    """The longest window of whole buckets whose answer holds at most ``points`` points.

    At least one bucket; at most :data:`MAX_WINDOW`.
    """
    buckets = max(1, points // max(1, len(report.metrics)))
    return max(bucket, min(bucket * buckets, MAX_WINDOW // bucket * bucket))


def window_points(report: Report, window: Window, bucket: timedelta) -> int:
    """The points (buckets x metrics) an answer for ``window`` holds at most."""
    first = floor(window.start, bucket)
    buckets = -((first - window.end.astimezone(UTC)) // bucket)
    return buckets * max(1, len(report.metrics))


def split_window(window: Window, bucket: timedelta, size: timedelta) -> list[Window]:
    """``window`` cut into windows of ``size`` on bucket boundaries, numbered so that only a
    piece at the pull's own start (or end) counts as its first (or last) window."""
    pieces = plan_windows(window.start, window.end, bucket=bucket, size=size)
    count = window.count + len(pieces) - 1
    return [Window(p.start, p.end, window.index + i, count) for i, p in enumerate(pieces)]


# -- fan-out --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Branch:
    """One fan-out branch of a report.

    Attributes:
        report: the report this branch sends (one value per fanned-out dimension).
        values: the fanned-out ``(dimension, value)`` pairs (empty when none).
        metrics: the names of this branch's metrics when the report was split by metric.
        group: the metric group's position (0 when not split).
    """

    report: Report
    values: tuple[tuple[str, Expression], ...] = ()
    metrics: tuple[str, ...] | None = None
    group: int = 0

    def __str__(self) -> str:
        parts = [f"{dim}={value}" for dim, value in self.values]
        if self.metrics is not None:
            parts.append(f"metrics={','.join(self.metrics)}")
        return ", ".join(parts)


def _answer_key(metric: Metric, is_now: bool) -> tuple[str, str | None]:
    """How the answer names the metric: NOW answers by name alone; PERCENTILE has no agg."""
    if is_now:
        return (metric.name, None)
    if metric.percentile is not None:
        return (metric.name, None)
    return (metric.name, metric.aggregation_type)


def metric_groups(report: Report) -> list[tuple[Metric, ...]]:
    """Split the metrics into groups whose answers are distinguishable (first fit, in order).

    Example:
        >>> r = Report(account_id="A").now().metric("ue_connections", "MAX")
        >>> [len(g) for g in metric_groups(r.metric("ue_connections", "AVG"))]
        [1, 1]
    """
    groups: list[list[Metric]] = []
    keys: list[set[tuple[str, str | None]]] = []
    for metric in report.metrics:
        key = _answer_key(metric, report.is_now)
        for group, seen in zip(groups, keys, strict=True):
            if key not in seen:
                group.append(metric)
                seen.add(key)
                break
        else:
            groups.append([metric])
            keys.append({key})
    return [tuple(g) for g in groups]


def _fanned_values(report: Report) -> list[tuple[str, tuple[Expression, ...]]]:
    """The grouped-by dimensions whose EXACT filters list several distinct values."""
    out = []
    for dim in report.dimensions or ():
        seen: dict[str, Expression] = {}
        for value in report.filter_values(dim):
            seen.setdefault(str(value).strip(), value)
        if len(seen) > 1:
            out.append((dim, tuple(seen.values())))
    return out


def branches(report: Report) -> list[Branch]:
    """The requests ``report`` fans out into, in order (the report itself when none).

    Each fanned-out dimension's filter is replaced by one value (the product when several
    dimensions fan out); each metric group of :func:`metric_groups` is its own request.

    Example:
        >>> r = (Report(account_id="A").between("2022-07-07", "2022-07-08").granularity("DAY")
        ...      .by("msisdn").where(msisdn=["91", "92"]).metric("time_usage_seconds", "COUNT"))
        >>> [str(b) for b in branches(r)]
        ['msisdn=91', 'msisdn=92']
    """
    fanned = _fanned_values(report)
    groups = metric_groups(report)
    split = len(groups) > 1
    out: list[Branch] = []
    for combo in itertools.product(*[[(dim, v) for v in values] for dim, values in fanned]):
        base = report.where(**dict(combo)) if combo else report
        for index, group in enumerate(groups):
            sub = dataclasses.replace(base, metrics=group) if split else base
            names = tuple(m.name for m in group) if split else None
            out.append(Branch(sub, tuple(combo), names, index))
    return out


# -- parts ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One request of a pull: a report's branch (fan-out value) in one window."""

    report: int
    branch: int
    fan: Branch
    window: Window | None
    sent: Report

    def __str__(self) -> str:
        items = [str(self.window)] if self.window is not None else []
        if self.fan.values or self.fan.metrics is not None:
            items.append(str(self.fan))
        return "; ".join(items) or "report"


def _windowed(report: Report, window: Window | None) -> Report:
    """The report restricted to ``window``; the first and last keep the user's own bounds."""
    if window is None or window.count == 1:
        return report
    start = report.start if window.index == 0 else window.start
    end = report.end if window.index == window.count - 1 else window.end
    assert start is not None and end is not None
    return report.between(start, end)


def plan_parts(
    index: int, report: Report, window: timedelta | None, *, points: int = DEFAULT_POINTS
) -> list[list[Part]]:
    """The requests of report number ``index``: per fan-out branch, one per window.

    A branch grouped by a dimension no filter pins is sent whole: which member tops the list
    (the top talker) depends on the range, so windows would label rows with different members.

    Args:
        index: the report's position in the pull.
        report: the report.
        window: a forced window length, else the budget decides.
        points: the budget of one request in points (buckets x metrics).

    Raises:
        InputError: ``window`` is not a whole number of the report's buckets.
    """
    plan = []
    for b, fan in enumerate(branches(report)):
        whole = bool(unpinned_dimensions(fan.report))
        windows = None if whole else window_plan(fan.report, window, points=points)
        if windows is None:
            plan.append([Part(index, b, fan, None, fan.report)])
        else:
            plan.append([Part(index, b, fan, w, _windowed(fan.report, w)) for w in windows])
    return plan
