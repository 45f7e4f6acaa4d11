"""The time grid: buckets, ranges, partial and provisional buckets, relative dates, v2 pieces.

Every rule about time that the project follows lives here, once; the client, the cache, the
export, the plots, the explorer, the CLI and the demo ask this module and keep no table or
arithmetic of their own. It is pure: no I/O, no pandas (its array helpers take anything that
supports integer arithmetic and comparisons, such as numpy arrays, without importing numpy).

The rules:

- **Buckets** are aligned in UTC: HOUR buckets on whole UTC hours, DAY buckets at 00:00Z (SIM
  counts are daily). The service stamps a v1 bucket at its start, in the request's offset.
- **A range is half-open**, ``[start, end)``. It holds the buckets that overlap it: from the
  bucket holding ``start`` (which may begin before it) to the last bucket that begins before
  ``end``.
- **A partial bucket** is one of those that the range covers only in part; its share is the
  part of the bucket inside the range.
- **The present.** The bucket holding the service's present, and any later one, is
  provisional: the service may still add to it or revise it.
- **v2 pieces.** v2 cuts a range at bucket boundaries and stamps each piece at its end, so a
  row stamped ``t`` covers the bucket that ends at ``t`` (when ``t`` is a boundary) or holds it.
- **Relative dates** (``today``, ``yesterday``, ``tomorrow``, ``7d``, ``2w``, ``6h``) resolve
  against a given present: midnights in the report's zone counted back from today's, or whole
  hours counted back from the current one.

Example:
    >>> from datetime import datetime, timedelta, timezone
    >>> ist = timezone(timedelta(hours=5, minutes=30))
    >>> day = bucket_length("DAY")
    >>> start, end = datetime(2022, 7, 1, tzinfo=ist), datetime(2022, 7, 8, tzinfo=ist)
    >>> len(bucket_starts(start, end, day))  # seven local days overlap eight UTC days
    8
    >>> [(p.start.date().isoformat(), round(p.share, 3)) for p in partial_buckets(start, end, day)]
    [('2022-06-30', 0.229), ('2022-07-07', 0.771)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta, tzinfo
from typing import Any

__all__ = [
    "BUCKETS",
    "RELATIVE_HINT",
    "PartialBucket",
    "bucket_length",
    "bucket_starts",
    "ceil",
    "covered_bucket",
    "epoch_micros",
    "floor",
    "frame_buckets",
    "inclusive_last",
    "is_aligned",
    "is_relative",
    "micros",
    "owned_mask",
    "partial_buckets",
    "provisional_from",
    "relative_end",
    "resolve_relative",
    "row_bucket_micros",
    "shown_range",
    "whole_buckets",
]

#: The length of one bucket, by granularity (those whose UTC alignment is known).
BUCKETS: dict[str, timedelta] = {"HOUR": timedelta(hours=1), "DAY": timedelta(days=1)}

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_RELATIVE = re.compile(r"(\d{1,5})\s*([dwh])", re.IGNORECASE)
_RELATIVE_WORDS = {"today": 0, "yesterday": 1, "tomorrow": -1}
#: How relative dates are written, for messages.
RELATIVE_HINT = "a relative date (today, yesterday, tomorrow, 7d, 4w, 24h)"


def bucket_length(granularity: str | None, *, daily: bool = False) -> timedelta | None:
    """The bucket length of a granularity (None for one of unknown alignment).

    Args:
        granularity: ``"HOUR"``, ``"DAY"`` (any case) or None.
        daily: the report has daily buckets without a granularity (SIM counts).

    Example:
        >>> bucket_length("hour"), bucket_length(None, daily=True), bucket_length("WEEK")
        (datetime.timedelta(seconds=3600), datetime.timedelta(days=1), None)
    """
    if granularity is None:
        return BUCKETS["DAY"] if daily else None
    return BUCKETS.get(granularity.strip().upper())


def micros(span: timedelta) -> int:
    """A duration in whole microseconds (the unit of the frames' stamps)."""
    return (span.days * 86_400 + span.seconds) * 1_000_000 + span.microseconds


def epoch_micros(moment: datetime) -> int:
    """An aware instant in microseconds since the epoch (UTC)."""
    return micros(moment.astimezone(UTC) - _EPOCH)


def floor(moment: datetime, bucket: timedelta) -> datetime:
    """The start of the bucket holding ``moment``, in UTC."""
    return _EPOCH + ((moment.astimezone(UTC) - _EPOCH) // bucket) * bucket


def ceil(moment: datetime, bucket: timedelta) -> datetime:
    """The first bucket boundary at or after ``moment``, in UTC."""
    return _EPOCH - ((_EPOCH - moment.astimezone(UTC)) // bucket) * bucket


def is_aligned(moment: datetime, bucket: timedelta) -> bool:
    """``moment`` is a bucket boundary (a whole UTC hour, or a UTC midnight)."""
    return (moment.astimezone(UTC) - _EPOCH) % bucket == timedelta(0)


def bucket_starts(start: datetime, end: datetime, bucket: timedelta) -> list[datetime]:
    """The starts (UTC) of the buckets that overlap ``[start, end)``, in order."""
    first, out = floor(start, bucket), []
    while first < end:
        out.append(first)
        first += bucket
    return out


def inclusive_last(start: datetime, end: datetime, bucket: timedelta) -> datetime:
    """The start (UTC) of the last bucket of ``[start, end)``: what a title prints as its end.

    Example:
        >>> day = timedelta(days=1)
        >>> inclusive_last(datetime(2022, 7, 1, tzinfo=UTC), datetime(2022, 7, 8, tzinfo=UTC),
        ...                day).date()
        datetime.date(2022, 7, 7)
    """
    return max(floor(start, bucket), ceil(end, bucket) - bucket)


def shown_range(
    start: datetime, end: datetime, zone: tzinfo, bucket: timedelta | None = None
) -> tuple[datetime, datetime, str]:
    """The range ``[start, end)`` as a title prints it, its last day or hour included.

    Returns:
        ``(first, last, unit)`` in ``zone``: with ``unit`` ``"day"`` when both bounds are
        midnights in ``zone`` (``last`` is the last day), ``"hour"`` for whole hours of an
        hourly report (``last`` is the last hour), else ``"time"`` (``last`` is ``end``). A
        range of whole UTC buckets that are not whole days or hours in ``zone`` is given in UTC
        (``first.tzinfo`` is UTC then).

    Example:
        >>> first, last, unit = shown_range(datetime(2022, 7, 1, tzinfo=UTC),
        ...                                 datetime(2022, 7, 8, tzinfo=UTC), UTC)
        >>> first.day, last.day, unit
        (1, 7, 'day')
    """
    first, finish = start.astimezone(zone), end.astimezone(zone)
    if first.time() == time(0) and finish.time() == time(0):
        return first, max(first, finish - timedelta(days=1)), "day"
    whole = all(t.minute == t.second == t.microsecond == 0 for t in (first, finish))
    if whole and bucket == BUCKETS["HOUR"]:
        return first, max(first, finish - bucket), "hour"
    if bucket is not None and is_aligned(start, bucket) and is_aligned(end, bucket):
        # whole UTC buckets that are not whole local days: shown as the UTC buckets they are
        return shown_range(start, end, UTC, bucket)
    return first, finish, "time"


@dataclass(frozen=True)
class PartialBucket:
    """A bucket that a range covers only in part.

    Attributes:
        start: the bucket's start (UTC).
        share: the part of the bucket inside the range, between 0 and 1.
    """

    start: datetime
    share: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"start": ISO text, "share": float}``."""
        return {"start": self.start.isoformat(), "share": round(self.share, 6)}


def partial_buckets(start: datetime, end: datetime, bucket: timedelta) -> list[PartialBucket]:
    """The buckets of ``[start, end)`` that the range covers only in part (none, one or two)."""
    if start >= end:
        return []
    out = []
    for first in sorted({floor(start, bucket), floor(end - timedelta.resolution, bucket)}):
        covered = min(end, first + bucket) - max(start, first)
        if covered < bucket:
            out.append(PartialBucket(first, covered / bucket))
    return out


def whole_buckets(start: datetime, end: datetime, bucket: timedelta) -> tuple[datetime, datetime]:
    """The part of ``[start, end)`` made of whole buckets (``partial="drop"``); may be empty."""
    low, high = ceil(start, bucket), floor(end, bucket)
    return low, max(low, high)


def provisional_from(end: datetime, bucket: timedelta, now: datetime) -> datetime | None:
    """The start of the first bucket of a range ending at ``end`` that the service may still
    revise: the bucket holding ``now``; None when the range ends before it.

    Example:
        >>> now = datetime(2022, 7, 8, 4, 30, tzinfo=UTC)
        >>> provisional_from(datetime(2022, 7, 9, tzinfo=UTC), timedelta(days=1), now)
        datetime.datetime(2022, 7, 8, 0, 0, tzinfo=datetime.timezone.utc)
        >>> provisional_from(datetime(2022, 7, 8, tzinfo=UTC), timedelta(days=1), now) is None
        True
    """
    current = floor(now, bucket)
    return current if end > current else None


def covered_bucket(stamp: datetime, bucket: timedelta) -> datetime:
    """The bucket (its UTC start) that a v2 row stamped ``stamp`` covers: each piece of a v2
    range is stamped at its end, so a stamp on a boundary ends the bucket before it.

    Example:
        >>> hour = timedelta(hours=1)
        >>> covered_bucket(datetime(2022, 7, 8, 20, tzinfo=UTC), hour).hour
        19
        >>> covered_bucket(datetime(2022, 7, 8, 20, 19, 19, tzinfo=UTC), hour).hour
        20
    """
    return floor(stamp - timedelta.resolution, bucket)


def row_bucket_micros(stamps: Any, bucket: timedelta, *, at_end: bool = False) -> Any:
    """The start of each row's bucket, from stamps in microseconds since the epoch (UTC).

    Takes an int or an integer array; v1 rows (``at_end`` False) are stamped at their bucket's
    start, v2 rows (``at_end`` True) at the end of the piece they cover (:func:`covered_bucket`).
    """
    step = micros(bucket)
    return ((stamps - 1) // step) * step if at_end else (stamps // step) * step


def frame_buckets(attrs: Any) -> tuple[timedelta, bool] | None:
    """The bucket length of a frame and whether its rows are stamped at the end of what they
    cover (v2), from its ``attrs``; None when its rows are not buckets (``NOW``, PERCENTILE over
    a range, an unknown granularity) or it carries no request."""
    attrs = attrs if isinstance(attrs, dict) else {}
    request = attrs.get("request")
    if not isinstance(request, dict):
        return None
    if request.get("start_date_time") == "NOW":
        return None
    at_end = attrs.get("api_version") == "v2"
    grain = request.get("granularity")
    if grain is None and at_end:
        grain = "HOUR"  # the v2 service's default
    bucket = bucket_length(grain if isinstance(grain, str) else None,
                           daily=attrs.get("shape") == "sim_count")  # fmt: skip
    return None if bucket is None else (bucket, at_end)


def owned_mask(
    stamps: Any, start: Any, end: Any, *, first: bool, last: bool, at_end: bool = False
) -> Any:
    """Which stamps a window ``[start, end)`` of a pull owns (``(start, end]`` with ``at_end``,
    as v2 stamps pieces at their end); the first window also owns what lies before it, the
    last what lies after. None when the window owns every stamp.

    ``stamps``, ``start`` and ``end`` are comparable values of one kind (microseconds, or
    datetimes, or arrays of either): the rule is written once for the client, the stitching
    and the reads of exported data.
    """
    keep: Any = None
    if not first:
        keep = (stamps > start) if at_end else (stamps >= start)
    if not last:
        high = (stamps <= end) if at_end else (stamps < end)
        keep = high if keep is None else keep & high
    return keep


# -- relative dates ------------------------------------------------------------------------------


def is_relative(value: object) -> bool:
    """True for a relative date (``today``, ``yesterday``, ``tomorrow``, ``7d``, ``2w``, ``6h``)."""
    if not isinstance(value, str):
        return False
    text = value.strip().lower()
    return text in _RELATIVE_WORDS or _RELATIVE.fullmatch(text) is not None


def resolve_relative(value: object, zone: tzinfo, now: datetime | None = None) -> datetime | None:
    """Resolve a relative date to a timestamp in ``zone``, or None for any other value.

    ``today``, ``yesterday``, ``tomorrow``, ``Nd`` and ``Nw`` are midnights in ``zone`` counted
    back from today's midnight; ``Nh`` is a whole hour counted back from the current hour.

    Args:
        value: the start or end value as given.
        zone: the report's time zone.
        now: the present (default: the local clock).

    Returns:
        The tz-aware timestamp, or None when ``value`` is not a relative date.

    Raises:
        OverflowError: a count that leads before year 1 (callers turn it into their error).

    Example:
        >>> resolve_relative("7d", UTC, datetime(2022, 7, 8, 10, tzinfo=UTC)).isoformat()
        '2022-07-01T00:00:00+00:00'
    """
    if not is_relative(value):
        return None
    assert isinstance(value, str)
    text = value.strip().lower()
    match = _RELATIVE.fullmatch(text)
    local = (now or datetime.now(UTC)).astimezone(zone)
    if match is not None and match.group(2) == "h":
        hour = local.replace(minute=0, second=0, microsecond=0)
        back = hour.astimezone(UTC) - timedelta(hours=int(match.group(1)))
        return back.astimezone(zone)
    if match is None:
        days = _RELATIVE_WORDS[text]
    else:
        days = int(match.group(1)) * (7 if match.group(2) == "w" else 1)
    return datetime.combine(local.date() - timedelta(days=days), time(0), tzinfo=zone)


def relative_end(period: str) -> str | None:
    """The end that a trailing relative period pairs with, or None for other text.

    ``Nd``/``Nw`` end at ``today`` (whole days), ``Nh`` at the current hour (``0h``).
    """
    match = _RELATIVE.fullmatch(period.strip())
    if match is None:
        return None
    return "0h" if match.group(2).lower() == "h" else "today"
