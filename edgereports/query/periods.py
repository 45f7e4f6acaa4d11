"""Comparison periods on the time grid: the other range of a rule, and the row each row meets.

Part of the time grid (:mod:`.timegrid`), and as pure: no I/O, no pandas. The rules:

- **The period is the calendar's, the shift is the range's.** The other period is the asked
  range moved back on the wall clock of the report's zone: ``previous_period`` by the range's
  own length (seven local days: the seven local days before, whatever their UTC length),
  ``previous_week`` by 7 days, ``previous_year_dow`` by 364 days (so weekdays match),
  ``previous_year`` by a year (the same dates; 29 February becomes the 28th), and a range given
  as ``(start, end)`` by the distance between the two starts.
- **Rows meet by the same offset from their range's start**, counted on the clock their
  buckets are whole on. DAY buckets are UTC days: a DAY row meets the UTC day the shift's days
  earlier (a week of ``+05:30`` days overlaps eight UTC days, and so does the week before, day
  for day). HOUR buckets are counted on the zone's wall clock: 09:00 meets 09:00 of the other
  period's day, also across a change to or from summer time; an hour the other day does not
  have (the clock skipped it) has no counterpart, and of an hour a day has twice only the first
  meets one. A shift that is not a whole number of buckets (a range of 36 hours at DAY) lines
  up the two ranges' first buckets instead.

Example:
    >>> from datetime import datetime, timedelta, timezone
    >>> ist = timezone(timedelta(hours=5, minutes=30))
    >>> start, end = datetime(2022, 7, 1, tzinfo=ist), datetime(2022, 7, 8, tzinfo=ist)
    >>> shift = rule_shift("previous_period", start, end, ist)
    >>> shift.text(), [t.isoformat() for t in other_range(start, end, shift, ist)]
    ('7 days', ['2022-06-24T00:00:00+05:30', '2022-07-01T00:00:00+05:30'])
    >>> day = timedelta(days=1)
    >>> first = datetime(2022, 6, 30, tzinfo=UTC)  # the UTC day holding the range's start
    >>> counterparts([first], day, ist, shift, first, first - 7 * day)[0].date()
    datetime.date(2022, 6, 23)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Any

from .timegrid import BUCKETS, is_aligned

__all__ = [
    "COMPARE_RULES",
    "MAX_PERIODS",
    "Shift",
    "counterparts",
    "covered_share",
    "describe_rule",
    "fixed_gap",
    "from_wall",
    "grid_clock",
    "other_range",
    "pair_shift",
    "rule_shift",
    "wall",
    "year_earlier",
]

#: The named comparison periods ``compare=`` takes (besides an explicit ``(start, end)``).
COMPARE_RULES = ("previous_period", "previous_week", "previous_year", "previous_year_dow")
#: The most periods (or cohorts) one frame is compared with.
MAX_PERIODS = 4

_FIXED = {
    "previous_week": (7, 0),
    "previous_year_dow": (364, 0),
    "previous_year": (0, 1),
}
_WHAT = {
    "previous_period": "the range's own length earlier",
    "previous_week": "7 days earlier",
    "previous_year_dow": "364 days earlier (the same weekdays)",
    "previous_year": "the same dates a year earlier",
}


@dataclass(frozen=True)
class Shift:
    """How far back the other period lies on a wall clock: days, years and a remaining time.

    Attributes:
        days: whole days back (negative: later).
        years: whole years back (29 February becomes the 28th).
        time: the rest of a shift that is not whole days (hours, minutes).
    """

    days: int = 0
    years: int = 0
    time: timedelta = timedelta(0)

    def back(self, moment: datetime) -> datetime:
        """``moment`` (a wall time, naive) moved back by the shift."""
        moved = moment - timedelta(days=self.days) - self.time
        return year_earlier(moved, self.years) if self.years else moved

    def whole(self, bucket: timedelta) -> bool:
        """The shift is a whole number of buckets of this length (a year and a day are)."""
        return self.time % bucket == timedelta(0)

    def text(self) -> str:
        """``7 days``, ``1 year``, ``1 day 12:00:00``.

        Example:
            >>> Shift(days=364).text(), Shift(years=1).text()
            ('364 days', '1 year')
            >>> Shift(days=1, time=timedelta(hours=12)).text()
            '1 day 12:00:00'
        """
        parts = []
        if self.years:
            parts.append(f"{self.years} year{'s' if abs(self.years) != 1 else ''}")
        if self.days or not (self.years or self.time):
            parts.append(f"{self.days} day{'s' if abs(self.days) != 1 else ''}")
        if self.time:
            parts.append(str(self.time))
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"days": 7, "years": 0, "seconds": 0}``."""
        return {"days": self.days, "years": self.years, "seconds": self.time.total_seconds()}


def describe_rule(rule: str) -> str:
    """What a named rule does, in words (``"364 days earlier (the same weekdays)"``)."""
    return _WHAT.get(rule, "a range given by its dates")


def year_earlier(moment: datetime, years: int = 1) -> datetime:
    """The same wall time ``years`` earlier (29 February becomes the 28th).

    Example:
        >>> year_earlier(datetime(2024, 2, 29, tzinfo=UTC)).date().isoformat()
        '2023-02-28'
    """
    try:
        return moment.replace(year=moment.year - years)
    except ValueError:  # 29 February
        return moment.replace(year=moment.year - years, day=28)


def wall(moment: datetime, zone: tzinfo) -> datetime:
    """The wall time (naive) that an aware instant shows in ``zone``."""
    return moment.astimezone(zone).replace(tzinfo=None)


def from_wall(moment: datetime, zone: tzinfo, *, strict: bool = False) -> datetime | None:
    """The instant a wall time (naive) shows in ``zone``, aware in ``zone``.

    A wall time the zone shows twice (clocks set back) is its first instant. One the zone
    skips (clocks set forward) is None with ``strict``, else the instant it would be at the
    offset before the change.

    Example:
        >>> from zoneinfo import ZoneInfo
        >>> berlin = ZoneInfo("Europe/Berlin")
        >>> from_wall(datetime(2024, 3, 31, 2, 30), berlin, strict=True) is None
        True
        >>> from_wall(datetime(2024, 3, 31, 3, 0), berlin).isoformat()
        '2024-03-31T03:00:00+02:00'
    """
    aware = moment.replace(tzinfo=zone, fold=0)
    if strict and wall(aware.astimezone(UTC), zone) != moment.replace(fold=0):
        return None
    return aware


def rule_shift(rule: str, start: datetime, end: datetime, zone: tzinfo) -> Shift:
    """The shift of a named rule (:data:`COMPARE_RULES`) for the range ``[start, end)``.

    ``previous_period`` is the range's own length on ``zone``'s wall clock (seven local days are
    7 days, also when one of them is 23 hours long).

    Raises:
        ValueError: an unknown rule.
    """
    if rule in _FIXED:
        days, years = _FIXED[rule]
        return Shift(days=days, years=years)
    if rule != "previous_period":
        raise ValueError(f"unknown comparison {rule!r}")
    return _as_shift(wall(end, zone) - wall(start, zone))


def pair_shift(start: datetime, other_start: datetime, zone: tzinfo) -> Shift:
    """The shift from a range starting at ``start`` to one starting at ``other_start``, on
    ``zone``'s wall clock (a range given by its dates)."""
    return _as_shift(wall(start, zone) - wall(other_start, zone))


def _as_shift(span: timedelta) -> Shift:
    return Shift(days=span.days, time=span - timedelta(days=span.days))


def other_range(
    start: datetime, end: datetime, shift: Shift, zone: tzinfo
) -> tuple[datetime, datetime]:
    """The range ``[start, end)`` moved back by ``shift`` on ``zone``'s wall clock, its bounds
    aware in ``zone``.

    Example:
        >>> from zoneinfo import ZoneInfo
        >>> berlin = ZoneInfo("Europe/Berlin")  # summer time starts on 31 March 2024
        >>> start = datetime(2024, 3, 25, tzinfo=berlin)
        >>> end = datetime(2024, 4, 1, tzinfo=berlin)
        >>> [t.isoformat() for t in other_range(start, end, Shift(days=7), berlin)]
        ['2024-03-18T00:00:00+01:00', '2024-03-25T00:00:00+01:00']
    """
    low = from_wall(shift.back(wall(start, zone)), zone)
    high = from_wall(shift.back(wall(end, zone)), zone)
    assert low is not None and high is not None
    return low, high


def grid_clock(bucket: timedelta, zone: tzinfo) -> tzinfo:
    """The clock a bucket's offsets are counted on: UTC for DAY buckets (UTC days), the zone's
    wall clock for shorter ones."""
    return UTC if bucket >= BUCKETS["DAY"] else zone


def counterparts(
    starts: Sequence[datetime],
    bucket: timedelta,
    zone: tzinfo,
    shift: Shift,
    first: datetime,
    other_first: datetime,
) -> list[datetime | None]:
    """The other period's bucket (its start, UTC) that each bucket of this period meets.

    Args:
        starts: bucket starts of this period (UTC).
        bucket: the bucket length.
        zone: the report's zone.
        shift: how far back the other period lies.
        first: the first bucket of this period (the one holding its start).
        other_first: the first bucket of the other period.

    Returns:
        Per start, the bucket at the same offset in the other period, or None where there is
        none (a wall-clock hour the other day skips, or a start off the grid).

    Example:
        >>> from zoneinfo import ZoneInfo
        >>> berlin, hour = ZoneInfo("Europe/Berlin"), timedelta(hours=1)
        >>> sunday = datetime(2024, 3, 31, 1, tzinfo=UTC)  # 03:00 CEST, after the change
        >>> met = counterparts([sunday], hour, berlin, Shift(days=7), sunday, sunday)[0]
        >>> met.astimezone(berlin).isoformat()  # 03:00 a week earlier, an hour more back
        '2024-03-24T03:00:00+01:00'
    """
    clock = grid_clock(bucket, zone)
    move: Callable[[datetime], datetime] = shift.back
    if not shift.whole(bucket):  # the two ranges' first buckets meet, and so on
        gap = wall(first, clock) - wall(other_first, clock)
        move = lambda moment: moment - gap  # noqa: E731
    out: list[datetime | None] = []
    for start in starts:
        met = from_wall(move(wall(start, clock)), clock, strict=True)
        aligned = met is not None and is_aligned(met, bucket)
        out.append(met.astimezone(UTC) if met is not None and aligned else None)
    return out


def fixed_gap(
    bucket: timedelta, zone: tzinfo, shift: Shift, first: datetime, other_first: datetime
) -> timedelta | None:
    """How far back every bucket's counterpart lies (:func:`counterparts`), when that is the
    same for every bucket: on a clock of fixed offset (UTC days, an offset such as
    ``+05:30``) and a shift of days; None when it varies (a zone with summer time at HOUR, a
    shift of years).

    Example:
        >>> day = timedelta(days=1)
        >>> t = datetime(2022, 6, 30, tzinfo=UTC)
        >>> fixed_gap(day, UTC, Shift(days=364), t, t)
        datetime.timedelta(days=364)
    """
    clock = grid_clock(bucket, zone)
    if shift.years or not isinstance(clock, timezone):
        return None
    if shift.whole(bucket):
        return timedelta(days=shift.days) + shift.time
    return wall(first, clock) - wall(other_first, clock)


def covered_share(
    bucket_start: datetime,
    bucket: timedelta,
    start: datetime,
    end: datetime,
    now: datetime | None,
    *,
    pieces: bool,
) -> float:
    """The part of a bucket whose time its value holds, between 0 and 1.

    A v1 bucket holds its whole time (also where the range covers it in part); a v2 piece
    (``pieces``) only the part inside ``[start, end)``; either holds nothing after ``now``
    (the service's present: the bucket holding it is counted so far).

    Example:
        >>> day, t = timedelta(days=1), datetime(2024, 7, 8, tzinfo=UTC)
        >>> covered_share(t, day, t, t + day, t + timedelta(hours=6), pieces=False)
        0.25
        >>> covered_share(t, day, t + timedelta(hours=18), t + day, None, pieces=True)
        0.25
    """
    low, high = bucket_start, bucket_start + bucket
    if pieces:
        low, high = max(low, start), min(high, end)
    if now is not None:
        high = min(high, now)
    return max(timedelta(0), high - low) / bucket
