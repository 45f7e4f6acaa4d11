"""The v2 reporting service (``POST /reporting/v2/reporting-service/{coreId}``): access points.

The body is docs/service.md's; a ``step`` spans at most the range and at least one 5-minute
slot's worth of 10,000 steps. Metrics are counted per 5-minute slot over the scope (the primary
account's devices, narrowed by the filters): ``ap_count`` the access points (eNodeBs) of the
inventory, ``ap_status`` those with a connected UE, ``ue_count`` the devices, ``ue_status`` the
connected devices. A step's value aggregates its slots: MAX, MIN, AVG (three decimals); COUNT
is its fullest slot; EXISTS 1 when any was counted. Steps start at the request's start (not
aligned to the clock) and are stamped at their start in UTC; ``NOW`` is the clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ..model.activity import SLOT
from ..model.network import Network
from ..problems import bad
from .fields import body_object
from .request import _timestamp
from .v2 import exact_filter, resolve, scope_of, slot_profiles

__all__ = ["SERVICE_METRICS", "ServiceQuery", "answer_service", "parse_service"]

SERVICE_METRICS = ("ap_count", "ap_status", "ue_count", "ue_status")
SERVICE_DIMENSIONS = ("device", "enb_ip", "seid", "ue_ip")
_AGGREGATIONS = ("COUNT", "MAX", "MIN", "AVG", "EXISTS")
_LAST = {"LAST MINUTE": 60, "LAST HOUR": 3600, "LAST DAY": 86400, "LAST WEEK": 7 * 86400,
         "LAST MONTH": 30 * 86400}  # fmt: skip
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}
_STEP = re.compile(r"(?:\d+[smhdwy])+")
MAX_STEPS = 10_000
_KEYS = ("start_date_time", "end_date_time", "step", "dimension_filters", "metrics")


@dataclass(frozen=True)
class ServiceQuery:
    """A validated reporting-service request."""

    start: int
    end: int
    keyword: str | None
    step: int
    filters: tuple[tuple[str, tuple[str | int, ...]], ...]
    metric: str
    aggregation: str


def _time(value: Any, field: str) -> tuple[str | None, int]:
    if isinstance(value, str) and value.strip() in ("LAST MINUTE", *_LAST):
        return value.strip(), 0
    keyword, epoch, _, _ = _timestamp(value, field)
    return keyword, epoch


def parse_service(body: Any) -> ServiceQuery:
    """Validate a parsed reporting-service body.

    Raises:
        ApiProblem: 400 naming the field at fault.
    """
    body = body_object(body, _KEYS)
    kw0, t0 = _time(body.get("start_date_time"), "start_date_time")
    kw1, t1 = _time(body.get("end_date_time"), "end_date_time")
    if kw0 == "NOW" or (kw0 is None) != (kw1 is None) or (kw0 is not None and kw1 != "NOW"):
        raise bad("give two timestamps, or a LAST ... keyword with end NOW", "end_date_time")
    if kw0 is None and t1 <= t0:
        raise bad("end_date_time must be after start_date_time", "end_date_time")
    step = body.get("step")
    if not isinstance(step, str) or not _STEP.fullmatch(step):
        raise bad(f"step must be a duration such as 5m or 1h30m, not {step!r}", "step")
    seconds = sum(int(n) * _UNITS[u] for n, u in re.findall(r"(\d+)([smhdwy])", step))
    span = _LAST[kw0] if kw0 is not None else t1 - t0
    if not 0 < seconds <= span:
        raise bad(f"step {step!r} must be positive and within the time window", "step")
    if span / seconds > MAX_STEPS:
        raise bad(f"the answer would hold more than {MAX_STEPS} steps: use a longer step", "step")
    filters = body.get("dimension_filters", [])
    if not isinstance(filters, list):
        raise bad("dimension_filters must be an array of filters", "dimension_filters")
    parsed = [
        exact_filter(f, f"dimension_filters[{i}]", tuple(SERVICE_DIMENSIONS))
        for i, f in enumerate(filters)
    ]
    metric = body.get("metrics")
    if not isinstance(metric, dict) or set(metric) != {"name", "aggregation_type"}:
        raise bad("metrics must be one object with name and aggregation_type", "metrics")
    if metric["name"] not in SERVICE_METRICS:
        raise bad(f"metrics.name must be one of {', '.join(SERVICE_METRICS)}", "metrics.name")
    if metric["aggregation_type"] not in _AGGREGATIONS:
        raise bad(
            f"metrics.aggregation_type must be one of {', '.join(_AGGREGATIONS)}",
            "metrics.aggregation_type",
        )
    return ServiceQuery(t0, t1, kw0, seconds, tuple(parsed), metric["name"],
                        metric["aggregation_type"])  # fmt: skip


def answer_service(q: ServiceQuery, net: Network, now: float, core_id: str) -> dict[str, Any]:
    """Compute the flat answer of a validated reporting-service request.

    Raises:
        ApiProblem: a request too large (400).
    """
    account, dev = scope_of(net, q.filters)
    t0, t1 = resolve(q.start, q.end, q.keyword, now, _LAST)
    starts = np.arange(t0, t1, q.step, dtype=np.int64)
    w0, w1 = t0 // SLOT * SLOT, -(-t1 // SLOT) * SLOT
    aps = np.asarray(net.arrays["enodeb"][dev], dtype=np.int64)
    per_slot = np.zeros((w1 - w0) // SLOT)
    if q.metric in ("ap_count", "ue_count"):
        per_slot += len(np.unique(aps)) if q.metric == "ap_count" else len(dev)
    elif q.metric == "ue_status":
        if len(dev):
            per_slot = slot_profiles(net, dev, w0, w1, ("C",))["C"]
    else:
        for ap in np.unique(aps):
            connected = slot_profiles(net, dev[aps == ap], w0, w1, ("C",))["C"]
            per_slot += connected > 0
    values = []
    for s in starts:
        lo, hi = (int(s) - w0) // SLOT, -(-(min(int(s) + q.step, t1) - w0) // SLOT)
        part = per_slot[lo:hi]
        if q.aggregation in ("COUNT", "MAX"):
            value = float(part.max())
        elif q.aggregation == "MIN":
            value = float(part.min())
        elif q.aggregation == "AVG":
            value = round(float(part.mean()), 3)
        else:
            value = float(part.max() > 0)
        values.append(int(value) if value.is_integer() else value)
    device = dict(q.filters).get("device", ("ALL",))[0]
    return {
        "account_id": net.accounts[account].account_id,
        "mobile-core-id": core_id,
        "metric": q.metric,
        "aggregation_type": q.aggregation,
        "edgepoint": device,
        "result": [
            {"time_stamp": datetime.fromtimestamp(int(s), UTC).isoformat(), "value": v}
            for s, v in zip(starts.tolist(), values, strict=True)
        ],
    }
