"""Time values of a report request: ISO-8601 timestamps, dates, relative dates, zones, keywords.

A request's ``start_date_time``/``end_date_time`` is an ISO-8601 timestamp with a UTC offset or
a time keyword of the service (``NOW``, ``LAST HOUR|DAY|WEEK|MONTH``). Timestamps keep the
caller's offset; a ``date`` means midnight in the report's time zone. Relative dates
(``today``, ``yesterday``, ``tomorrow``, ``7d``, ``4w``, ``24h``) are ours, not the service's:
:mod:`.timegrid` resolves them against a given present.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import QueryError
from .timegrid import RELATIVE_HINT
from .vocabulary import check_known

__all__ = [
    "KEYWORDS",
    "NOW",
    "YEARS",
    "TimeLike",
    "format_offset",
    "is_keyword",
    "parse_timestamp",
    "parse_tz",
    "render_time",
]

NOW = "NOW"
#: The time keywords known to the service; ``LAST ...`` is a start paired with end ``NOW``.
KEYWORDS = (NOW, "LAST HOUR", "LAST DAY", "LAST WEEK", "LAST MONTH")

TimeLike = datetime | date | str

#: The years a timestamp of a request may lie in: from the epoch, which stamps count from, to a
#: thousand years short of the last of Python's dates (9999), which the windows, buckets and
#: periods a pull computes around a range must not pass.
YEARS = (1970, 8999)

_KEYWORD_SHAPE = re.compile(r"[A-Za-z]+(?: [A-Za-z]+)*")
_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
_OFFSET = re.compile(r"([+-])(\d{2}):?(\d{2})")


def is_keyword(value: object) -> bool:
    """True for a string shaped like a time keyword (letters and single spaces)."""
    return isinstance(value, str) and bool(_KEYWORD_SHAPE.fullmatch(value.strip()))


def format_offset(offset: timedelta) -> str:
    """Render a UTC offset as ``+05:30``."""
    minutes = int(offset.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    hours, mins = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}:{mins:02d}"


def parse_tz(spec: str | tzinfo | None) -> tzinfo:
    """Turn ``"+05:30"``, ``"Z"``, ``"UTC"``, an IANA zone name or a tzinfo into a tzinfo.

    Raises:
        QueryError: the zone is not understood.
    """
    if spec is None:
        return UTC
    if isinstance(spec, tzinfo):
        return spec
    text = spec.strip()
    if text.upper() in ("Z", "UTC"):
        return UTC
    match = _OFFSET.fullmatch(text)
    if match:
        sign, hh, mm = match.groups()
        delta = timedelta(hours=int(hh), minutes=int(mm))
        if delta >= timedelta(hours=24):
            raise QueryError(f"timezone offset out of range: {spec!r}", field="timezone")
        return timezone(-delta if sign == "-" else delta)
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise QueryError(
            f"timezone {spec!r} is neither an offset like '+05:30' nor an IANA zone name "
            "like 'Asia/Kolkata'",
            field="timezone",
        ) from None


def parse_timestamp(text: str, field: str) -> datetime:
    """Parse an ISO-8601 timestamp that carries a UTC offset.

    Raises:
        QueryError: the text is not an ISO-8601 timestamp, has no offset, or lies outside
            :data:`YEARS`.
    """
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise QueryError(
            f"{field} {text!r} is not an ISO-8601 timestamp such as "
            f"'2022-07-07T09:50:00+05:30', nor {RELATIVE_HINT}, nor a time keyword "
            f"({', '.join(KEYWORDS)})",
            field=field,
        ) from None
    if value.tzinfo is None or value.utcoffset() is None:
        raise QueryError(
            f"{field} {text!r} has no UTC offset; write it like '2022-07-07T09:50:00+05:30'",
            field=field,
        )
    if not YEARS[0] <= value.year <= YEARS[1]:
        raise QueryError(
            f"{field} {text!r} must lie in the years {YEARS[0]} to {YEARS[1]}", field=field
        )
    return value


def _keyword(text: str, field: str, *, strict: bool, warn: bool) -> str:
    word = " ".join(text.split()).upper()
    if strict or warn:
        check_known(word, field, KEYWORDS, strict=strict, what="time keyword", shown=text)
    return word


def _midnight(day: date, zone: tzinfo) -> str:
    return datetime.combine(day, time(0), tzinfo=zone).isoformat()


def render_time(
    value: object, field: str, zone: tzinfo, *, strict: bool = False, warn: bool = True
) -> str:
    """Render a start or end value as it goes into the request.

    Args:
        value: a tz-aware ``datetime``, a ``date`` (midnight in ``zone``), an ISO-8601 string
            (kept verbatim), a ``YYYY-MM-DD`` string (midnight in ``zone``) or a time keyword.
        field: ``start_date_time`` or ``end_date_time``, for messages.
        zone: the report's time zone.
        strict: an unknown keyword is an error instead of a warning.
        warn: warn about an unknown keyword (off when a value checked before is rendered again).

    Returns:
        The request text.

    Raises:
        QueryError: a naive datetime, a malformed timestamp, or a value of another type.
    """
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise QueryError(
                f"{field} {value.isoformat()!r} is a naive datetime; give it a time zone, "
                "e.g. datetime(..., tzinfo=timezone.utc)",
                field=field,
            )
        return value.isoformat()
    if isinstance(value, date):
        return _midnight(value, zone)
    if isinstance(value, str):
        text = value.strip()
        if is_keyword(text):
            return _keyword(text, field, strict=strict, warn=warn)
        if _DATE_ONLY.fullmatch(text):
            try:
                return _midnight(date.fromisoformat(text), zone)
            except ValueError:
                pass  # reported below as a malformed timestamp
        parse_timestamp(text, field)
        return text
    raise QueryError(
        f"{field} must be a datetime, a date, an ISO-8601 string or a time keyword, "
        f"got {type(value).__name__}",
        field=field,
    )
