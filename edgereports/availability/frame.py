"""The ledger frame: one row per subject and bucket, the hours of each state counted.

Buckets follow the project's one rule: aligned in UTC (a DAY is a UTC day, a MONTH a UTC
calendar month), stamped at their start; an hour counts in the bucket that holds it. The
frame's long form (:func:`ledger_series`) is a time series frame (``metric`` and ``value``),
which the export writes like any report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .columns import COLUMNS, SERIES, aggregation, place_columns
from .hours import STATES, Hours

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["empty_ledger", "ledger_frame", "ledger_series"]

_HOURS = [f"{s}_hours" for s in STATES]


def empty_ledger(by: str) -> pd.DataFrame:
    """A ledger without rows (the full schema)."""
    import pandas as pd

    columns: dict[str, Any] = {"time_stamp": pd.Series([], dtype="datetime64[us, UTC]")}
    for name in ("account_id", *place_columns(by)):
        columns[name] = pd.Series([], dtype="string")
    for name in COLUMNS:
        dtype = "float64" if name == "availability_pct" else "Int64"
        columns[name] = pd.Series([], dtype="string" if name == "basis" else dtype)
    return pd.DataFrame(columns)


def _buckets(hours: pd.DatetimeIndex, granularity: str | None) -> pd.DatetimeIndex:
    """The start of the bucket holding each hour (UTC)."""
    import pandas as pd

    if granularity == "HOUR":
        return hours
    if granularity == "DAY":
        return hours.floor("D")
    if granularity == "MONTH":
        return pd.DatetimeIndex(
            pd.to_datetime({"year": hours.year, "month": hours.month, "day": 1}), tz="UTC"
        ).as_unit("us")
    return pd.DatetimeIndex([hours[0]] * len(hours)) if len(hours) else hours


def ledger_frame(
    found: Hours, hours: pd.DatetimeIndex, by: str, granularity: str | None, account: str
) -> pd.DataFrame:
    """The ledger of ``found`` (codes over ``hours``, the judged UTC hours), counted per
    subject and bucket; rows by subject, then bucket."""
    import pandas as pd

    out = empty_ledger(by)
    if not found.subjects or not len(hours):
        return out
    starts = _buckets(hours, granularity).as_unit("us")
    stamps, bucket = np.unique(starts.asi8, return_inverse=True)
    s, b, k = len(found.subjects), len(stamps), len(STATES)
    cell = (np.arange(s)[:, None] * b + bucket[None, :]) * k + found.codes.astype(np.int64)
    counts = np.bincount(cell.ravel(), minlength=s * b * k).reshape(s * b, k)
    columns: dict[str, Any] = {
        "time_stamp": pd.to_datetime(np.tile(stamps, s), unit="us", utc=True),
        "account_id": [account] * (s * b),
    }
    names = place_columns(by)
    values = {
        names[0]: found.subjects,
        "customer_site_id": [site for site, _ in found.places],
        "enodeb_ip": [enodeb for _, enodeb in found.places],
    }
    for name in names:
        columns[name] = np.repeat(np.array(values[name], dtype=object), b)
    for j, name in enumerate(_HOURS):
        columns[name] = counts[:, j]
    frame = pd.DataFrame(columns)
    frame["hours"] = counts.sum(axis=1)
    frame["excluded_hours"] = frame["maintenance_hours"] + frame["inactive_hours"]
    decided = frame["available_hours"] + frame["unavailable_hours"]
    with np.errstate(invalid="ignore", divide="ignore"):
        pct = 100.0 * frame["available_hours"].to_numpy() / decided.to_numpy()
    frame["availability_pct"] = np.where(decided.to_numpy() > 0, pct, np.nan)
    frame["basis"] = np.repeat(np.array(found.basis, dtype=object), b)
    return frame[list(out.columns)].astype(out.dtypes.to_dict())


def ledger_series(ledger: pd.DataFrame) -> pd.DataFrame:
    """The ledger in long form: a time series frame (``time_stamp``, ``account_id``, the
    subject's columns, ``metric``, ``aggregation``, ``percentile``, ``value``), one row per
    subject, bucket and counted column (:data:`SERIES`: hours as COUNT, the percentage as AVG),
    ordered by bucket, subject and metric; what the export writes."""

    from ..schema import validate_frame

    dims = [c for c in ledger.columns if c in ("msisdn", "customer_site_id", "enodeb_ip")]
    keys = ["time_stamp", "account_id", *dims]
    long = ledger.melt(id_vars=keys, value_vars=list(SERIES), var_name="metric")
    long["aggregation"] = long["metric"].map(aggregation).astype("string")
    long["percentile"] = np.nan
    long["value"] = long["value"].astype("float64")
    order = {name: i for i, name in enumerate(SERIES)}
    long = long.sort_values(
        [*keys[:1], *dims, "metric"], key=lambda c: c.map(order) if c.name == "metric" else c
    )
    columns = [*keys, "metric", "aggregation", "percentile", "value"]
    framed = long[columns].reset_index(drop=True)
    framed.attrs = {"shape": "timeseries", "source": "availability"}
    return validate_frame(framed, "timeseries")
