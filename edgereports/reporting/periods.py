"""The other period of a comparison: which range and which report it is.

Arithmetic on datetimes, kept apart from the frames: the previous period of a range of N
buckets is the N buckets before it; the previous year is the same dates a year earlier; a row
sits at an offset (a bucket count) from the first bucket of its period, and two rows at the same
offset are compared. Buckets are the time grid's (:mod:`edgereports.query.timegrid`).

Example:
    >>> from datetime import UTC, datetime, timedelta
    >>> start, end = datetime.fromisoformat("2024-03-08"), datetime.fromisoformat("2024-03-15")
    >>> [t.date().isoformat() for t in previous_range("previous_period", start.replace(
    ...     tzinfo=UTC), end.replace(tzinfo=UTC), timedelta(days=1))]
    ['2024-03-01', '2024-03-08']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..errors import QueryError
from ..query import Report
from ..query.timegrid import bucket_starts
from ..query.times import YEARS

__all__ = [
    "COMPARE_MODES",
    "Comparison",
    "bucket_count",
    "plan_comparison",
    "previous_range",
    "year_earlier",
]

#: The named comparisons ``compare=`` takes (besides an explicit ``(start, end)``).
COMPARE_MODES = ("previous_period", "previous_year")
_ALLOWED = "'previous_period', 'previous_year' or a (start, end) pair"


@dataclass(frozen=True)
class Comparison:
    """What a comparison compares: this period and the other one.

    Attributes:
        mode: ``"previous_period"``, ``"previous_year"`` or ``"range"`` (given by the caller).
        report: the other period's report (the same report over the other range).
        bucket: the bucket length, or None for a report without buckets (rows then meet by
            their rank in time within their series).
        at_end: the rows are stamped at the end of the piece they cover (v2).
    """

    mode: str
    report: Report
    start: datetime
    other_start: datetime
    bucket: timedelta | None
    at_end: bool = False


def plan_comparison(report: Report, compare: object, bucket: timedelta | None) -> Comparison:
    """Check ``compare=`` and build the other period's report (before any request).

    ``compare`` is ``"previous_period"``, ``"previous_year"`` or ``(start, end)`` (any values
    :meth:`Report.between` takes); ``bucket`` is the report's bucket length, or None.

    Raises:
        QueryError: an unknown value, a report ranged by time keywords (``NOW``,
            ``LAST ...``) or SIM counts, or another period outside the years a request may
            name; the message names ``compare`` and what it takes.
    """
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
    if isinstance(compare, str):
        try:
            other = report.between(*previous_range(compare, span[0], span[1], bucket))
        except (QueryError, OverflowError):  # a period out of the years a request may name
            raise QueryError(
                f"compare={compare!r} of this range reaches outside the years "
                f"{YEARS[0]} to {YEARS[1]}",
                field="compare",
            ) from None
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
    return Comparison(mode, other, span[0], other_span[0], bucket, report.stamps_at_end)


def bucket_count(start: datetime, end: datetime, bucket: timedelta) -> int:
    """How many buckets overlap ``[start, end)``: from the one holding ``start`` to the last
    one that begins before ``end``.

    Example:
        >>> from datetime import UTC
        >>> t = datetime(2024, 3, 8, 12, tzinfo=UTC)
        >>> bucket_count(t, t + timedelta(days=7), timedelta(days=1))
        8
    """
    return max(1, len(bucket_starts(start, end, bucket)))


def year_earlier(moment: datetime) -> datetime:
    """The same wall time a year earlier (29 February becomes the 28th).

    Example:
        >>> from datetime import UTC
        >>> year_earlier(datetime(2024, 2, 29, tzinfo=UTC)).date().isoformat()
        '2023-02-28'
    """
    try:
        return moment.replace(year=moment.year - 1)
    except ValueError:  # 29 February
        return moment.replace(year=moment.year - 1, day=28)


def previous_range(
    mode: str, start: datetime, end: datetime, bucket: timedelta | None
) -> tuple[datetime, datetime]:
    """The other period of ``[start, end)`` for a named comparison, in the same offsets.

    ``"previous_period"`` is the N buckets before the range's N, so buckets line up (the
    range's length before it when ``bucket`` is None); ``"previous_year"`` the same dates a
    year earlier. Any other ``mode`` is a ValueError.
    """
    if mode == "previous_year":
        return year_earlier(start), year_earlier(end)
    if mode != "previous_period":
        raise ValueError(f"unknown comparison {mode!r}")
    shift = end - start if bucket is None else bucket_count(start, end, bucket) * bucket
    return start - shift, end - shift
