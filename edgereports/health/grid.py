"""The hours health judges: one grid of whole UTC hours, its history and its hour classes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..query.timegrid import BUCKETS, bucket_starts, floor

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CLASSES", "Grid", "make_grid"]

#: Hour classes: the local hour of day, weekdays and weekends apart.
CLASSES = 48
_HOUR = BUCKETS["HOUR"]


@dataclass(frozen=True)
class Grid:
    """Whole UTC hours ``[first, stop)``: the history ``[first, start)`` and the hours judged.

    Attributes:
        hours: the start of each hour (UTC).
        cls: each hour's class: the local hour of day, plus 24 at weekends (0-47).
        i0: the index of the first hour judged (the hours before it are the history).
        zone: the zone of the classes.
        start: the range's start as asked.
        end: the range's end as asked.
        stop: the end of the hours judged (the end's hour, or the service's present).
    """

    hours: pd.DatetimeIndex
    cls: npt.NDArray[np.int64]
    i0: int
    zone: tzinfo
    start: datetime
    end: datetime
    stop: datetime

    def __len__(self) -> int:
        return len(self.hours)

    @property
    def first(self) -> datetime:
        """The first hour of the history."""
        stamp: datetime = self.hours[0].to_pydatetime()
        return stamp

    def day(self, i: int) -> str:
        """The UTC date of hour ``i`` (``i`` may be the grid's length: its end)."""
        if i >= len(self.hours):
            return (self.hours[-1] + timedelta(hours=1)).strftime("%Y-%m-%d")
        return self.hours[i].strftime("%Y-%m-%d")

    def learnt(self, a: int, b: int | None = None) -> str:
        """How evidence names the history hours ``[a, b)`` (default: to the range's start).

        Example: ``"28 days, 2024-01-17 to 2024-02-14"`` (the last date inclusive).
        """
        b = self.i0 if b is None else b
        days = (b - a) / 24
        shown = f"{days:.0f} days" if days >= 2 else f"{b - a} hours"
        last = self.hours[b - 1] if b > a else self.hours[a]
        return f"{shown}, {self.day(a)} to {last.strftime('%Y-%m-%d')}"


def make_grid(
    first: datetime, start: datetime, stop: datetime, end: datetime, zone: tzinfo
) -> Grid:
    """The grid ``[first, stop)`` with its first judged hour at ``start``'s hour."""
    import pandas as pd

    stop = max(stop, first)
    grid = pd.DatetimeIndex(bucket_starts(first, stop, _HOUR), tz="UTC").as_unit("us")
    local = grid.tz_convert(zone)
    cls = (np.asarray(local.hour) + 24 * (np.asarray(local.day_of_week) >= 5)).astype(np.int64)
    i0 = int(grid.searchsorted(floor(start, _HOUR), side="left"))
    return Grid(grid, cls, min(max(i0, 0), len(grid)), zone, start, end, stop)
