"""The eleven query patterns the service documents as named functions, and a catalogue of them.

The catalogue also holds the documented v2 reports (``presets_v2``), marked
``api_version="v2"``.

Each preset takes keyword arguments and returns a :class:`~edgereports.query.Report`. ``start``
and ``end`` accept what :meth:`Report.between` accepts (datetimes, dates, ISO-8601 strings,
relative dates such as ``"30d"`` and ``"today"``,
keywords). Subscriber presets take one value or a list (a list fans out in the client).

Example:
    >>> from edgereports import presets
    >>> presets.ue_connections_avg_peak(
    ...     account_id="A", start="2022-07-07T00:00:00Z", end="2022-07-08T00:00:00Z"
    ... ).to_request()["metrics"]
    [{'name': 'ue_connections', 'aggregation_type': 'MAX'}, \
{'name': 'ue_connections', 'aggregation_type': 'AVG'}]
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..errors import QueryError
from ..query import Report
from ..query.terms import Expression
from ..query.times import NOW, TimeLike
from ..query.vocabulary import suggest
from .v2 import (
    FUNCTIONS as V2_FUNCTIONS,
)
from .v2 import (
    edge_point_breakout_bytes,
    edge_point_breakout_packets,
    edge_point_ran_bytes,
    edge_point_ran_packets,
    ue_bandwidth_usage,
    ue_connections_series,
    ue_online_status_series,
    ue_session_bytes,
    ue_session_duration,
    ue_session_packets,
)

__all__ = [
    "CATALOGUE",
    "Param",
    "PresetInfo",
    "active_sim_count",
    "bandwidth_percentile",
    "build",
    "byte_usage_subscriber",
    "concurrent_online_ues",
    "device_status",
    "edge_point_breakout_bytes",
    "edge_point_breakout_packets",
    "edge_point_ran_bytes",
    "edge_point_ran_packets",
    "get",
    "names",
    "realtime_bandwidth",
    "time_usage_enterprise",
    "time_usage_subscriber",
    "ue_bandwidth_usage",
    "ue_connections_avg_peak",
    "ue_connections_enterprise",
    "ue_connections_series",
    "ue_connections_subscriber",
    "ue_online_status_series",
    "ue_session_bytes",
    "ue_session_duration",
    "ue_session_packets",
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


@dataclass(frozen=True)
class Param:
    """A preset parameter: its name, whether it is required, and what it means."""

    name: str
    required: bool
    help: str
    default: object = None


@dataclass(frozen=True)
class PresetInfo:
    """A catalogue entry: name, one-line purpose, parameters, the function, its API version."""

    name: str
    purpose: str
    params: tuple[Param, ...]
    function: Callable[..., Report]
    api_version: str = "v1"

    @property
    def is_now(self) -> bool:
        """True for presets that report the current value unless given a start and end."""
        return not any(p.name == "start" and p.required for p in self.params)


_PARAM_HELP = {
    "account_id": "the account to report on",
    "start": "range start: ISO-8601 with offset, a date, a relative date ('7d', 'yesterday') "
    "or a service keyword such as 'LAST DAY' (a current-value preset: none means now)",
    "end": f"range end: ISO-8601 with offset, a date, a relative date ('today') or {NOW!r}",
    "msisdn": "one subscriber MSISDN or a list of them",
    "imsi": "one subscriber IMSI or a list of them",
    "customer_site_id": "one customer site id or a list of them",
    "percentile": f"the percentile to compute (0-100, default {DEFAULT_PERCENTILE})",
    "granularity": "the bucket length: DAY or HOUR",
    "device": "one Edge Point (v2 'device': a customer site, e.g. BLR-1001) or a list of them",
    "customer_name": "one customer name or a list of them",
}

_FUNCTIONS: tuple[Callable[..., Report], ...] = (
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


def _info(function: Callable[..., Report], api_version: str = "v1") -> PresetInfo:
    params = tuple(
        Param(
            p.name,
            p.default is inspect.Parameter.empty,
            _PARAM_HELP[p.name],
            None if p.default is inspect.Parameter.empty else p.default,
        )
        for p in inspect.signature(function).parameters.values()
    )
    purpose = (function.__doc__ or "").strip().splitlines()[0]
    return PresetInfo(function.__name__, purpose, params, function, api_version)


#: The eleven documented presets, in their documented order, then the v2 presets.
CATALOGUE: tuple[PresetInfo, ...] = tuple(_info(f) for f in _FUNCTIONS) + tuple(
    _info(f, "v2") for f in V2_FUNCTIONS
)


def names(api_version: str | None = None) -> list[str]:
    """The preset names, in catalogue order (only those of ``api_version`` when given)."""
    return [p.name for p in CATALOGUE if api_version in (None, p.api_version)]


def get(name: str) -> PresetInfo:
    """Look up a preset by name.

    Raises:
        QueryError: no such preset (with a "did you mean" hint).
    """
    for info in CATALOGUE:
        if info.name == name:
            return info
    raise QueryError(
        f"unknown preset {name!r}{suggest(name, names())} (presets: {', '.join(names())})",
        field="preset",
    )


def build(name: str, **params: object) -> Report:
    """Build the report of preset ``name`` from keyword parameters.

    Raises:
        QueryError: unknown preset, a missing or unexpected parameter, or an invalid value.
    """
    info = get(name)
    allowed = {p.name for p in info.params}
    unexpected = sorted(set(params) - allowed)
    if unexpected:
        raise QueryError(
            f"preset {name!r} takes no parameter {unexpected[0]!r}; "
            f"it takes: {', '.join(p.name for p in info.params)}",
            field=unexpected[0],
        )
    missing = [p.name for p in info.params if p.required and params.get(p.name) is None]
    if missing:
        raise QueryError(f"preset {name!r} needs {', '.join(missing)}", field=missing[0])
    return info.function(**{k: v for k, v in params.items() if v is not None})
