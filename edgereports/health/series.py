"""The report ``er.health`` pulls, and its frame as hourly arrays per subscriber."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..query import Report
from ..query.timegrid import BUCKETS, bucket_starts

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["METRICS", "Hourly", "health_report", "hourly"]

#: The metrics pulled per subscriber and hour (COUNT: the device's own, pinned by its MSISDN).
METRICS = ("time_usage_seconds", "uplink_bytes", "downlink_bytes")


def health_report(
    account_id: str, msisdns: Sequence[str], start: datetime, end: datetime
) -> Report:
    """The one report behind the flags: per subscriber (and its site), hourly time online and
    bytes over ``[start, end)`` (history included); it fans out one request per MSISDN."""
    report = (
        Report(account_id=account_id)
        .between(start, end)
        .granularity("HOUR")
        .by("msisdn", "customer_site_id")
        .where(msisdn=list(msisdns))
    )
    for name in METRICS:
        report = report.metric(name, "COUNT")
    return report


@dataclass(frozen=True)
class Hourly:
    """Hourly arrays of every subscriber, on one grid of whole UTC hours.

    Attributes:
        hours: the start of each hour (UTC).
        msisdns: the subscribers, in the order asked.
        sites: each subscriber's customer site (None when it had no row).
        seconds: seconds online, ``(subscribers, hours)``.
        bytes: uplink plus downlink bytes, ``(subscribers, hours)``.
        cls: each hour's class: local hour of day, plus 24 at weekends (0-47).
    """

    hours: pd.DatetimeIndex
    msisdns: tuple[str, ...]
    sites: tuple[str | None, ...]
    seconds: npt.NDArray[np.float64]
    bytes: npt.NDArray[np.float64]
    cls: npt.NDArray[np.int64]


def hourly(
    frame: pd.DataFrame, msisdns: Sequence[str], first: datetime, stop: datetime, zone: tzinfo
) -> Hourly:
    """Lay the frame of :func:`health_report` on the grid of whole UTC hours ``[first, stop)``
    (missing hours: 0), one row per MSISDN asked; ``zone``'s hour of day and weekend class
    the hours."""
    import pandas as pd

    grid = pd.DatetimeIndex(bucket_starts(first, stop, BUCKETS["HOUR"]), tz="UTC").as_unit("us")
    local = grid.tz_convert(zone)
    cls = (np.asarray(local.hour) + 24 * (np.asarray(local.day_of_week) >= 5)).astype(np.int64)
    n, h = len(msisdns), len(grid)
    seconds = np.zeros((n, h))
    octets = np.zeros((n, h))
    sites: list[str | None] = [None] * n
    if len(frame):
        row = {m: i for i, m in enumerate(msisdns)}
        who = frame["msisdn"].astype(str).map(row)
        at = grid.get_indexer(pd.DatetimeIndex(frame["time_stamp"]))
        ok = (at >= 0) & who.notna().to_numpy()
        who_i = who.to_numpy()[ok].astype(np.int64)
        at_i = at[ok]
        value = frame["value"].to_numpy(dtype=float, na_value=0.0)[ok]
        metric = frame["metric"].astype(str).to_numpy()[ok]
        time_used = metric == METRICS[0]
        np.add.at(seconds, (who_i[time_used], at_i[time_used]), value[time_used])
        np.add.at(octets, (who_i[~time_used], at_i[~time_used]), value[~time_used])
        if "customer_site_id" in frame.columns:
            firsts = frame.drop_duplicates("msisdn")
            for m, s in zip(firsts["msisdn"].astype(str), firsts["customer_site_id"], strict=True):
                if m in row and not pd.isna(s):
                    sites[row[m]] = str(s)
    return Hourly(grid, tuple(msisdns), tuple(sites), seconds, octets, cls)
