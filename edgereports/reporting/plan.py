"""Planning a pull: which requests (parts) its reports become, and what each report is.

Every report is checked before any request; its facts (:class:`ReportFacts`) are worked out
once, and the steps after read them instead of the report. Parts come from fan-out first (one
request per filtered value, and per group of metrics an answer can tell apart), then windows
cut on UTC bucket boundaries that cover ``[start, end)`` exactly, the first and last keeping
the user's own bounds.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from ..errors import InputError
from ..query import Report
from ..query.pinning import DEVICE_IDS, unpinned_dimensions
from ..query.terms import Expression, Metric
from ..query.timegrid import BUCKETS, bucket_length, floor
from .periods import Comparison, plan_comparison

__all__ = [
    "BUCKETS",
    "DEFAULT_POINTS",
    "MAX_WINDOW",
    "Branch",
    "Part",
    "Plan",
    "ReportFacts",
    "Window",
    "branches",
    "bucket_of",
    "budget_window",
    "check_range",
    "metric_groups",
    "plan_parts",
    "plan_pull",
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
    """One window of a plan: tz-aware ``[start, end)``, its ``index`` from 0 and ``count``."""

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
    return _windows(report, bucket_of(report), window, points)


def _windows(
    report: Report, bucket: timedelta | None, window: timedelta | None, points: int
) -> list[Window] | None:
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


def _fanned_values(
    report: Report, filters: dict[str, Any]
) -> list[tuple[str, tuple[Expression, ...]]]:
    """The grouped-by dimensions whose EXACT filters (``filters``, as
    :attr:`ReportFacts.filters` lists them) name several distinct values."""
    out = []
    for dim in report.dimensions or ():
        given = filters.get(dim)  # one value, several, or none
        values = given if isinstance(given, list) else [] if given is None else [given]
        seen: dict[str, Expression] = {}
        for value in values:
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
    return _branches(report, report.exact_filters())


def _branches(report: Report, filters: dict[str, Any]) -> list[Branch]:
    fanned = _fanned_values(report, filters)
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
    index: int,
    report: Report,
    window: timedelta | None,
    *,
    points: int = DEFAULT_POINTS,
    facts: ReportFacts | None = None,
) -> list[list[Part]]:
    """The requests of report number ``index``: per fan-out branch, one per window.

    A branch grouped by a dimension no filter pins is sent whole: which member tops the list
    (the top talker) depends on the range, so windows would label rows with different members.
    """
    facts = facts or report_facts(report)
    plan = []
    for b, fan in enumerate(_branches(report, facts.filters)):
        # Fanned-out values are pinned, so a branch has the report's top talkers and bucket.
        whole = bool(facts.top_talker)
        windows = None if whole else _windows(fan.report, facts.bucket, window, points)
        if windows is None:
            plan.append([Part(index, b, fan, None, fan.report)])
        else:
            plan.append([Part(index, b, fan, w, _windowed(fan.report, w)) for w in windows])
    return plan


# -- a report's facts and its plan ----------------------------------------------------------------


@dataclass(frozen=True)
class ReportFacts:
    """What a pull needs to know of one report, worked out once when it is planned.

    Attributes:
        request: its request (no key in it).
        span: its range, or None for one written with time keywords.
        bucket: its bucket length when its rows are buckets (:func:`bucket_of`), else None.
        at_end: its answers stamp each piece of the range at its end (v2).
        relative: the relative dates the range was written with, when it was.
        top_talker: the grouped-by dimensions no filter pins.
        filters: its filters as ``{dimension: value or values}`` (account first).
        devices: its device id filters (``msisdn``, ``imsi``) and their values.
    """

    request: dict[str, Any]
    span: tuple[datetime, datetime] | None
    bucket: timedelta | None
    at_end: bool
    relative: tuple[str | None, str | None] | None = None
    top_talker: list[str] = field(default_factory=list)
    filters: dict[str, Any] = field(default_factory=dict)
    devices: dict[str, list[str]] = field(default_factory=dict)


def report_facts(report: Report) -> ReportFacts:
    return ReportFacts(
        request=report.to_request(),
        span=report.time_range(),
        bucket=bucket_of(report),
        at_end=report.stamps_at_end,
        relative=report.relative,
        top_talker=unpinned_dimensions(report),
        filters=report.exact_filters(),
        devices={
            d: [str(v) for v in values] for d in DEVICE_IDS if (values := report.filter_values(d))
        },
    )


@dataclass(frozen=True)
class Plan:
    """The parts of one report of a pull, and its facts.

    Attributes:
        facts: the report's facts.
        branches: per fan-out branch, its parts (windows in order).
        comparison: for the other periods of ``compare=``, what they are compared with.
    """

    facts: ReportFacts
    branches: list[list[Part]]
    comparison: Comparison | None = None

    @property
    def parts(self) -> list[Part]:
        """Every part, branch by branch."""
        return [p for branch in self.branches for p in branch]


def plan_pull(
    reports: list[Report],
    window: timedelta | None,
    *,
    points: int = DEFAULT_POINTS,
    compare: object = None,
    compare_by: object = None,
    present: Callable[[], datetime] | None = None,
    max_range: timedelta | None = None,
) -> list[Plan]:
    """The plan of each report of a pull (:func:`report_facts`, :func:`plan_parts`), and of
    the other periods (or cohorts) of ``compare=`` (``compare_by=``) after them.

    Every report, its range and ``compare`` are checked before anything is asked of the
    service, the present included; relative dates (``"7d"``) then resolve against
    ``present()``, the service's (asked only then), and the other periods are the resolved
    report's. With ``compare_by`` the first report is pinned to the base cohort.

    Raises:
        QueryError: an invalid report, ``compare`` or ``compare_by``.
        InputError: a range longer than ``max_range``, or a ``window`` that is not a whole
            number of the report's buckets.
    """
    for i, r in enumerate(reports):
        r.to_request()
        check_range(r, max_range, i if len(reports) > 1 else None)
    comparison = None
    if compare is not None or compare_by is not None:
        comparison = plan_comparison(
            reports[0], compare, bucket_of(reports[0]), compare_by=compare_by
        )
        reports = [comparison.report, *reports[1:]]
        for n, other in enumerate(comparison.others, start=len(reports)):
            check_range(other.report, max_range, n)
    facts = [report_facts(r) for r in reports]
    if present is not None and any(f.relative for f in facts):
        now = present()
        return plan_pull(
            [r.at(now) for r in reports],
            window,
            points=points,
            compare=compare,
            compare_by=compare_by,
            max_range=max_range,
        )
    pulled: list[tuple[Report, ReportFacts, Comparison | None]]
    pulled = [(r, f, None) for r, f in zip(reports, facts, strict=True)]
    if comparison is not None:
        pulled += [(o.report, report_facts(o.report), comparison) for o in comparison.others]
    return [
        Plan(f, plan_parts(i, r, window, points=points, facts=f), other)
        for i, (r, f, other) in enumerate(pulled)
    ]


def check_range(report: Report, max_range: timedelta | None, index: int | None = None) -> None:
    """A range longer than ``max_range`` is an InputError naming the report's ``index``."""
    span = report.time_range()
    if max_range is None or span is None or span[1] - span[0] <= max_range:
        return
    where = f"reports[{index}]: " if index is not None else ""
    raise InputError(
        f"{where}the range {span[0].isoformat()} .. {span[1].isoformat()} covers "
        f"{(span[1] - span[0]).days:,} days, more than max_range ({max_range.days:,} "
        "days); narrow start/end, or pass ReportingClient(..., max_range=timedelta(...)) "
        "(None for no bound)"
    )
