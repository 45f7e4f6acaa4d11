"""The other period of a comparison: which range it is, and which bucket of it a row is.

Pure arithmetic on datetimes, kept apart from the frames: the previous period of a range of N
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

from datetime import datetime, timedelta

from ..query.timegrid import bucket_starts

__all__ = ["COMPARE_MODES", "bucket_count", "previous_range", "year_earlier"]

#: The named comparisons ``compare=`` takes (besides an explicit ``(start, end)``).
COMPARE_MODES = ("previous_period", "previous_year")


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
    """The other period of ``[start, end)`` for a named comparison.

    Args:
        mode: ``"previous_period"`` (the N buckets before the range's N, so buckets line up;
            the range's length when it has no buckets) or ``"previous_year"``.
        start: the range's start (tz-aware).
        end: the range's end (tz-aware).
        bucket: the report's bucket length, or None for a report without buckets.

    Returns:
        The other period's ``(start, end)``, in the offsets of ``start`` and ``end``.

    Raises:
        ValueError: an unknown mode.
    """
    if mode == "previous_year":
        return year_earlier(start), year_earlier(end)
    if mode != "previous_period":
        raise ValueError(f"unknown comparison {mode!r}")
    shift = end - start if bucket is None else bucket_count(start, end, bucket) * bucket
    return start - shift, end - shift
