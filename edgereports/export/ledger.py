"""What a table records of its own progress, and the watermark read from it, for every format.

Each destination keeps a small ledger of marks (a name → a whole number), written with the
data it describes: a Delta table as application transactions of its commits, an Iceberg table
as table properties of its commits, a Parquet dataset in ``_state.json``. The marks are:

- per UTC day (``edgereports/<report>/<day>``): the end of the data written for that day, in
  epoch seconds (a day's midnight: removed; its end: complete);
- the contiguous end (``edgereports/<report>/from/<start>``): how far the table holds data
  without a gap from the report's start, as the last run that extended it knew;
- per range of shard units: the range's end and its shard count, and one mark per shard
  written, so the range counts as written once every shard is in.

:func:`watermark` reads them in a few look-ups whatever the table's age: from the contiguous
end, day after day while the days are complete.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Protocol

from ..query.timegrid import BUCKETS, floor
from .reports import ReportJob

__all__ = [
    "EPOCH",
    "Ledger",
    "Marks",
    "contiguous_key",
    "day_key",
    "day_marks",
    "instant",
    "is_day_key",
    "kept_marks",
    "removal_marks",
    "seconds",
    "shard_marks",
    "watermark",
]

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_DAY = BUCKETS["DAY"]  # the export's unit: a UTC day
_SHARD_BASE = 1000  # shards per range at most, in the range's record


class Ledger(Protocol):
    """What :func:`watermark` needs of a table: one mark by its name."""

    def mark(self, key: str) -> int | None:
        """The mark named ``key``, or ``None`` when the table has none."""
        ...


@dataclass(frozen=True)
class Marks:
    """Marks to record with a write.

    Attributes:
        values: mark name → value.
        exact: set them as given (a full refresh, a removal); else a mark only grows (a
            destination that merges marks keeps the larger of the old and the new value).
    """

    values: dict[str, int] = field(default_factory=dict)
    exact: bool = False

    def __or__(self, other: Marks) -> Marks:
        return Marks({**self.values, **other.values}, self.exact or other.exact)


def seconds(when: datetime) -> int:
    """An instant as whole epoch seconds (the value of a mark)."""
    return int((when - EPOCH).total_seconds())


def instant(value: int) -> datetime:
    """The instant a mark's value names."""
    return EPOCH + timedelta(seconds=int(value))


def day_key(report: ReportJob, day: date) -> str:
    """The name of the mark of one UTC day."""
    return f"edgereports/{report.name}/{day.isoformat()}"


def is_day_key(report: ReportJob, key: str) -> date | None:
    """The day a day mark names (``None``: ``key`` is another mark)."""
    prefix = f"edgereports/{report.name}/"
    rest = key[len(prefix) :] if key.startswith(prefix) else ""
    try:
        return date.fromisoformat(rest) if len(rest) == 10 else None
    except ValueError:
        return None


def contiguous_key(report: ReportJob) -> str:
    """The name of the mark of the contiguous end from the report's start."""
    return f"edgereports/{report.name}/from/{report.start.date().isoformat()}"


def _range_key(report: ReportJob, start: datetime) -> str:
    return f"edgereports/{report.name}/sharded/{start.date().isoformat()}"


def _shard_key(report: ReportJob, start: datetime, shards: int, shard: int) -> str:
    return f"edgereports/{report.name}/sharded/{start.date().isoformat()}/{shards}/{shard}"


def day_marks(report: ReportJob, days: Iterable[date], end: datetime) -> dict[str, int]:
    """The marks of ``days`` written up to ``end`` (each day up to its own end at most)."""
    out = {}
    for day in days:
        midnight = datetime(day.year, day.month, day.day, tzinfo=UTC)
        out[day_key(report, day)] = seconds(min(end, midnight + _DAY))
    return out


def shard_marks(
    report: ReportJob, start: datetime, end: datetime, shard: int, shards: int
) -> dict[str, int]:
    """The marks a shard unit of ``[start, end)`` records: its shard as written, and where the
    range ends and how many shards it has (``end`` seconds x 1000 + shards)."""
    end_seconds = seconds(end)
    return {
        _shard_key(report, start, shards, shard): end_seconds,
        _range_key(report, start): end_seconds * _SHARD_BASE + shards,
    }


def removal_marks(report: ReportJob, removed: Iterable[date], end: datetime) -> Marks:
    """The marks of a full refresh that removed the days ``removed``: each written up to its
    own start (so the watermark stops before it), and the table contiguous up to ``end``."""
    values = {
        day_key(report, d): seconds(datetime(d.year, d.month, d.day, tzinfo=UTC)) for d in removed
    }
    values[contiguous_key(report)] = seconds(end)
    return Marks(values, exact=True)


def kept_marks(report: ReportJob, marks: Mapping[str, int]) -> dict[str, int]:
    """``marks`` without the day marks the contiguous end has passed (they say nothing more);
    for destinations that keep their marks in one record."""
    end = marks.get(contiguous_key(report))
    if end is None:
        return dict(marks)
    first = floor(instant(end), _DAY).date()
    out = {}
    for key, value in marks.items():
        day = is_day_key(report, key)
        if day is None or day >= first:
            out[key] = value
    return out


def watermark(ledger: Ledger | None, report: ReportJob) -> datetime | None:
    """The end of the contiguous data the table holds from the report's start (or ``None``).

    From the contiguous end recorded by the last write that extended it (a lower bound), then
    day after day: a day written complete moves it to the day's end, a day written in part to
    the end of its data (a day a full refresh removed is recorded as written up to its own
    start: it stops there). A table whose units ran in order is read in two look-ups.
    """
    if ledger is None:
        return None
    known = ledger.mark(contiguous_key(report))
    mark = None if known is None else instant(known)
    if mark is None or mark <= report.start:
        mark, day = None, report.start
    else:
        day = floor(mark, _DAY)
    while True:
        version = ledger.mark(day_key(report, day.date()))
        if version is None:
            end = _sharded_range(ledger, report, day)  # written by shard units?
            if end is None:
                return mark
            version = seconds(end)
        mark = instant(version)
        if mark < day + _DAY:
            return mark
        day = max(day + _DAY, floor(mark, _DAY))


def _sharded_range(ledger: Ledger, report: ReportJob, day: datetime) -> datetime | None:
    """The end of the range from ``day`` that shard units wrote whole (every shard), or None."""
    record = ledger.mark(_range_key(report, day))
    if record is None:
        return None
    end, shards = divmod(int(record), _SHARD_BASE)
    for k in range(shards):
        if (ledger.mark(_shard_key(report, day, shards, k)) or 0) < end:
            return None
    return instant(end)
