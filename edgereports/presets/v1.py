"""The eleven query patterns the v1 reporting API documents, as named functions.

Each preset takes keyword arguments and returns a :class:`~edgereports.query.Report`. ``start``
and ``end`` accept what :meth:`Report.between` accepts (datetimes, dates, ISO-8601 strings,
relative dates such as ``"30d"`` and ``"today"``, keywords). Subscriber presets take one value
or a list (a list fans out in the client).

Example:
    >>> report = bandwidth_percentile(
    ...     account_id="A", customer_site_id=["S1", "S2"], start="2022-07-01", end="2022-07-08"
    ... )
    >>> [m["name"] for m in report.to_request()["metrics"]]
    ['uplink_bandwidth', 'downlink_bandwidth']
    >>> report.to_request()["metrics"][0]["metric_filter_clauses"]
    [{'filters': [{'operator': 'PERCENTILE', 'comparison_value': 95}]}]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..errors import QueryError
from ..query import Report
from ..query.terms import Expression
from ..query.times import TimeLike

__all__ = [
    "DEFAULT_PERCENTILE",
    "FUNCTIONS",
    "active_sim_count",
    "bandwidth_percentile",
    "byte_usage_subscriber",
    "concurrent_online_ues",
    "device_status",
    "realtime_bandwidth",
    "time_usage_enterprise",
    "time_usage_subscriber",
    "ue_connections_avg_peak",
    "ue_connections_enterprise",
    "ue_connections_subscriber",
]

Values = Expression | Iterable[Expression]
#: Default percentile of :func:`bandwidth_percentile`.
DEFAULT_PERCENTILE = 95


def _base(account_id: Expression, start: TimeLike, end: TimeLike) -> Report:
    return Report(account_id=account_id).between(start, end)


def _now_or_range(
    account_id: Expression, start: TimeLike | None, end: TimeLike | None, granularity: str | None
) -> Report:
    """``NOW`` by default; over ``[start, end)`` (by ``granularity`` buckets) when given."""
    if start is None and end is None:
        if granularity is not None:
            raise QueryError(
                f"granularity={granularity!r} needs start and end (the current value has no "
                "buckets)",
                field="granularity",
            )
        return Report(account_id=account_id).now()
    if start is None or end is None:
        raise QueryError("give both start and end, or neither (the current value)", field="end")
    report = _base(account_id, start, end)
    return report if granularity is None else report.granularity(granularity)


def time_usage_enterprise(
    *, account_id: Expression, start: TimeLike, end: TimeLike, granularity: str = "DAY"
) -> Report:
    """Daily (or hourly) time usage of the whole enterprise (seconds, COUNT)."""
    return (
        _base(account_id, start, end).granularity(granularity).metric("time_usage_seconds", "COUNT")
    )


def time_usage_subscriber(
    *,
    account_id: Expression,
    msisdn: Values,
    start: TimeLike,
    end: TimeLike,
    granularity: str = "DAY",
) -> Report:
    """Daily (or hourly) time usage per subscriber (MSISDN), seconds, COUNT."""
    return (
        _base(account_id, start, end)
        .granularity(granularity)
        .by("msisdn")
        .where(msisdn=msisdn)
        .metric("time_usage_seconds", "COUNT")
    )


def byte_usage_subscriber(
    *,
    account_id: Expression,
    msisdn: Values,
    start: TimeLike,
    end: TimeLike,
    granularity: str = "HOUR",
) -> Report:
    """Hourly (or daily) uplink and downlink bytes per subscriber (MSISDN), COUNT."""
    return (
        _base(account_id, start, end)
        .granularity(granularity)
        .by("msisdn")
        .where(msisdn=msisdn)
        .metric("uplink_bytes", "COUNT")
        .metric("downlink_bytes", "COUNT")
    )


def realtime_bandwidth(
    *,
    account_id: Expression,
    start: TimeLike | None = None,
    end: TimeLike | None = None,
    granularity: str | None = None,
) -> Report:
    """Average uplink and downlink bandwidth of the account, now (or over a range)."""
    return (
        _now_or_range(account_id, start, end, granularity)
        .metric("uplink_bandwidth", "AVG")
        .metric("downlink_bandwidth", "AVG")
    )


def bandwidth_percentile(
    *,
    account_id: Expression,
    customer_site_id: Values,
    start: TimeLike,
    end: TimeLike,
    percentile: int | float = DEFAULT_PERCENTILE,
) -> Report:
    """Uplink and downlink bandwidth at a percentile over the range, per customer site."""
    return (
        _base(account_id, start, end)
        .by("customer_site_id")
        .where(customer_site_id=customer_site_id)
        .metric("uplink_bandwidth", percentile=percentile)
        .metric("downlink_bandwidth", percentile=percentile)
    )


def ue_connections_avg_peak(
    *, account_id: Expression, start: TimeLike, end: TimeLike, granularity: str = "HOUR"
) -> Report:
    """Hourly (or daily) peak (MAX) and average (AVG) UE connections."""
    return (
        _base(account_id, start, end)
        .granularity(granularity)
        .metric("ue_connections", "MAX")
        .metric("ue_connections", "AVG")
    )


def active_sim_count(*, account_id: Expression, start: TimeLike, end: TimeLike) -> Report:
    """Active SIMs per day, physical and eSIM (sim, COUNT)."""
    return _base(account_id, start, end).metric("sim", "COUNT")


def ue_connections_subscriber(
    *,
    account_id: Expression,
    imsi: Values,
    start: TimeLike,
    end: TimeLike,
    granularity: str = "DAY",
) -> Report:
    """Daily (or hourly) UE connections per subscriber (IMSI), COUNT."""
    return (
        _base(account_id, start, end)
        .granularity(granularity)
        .by("imsi")
        .where(imsi=imsi)
        .metric("ue_connections", "COUNT")
    )


def ue_connections_enterprise(
    *, account_id: Expression, start: TimeLike, end: TimeLike, granularity: str = "DAY"
) -> Report:
    """Daily (or hourly) UE connections of the whole enterprise, COUNT."""
    return _base(account_id, start, end).granularity(granularity).metric("ue_connections", "COUNT")


def concurrent_online_ues(
    *,
    account_id: Expression,
    customer_site_id: Values | None = None,
    start: TimeLike | None = None,
    end: TimeLike | None = None,
    granularity: str | None = None,
) -> Report:
    """UEs online per customer site, now (or over a range; one row per site given).

    Without ``customer_site_id`` the answer is one row: the enterprise's total, labelled with
    one site (the top talker), and the client warns (the top-talker rule, docs/design.md).
    With ``start``, ``end`` and ``granularity`` it is a time series (COUNT: 5-minute samples
    of connected devices per bucket).
    """
    report = _now_or_range(account_id, start, end, granularity).by("customer_site_id")
    if customer_site_id is not None:
        report = report.where(customer_site_id=customer_site_id)
    return report.metric("ue_connections", "COUNT")


def device_status(
    *,
    account_id: Expression,
    imsi: Values | None = None,
    start: TimeLike | None = None,
    end: TimeLike | None = None,
    granularity: str | None = None,
) -> Report:
    """Online status per device, now (or over a range), with eNodeB IP, UE IP, LR id.

    Pass the devices' IMSIs (one row each: a device filter pins the device's other
    dimensions). Without ``imsi`` the answer is one row for one device of the account (the
    top talker), and the client warns (the top-talker rule, docs/design.md). With ``start``,
    ``end`` and ``granularity``, whether the device was online in each bucket (EXISTS: 1 or 0).
    """
    report = _now_or_range(account_id, start, end, granularity).by(
        "enodeb_ip", "ue_ip", "lr_id", "imsi"
    )
    if imsi is not None:
        report = report.where(imsi=imsi)
    return report.metric("ue_online_status", "EXISTS")


#: The eleven presets, in their documented order.
FUNCTIONS: tuple[Callable[..., Report], ...] = (
    time_usage_enterprise,
    time_usage_subscriber,
    byte_usage_subscriber,
    realtime_bandwidth,
    bandwidth_percentile,
    ue_connections_avg_peak,
    active_sim_count,
    ue_connections_subscriber,
    ue_connections_enterprise,
    concurrent_online_ues,
    device_status,
)
