"""The reports health pulls, pulled in chunks into compact hourly arrays.

Per subscriber (one request each, through the client's windows, cache and request budget):
hourly time online and bytes, grouped by the device's MSISDN, site and eNodeB (the filter on
the MSISDN pins them, so the service says where the device is). Per site, when the inventory is
partial: the site's own hourly time online (one request per site). And the account's SIM counts
per day (one request). A chunk's frame is laid on the grid and dropped before the next is
pulled, so memory holds 8 bytes per device-hour and one chunk's frame.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .._dependencies import lazy_import
from ..query import Report
from ..query.timegrid import BUCKETS, ceil
from .grid import Grid

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..reporting import ReportingClient
else:
    pa = lazy_import("pyarrow")
    pc = lazy_import("pyarrow.compute")

__all__ = [
    "CHUNK",
    "METRICS",
    "Pulled",
    "device_report",
    "pull_devices",
    "pull_sim_counts",
    "pull_sites",
    "site_report",
]

#: The metrics pulled per subscriber and hour (COUNT: the device's own, pinned by its MSISDN).
METRICS = ("time_usage_seconds", "uplink_bytes", "downlink_bytes")
#: Subscribers per pulled chunk: what one frame holds before it is laid on the grid.
CHUNK = 128
_PROVENANCE = ("request", "shape", "source", "dropped_after_end", "empty", "failures")
F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]


def device_report(
    account_id: str, msisdns: Sequence[str], start: datetime, end: datetime
) -> Report:
    """Per subscriber, its site and eNodeB: hourly time online and bytes over ``[start, end)``
    (history included); it fans out one request per MSISDN."""
    report = (
        Report(account_id=account_id)
        .between(start, end)
        .granularity("HOUR")
        .by("msisdn", "customer_site_id", "enodeb_ip")
        .where(msisdn=list(msisdns))
    )
    for name in METRICS:
        report = report.metric(name, "COUNT")
    return report


def site_report(account_id: str, sites: Sequence[str], start: datetime, end: datetime) -> Report:
    """Per customer site, the hourly time online of all its devices (one request per site)."""
    return (
        Report(account_id=account_id)
        .between(start, end)
        .granularity("HOUR")
        .by("customer_site_id")
        .where(customer_site_id=list(sites))
        .metric(METRICS[0], "COUNT")
    )


@dataclass
class Pulled:
    """What the service told about the subscribers, on the grid.

    Attributes:
        seconds: seconds online, ``(subscribers, hours)``.
        octets: uplink plus downlink bytes, ``(subscribers, hours)``.
        answered: per subscriber, whether the service sent any row for it.
        sites: the customer site each subscriber's rows named (by MSISDN).
        enodebs: the eNodeB each subscriber's rows named (by MSISDN).
        reports: the provenance of each report pulled (request, requests sent, rows, cache).
    """

    seconds: F32
    octets: F32
    answered: npt.NDArray[np.bool_]
    sites: dict[str, str] = field(default_factory=dict)
    enodebs: dict[str, str] = field(default_factory=dict)
    reports: list[dict[str, Any]] = field(default_factory=list)


class _Provenance:
    """The provenance of one report pulled in chunks: the first chunk's, with counts summed."""

    def __init__(self, name: str) -> None:
        self.out: dict[str, Any] = {"report": name, "rows": 0, "requests": 0, "chunks": 0}

    def add(self, frame: pd.DataFrame, requests: int) -> None:
        out = self.out
        if not out["chunks"]:
            out.update({k: frame.attrs[k] for k in _PROVENANCE if k in frame.attrs})
        elif frame.attrs.get("failures"):
            out.setdefault("failures", []).extend(frame.attrs["failures"])
        cache = frame.attrs.get("cache")
        if isinstance(cache, dict):
            kept = out.setdefault("cache", {"hits": 0, "misses": 0, "provisional": 0})
            for key in ("hits", "misses", "provisional"):
                kept[key] += int(cache.get(key, 0))
        out["rows"] += len(frame)
        out["requests"] += requests
        out["chunks"] += 1


def _hour_index(grid: Grid, stamps: pd.Series) -> npt.NDArray[np.int64]:
    import pandas as pd

    at: npt.NDArray[np.int64] = grid.hours.get_indexer(pd.DatetimeIndex(stamps))
    return at


def pull_devices(
    client: ReportingClient,
    account_id: str,
    msisdns: Sequence[str],
    grid: Grid,
    *,
    progress: Callable[[int], object] | None = None,
) -> Pulled:
    """Pull every subscriber's hourly report in chunks of :data:`CHUNK` and lay it on the grid.

    Raises:
        EdgeReportsError: a chunk failed (see :meth:`ReportingClient.fetch`).
    """
    n, h = len(msisdns), len(grid)
    out = Pulled(np.zeros((n, h), np.float32), np.zeros((n, h), np.float32), np.zeros(n, bool))
    row = {m: i for i, m in enumerate(msisdns)}
    names, rows = pa.array(list(row), pa.string()), np.fromiter(row.values(), np.int64, len(row))
    end = ceil(grid.end, BUCKETS["HOUR"])
    told = _Provenance("devices")
    for c0 in range(0, n, CHUNK):
        chunk = list(msisdns[c0 : c0 + CHUNK])
        frame = client.fetch(device_report(account_id, chunk, grid.first, end))
        told.add(frame, len(chunk))
        if len(frame):
            _lay(frame, out, names, rows, grid)
        del frame
        if progress is not None:
            progress(len(chunk))
    out.reports.append(told.out)
    return out


def _column(frame: pd.DataFrame, name: str) -> pa.ChunkedArray:
    """A column of a pulled frame as Arrow (its own chunks, no copy)."""
    column: pa.ChunkedArray = pa.chunked_array(pa.array(frame[name]))
    return column


def _lay(frame: pd.DataFrame, out: Pulled, names: pa.Array, rows: I64, grid: Grid) -> None:
    """Add one chunk's rows to ``out``: their seconds and bytes at their subscriber's row
    (``rows`` per position in ``names``) and hour, and the site and eNodeB of each subscriber's
    first row."""
    code = pc.fill_null(pc.index_in(_column(frame, "msisdn"), value_set=names), -1).to_numpy()
    who = np.where(code >= 0, rows[code], -1)
    at = _hour_index(grid, frame["time_stamp"])
    ok = (at >= 0) & (who >= 0)
    who_i, at_i = who[ok], at[ok]
    value = frame["value"].to_numpy(dtype=np.float64, na_value=0.0)[ok]
    used = pc.fill_null(pc.equal(_column(frame, "metric"), METRICS[0]), False)
    time_used = used.to_numpy()[ok]
    np.add.at(out.seconds, (who_i[time_used], at_i[time_used]), value[time_used])
    np.add.at(out.octets, (who_i[~time_used], at_i[~time_used]), value[~time_used])
    out.answered[who[who >= 0]] = True
    known, first = np.unique(code, return_index=True)
    first = first[known >= 0]
    numbers = names.take(pa.array(known[known >= 0])).to_pylist()
    for column, learnt in (("customer_site_id", out.sites), ("enodeb_ip", out.enodebs)):
        if column in frame.columns:
            values = _column(frame, column).take(pa.array(first)).to_pylist()
            learnt.update(
                (m, str(v)) for m, v in zip(numbers, values, strict=True) if v is not None
            )


def pull_sites(
    client: ReportingClient, account_id: str, sites: Sequence[str], grid: Grid
) -> tuple[dict[str, npt.NDArray[np.float64]], dict[str, Any]]:
    """Each site's own hourly time online on the grid, and the pull's provenance."""
    end = ceil(grid.end, BUCKETS["HOUR"])
    told = _Provenance("sites")
    series: dict[str, npt.NDArray[np.float64]] = {}
    for c0 in range(0, len(sites), CHUNK):
        chunk = list(sites[c0 : c0 + CHUNK])
        frame = client.fetch(site_report(account_id, chunk, grid.first, end))
        told.add(frame, len(chunk))
        for site in chunk:
            series[site] = np.zeros(len(grid))
        if len(frame):
            at = _hour_index(grid, frame["time_stamp"])
            names = frame["customer_site_id"].astype(str).to_numpy()
            values = frame["value"].to_numpy(dtype=np.float64, na_value=0.0)
            for site in chunk:
                mine = (names == site) & (at >= 0)
                np.add.at(series[site], at[mine], values[mine])
    return series, told.out


def pull_sim_counts(
    client: ReportingClient, account_id: str, grid: Grid
) -> tuple[dict[str, int], dict[str, Any]]:
    """The account's active SIMs per UTC day (``YYYY-MM-DD`` -> physical plus eSIM)."""
    from .. import presets

    day = BUCKETS["DAY"]
    report = presets.active_sim_count(
        account_id=account_id, start=grid.first, end=ceil(max(grid.end, grid.first), day)
    )
    frame = client.fetch(report)
    told = _Provenance("sim_counts")
    told.add(frame, 1)
    counts: dict[str, int] = {}
    for date, physical, esim in zip(frame["date"], frame["physical"], frame["esim"], strict=True):
        counts[date.strftime("%Y-%m-%d")] = int(physical or 0) + int(esim or 0)
    return counts, told.out
