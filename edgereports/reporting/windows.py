"""Window planning: split a long range into windows on UTC bucket boundaries.

The service buckets in UTC (DAY buckets at 00:00Z, HOUR buckets on whole UTC hours). A window
plan covers ``[start, end)`` exactly, with no gap and no overlap: the first window starts at the
user's start, the last ends at the user's end, and every boundary in between is a bucket
boundary, written in the offset of the user's start.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ..errors import InputError
from ..query import Report

__all__ = [
    "BUCKETS",
    "DEFAULT_WINDOWS",
    "SIM_COUNT_WINDOW",
    "Window",
    "bucket_of",
    "plan_report",
    "plan_windows",
]

#: The length of one bucket, by granularity (the ones whose alignment is known).
BUCKETS: dict[str, timedelta] = {"HOUR": timedelta(hours=1), "DAY": timedelta(days=1)}
#: The default window length, by granularity.
DEFAULT_WINDOWS: dict[str, timedelta] = {"HOUR": timedelta(days=7), "DAY": timedelta(days=90)}
#: The default window length of a SIM-count report (daily counts, no granularity).
SIM_COUNT_WINDOW = timedelta(days=90)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


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


def _floor(moment: datetime, bucket: timedelta) -> datetime:
    """The bucket boundary at or before ``moment`` (in UTC)."""
    return _EPOCH + ((moment.astimezone(UTC) - _EPOCH) // bucket) * bucket


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
    boundary = _floor(start, bucket) + size
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
    (e.g. PERCENTILE) and unknown granularities are sent whole.
    """
    if report.time_range() is None:
        return None
    if report.grain is not None:
        return BUCKETS.get(report.grain.upper())
    if report.metrics and all(m.name == "sim" for m in report.metrics):
        return BUCKETS["DAY"]
    return None


def plan_report(report: Report, window: timedelta | None = None) -> list[Window] | None:
    """Plan the windows of ``report``; None when it is sent whole.

    Args:
        report: a valid report.
        window: the window length; by default :data:`DEFAULT_WINDOWS` per granularity
            (:data:`SIM_COUNT_WINDOW` for SIM counts).

    Returns:
        The windows (one when the range fits in one), or None for a report sent whole.

    Raises:
        InputError: ``window`` is not a positive whole number of the report's buckets.
    """
    bucket = bucket_of(report)
    span = report.time_range()
    if bucket is None or span is None:
        return None
    if window is None:
        grain = (report.grain or "").upper()
        window = DEFAULT_WINDOWS.get(grain, SIM_COUNT_WINDOW)
    return plan_windows(span[0], span[1], bucket=bucket, size=window)
