"""The documented v2 reports (see docs/service.md) as named functions.

UE reports (time series per account, optionally one Edge Point ``device``) and Edge Point
reports (the account VLAN's breakout and RAN traffic, by ``customer_name`` or ``device``).
Each returns a :class:`~edgereports.query.Report` written for ``api_version="v2"``; they are
in :data:`edgereports.presets.CATALOGUE`, marked ``api_version="v2"``.

Example:
    >>> ue_connections_series(account_id="A", start="2024-08-13", end="2024-08-14").api_version
    'v2'
"""

from __future__ import annotations

from collections.abc import Iterable

from ..query import Report
from ..query.terms import Expression
from ..query.times import TimeLike

__all__ = [
    "FUNCTIONS",
    "edge_point_breakout_bytes",
    "edge_point_breakout_packets",
    "edge_point_ran_bytes",
    "edge_point_ran_packets",
    "ue_bandwidth_usage",
    "ue_connections_series",
    "ue_online_status_series",
    "ue_session_bytes",
    "ue_session_duration",
    "ue_session_packets",
]

Values = Expression | Iterable[Expression]


def _ue(
    account_id: Expression,
    start: TimeLike,
    end: TimeLike,
    granularity: str,
    device: Values | None,
    *metrics: tuple[str, str],
) -> Report:
    report = Report(account_id=account_id, api_version="v2").between(start, end)
    report = report.granularity(granularity)
    if device is not None:
        report = report.by("device").where(device=device)
    for name, aggregation in metrics:
        report = report.metric(name, aggregation)
    return report


def ue_session_duration(
    *,
    account_id: Expression,
    start: TimeLike,
    end: TimeLike,
    granularity: str = "HOUR",
    device: Values | None = None,
) -> Report:
    """UE session duration in seconds (COUNT), v2."""
    return _ue(
        account_id, start, end, granularity, device, ("ue_session_duration_seconds", "COUNT")
    )


def ue_session_bytes(
    *,
    account_id: Expression,
    start: TimeLike,
    end: TimeLike,
    granularity: str = "HOUR",
    device: Values | None = None,
) -> Report:
    """UE session bytes, uplink and downlink (COUNT), v2."""
    metrics = ("ue_session_uplink_bytes", "COUNT"), ("ue_session_downlink_bytes", "COUNT")
    return _ue(account_id, start, end, granularity, device, *metrics)


def ue_session_packets(
    *,
    account_id: Expression,
    start: TimeLike,
    end: TimeLike,
    granularity: str = "HOUR",
    device: Values | None = None,
) -> Report:
    """UE session packets, uplink and downlink (COUNT), v2."""
    metrics = ("ue_session_uplink_packets", "COUNT"), ("ue_session_downlink_packet", "COUNT")
    return _ue(account_id, start, end, granularity, device, *metrics)


def ue_bandwidth_usage(
    *,
    account_id: Expression,
    start: TimeLike,
    end: TimeLike,
    granularity: str = "HOUR",
    device: Values | None = None,
) -> Report:
    """UE bandwidth usage, uplink and downlink (AVG, bits per second), v2."""
    metrics = ("uplink_bandwidth_usage", "AVG"), ("downlink_bandwidth_usage", "AVG")
    return _ue(account_id, start, end, granularity, device, *metrics)


def ue_connections_series(
    *,
    account_id: Expression,
    start: TimeLike,
    end: TimeLike,
    granularity: str = "HOUR",
    device: Values | None = None,
) -> Report:
    """Peak (MAX) and average (AVG) UE connections, v2."""
    metrics = ("ue_connections", "MAX"), ("ue_connections", "AVG")
    return _ue(account_id, start, end, granularity, device, *metrics)


def ue_online_status_series(
    *,
    account_id: Expression,
    start: TimeLike,
    end: TimeLike,
    granularity: str = "HOUR",
    device: Values | None = None,
) -> Report:
    """UE online status as a time series (EXISTS: 1 where a UE was online), v2."""
    return _ue(account_id, start, end, granularity, device, ("ue_online_status", "EXISTS"))


def _edge(
    path: str,
    unit: str,
    customer_name: Values | None,
    device: Values | None,
    start: TimeLike,
    end: TimeLike,
    granularity: str,
) -> Report:
    report = Report(api_version="v2").between(start, end).granularity(granularity)
    if customer_name is not None:
        report = report.by("customer_name").where(customer_name=customer_name)
    if device is not None:
        report = report.by("device").where(device=device)
    for way in ("egress", "ingress"):
        report = report.metric(f"customer_vlan_{path}_{way}_{unit}", "COUNT")
    return report


def edge_point_breakout_bytes(
    *,
    start: TimeLike,
    end: TimeLike,
    customer_name: Values | None = None,
    device: Values | None = None,
    granularity: str = "HOUR",
) -> Report:
    """Edge Point breakout bytes, egress and ingress (COUNT), by customer_name or device, v2."""
    return _edge("breakout", "bytes", customer_name, device, start, end, granularity)


def edge_point_breakout_packets(
    *,
    start: TimeLike,
    end: TimeLike,
    customer_name: Values | None = None,
    device: Values | None = None,
    granularity: str = "HOUR",
) -> Report:
    """Edge Point breakout packets, egress and ingress (COUNT), by customer_name or device, v2."""
    return _edge("breakout", "packets", customer_name, device, start, end, granularity)


def edge_point_ran_bytes(
    *,
    start: TimeLike,
    end: TimeLike,
    customer_name: Values | None = None,
    device: Values | None = None,
    granularity: str = "HOUR",
) -> Report:
    """Edge Point RAN bytes, egress and ingress (COUNT), by customer_name or device, v2."""
    return _edge("ran", "bytes", customer_name, device, start, end, granularity)


def edge_point_ran_packets(
    *,
    start: TimeLike,
    end: TimeLike,
    customer_name: Values | None = None,
    device: Values | None = None,
    granularity: str = "HOUR",
) -> Report:
    """Edge Point RAN packets, egress and ingress (COUNT), by customer_name or device, v2."""
    return _edge("ran", "packets", customer_name, device, start, end, granularity)


#: The v2 presets, in catalogue order.
FUNCTIONS = (
    ue_session_duration,
    ue_session_bytes,
    ue_session_packets,
    ue_bandwidth_usage,
    ue_connections_series,
    ue_online_status_series,
    edge_point_breakout_bytes,
    edge_point_breakout_packets,
    edge_point_ran_bytes,
    edge_point_ran_packets,
)
