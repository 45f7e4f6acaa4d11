"""The report API versions: v1 and the live service's v2, their names.

A :class:`~edgereports.query.Report` carries the version it is written for (``api_version``, never
sent). Each version has its own vocabulary: a name known only to the other version is a
:class:`~edgereports.errors.QueryError` that names its counterpart when there is one (``enodeb_ip``
in v1 is ``enb_ip`` in v2); a name known to neither passes with a warning. v2 also documents which
aggregations each metric allows (:data:`V2_AGGREGATIONS`).

Example:
    >>> vocabulary("v2").dimensions[:3]
    ('customer_id', 'device', 'enb_ip')
    >>> counterpart("enodeb_ip", "v2")
    'enb_ip'
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import QueryError
from .vocabulary import AGGREGATIONS, DIMENSIONS, GRANULARITIES, METRICS

__all__ = [
    "API_VERSIONS",
    "V2_AGGREGATIONS",
    "V2_DIMENSIONS",
    "V2_DIMENSION_MEANINGS",
    "V2_EDGE_POINT_METRICS",
    "V2_METRICS",
    "V2_UE_METRICS",
    "Vocabulary",
    "check_aggregation",
    "check_foreign",
    "check_version",
    "counterpart",
    "other",
    "stamps_at_end",
    "vocabulary",
]

API_VERSIONS = ("v1", "v2")

#: The UE metrics of v2 (``ue_session_downlink_packet`` is singular, as documented).
V2_UE_METRICS = (
    "downlink_bandwidth_usage",
    "uplink_bandwidth_usage",
    "ue_session_duration_seconds",
    "ue_session_downlink_bytes",
    "ue_session_downlink_packet",
    "ue_session_uplink_bytes",
    "ue_session_uplink_packets",
    "ue_connections",
    "ue_online_status",
)
#: The Edge Point metrics of v2: breakout and RAN, egress and ingress, bytes and packets.
V2_EDGE_POINT_METRICS = tuple(
    f"customer_vlan_{path}_{way}_{unit}"
    for path in ("breakout", "ran")
    for way in ("egress", "ingress")
    for unit in ("bytes", "packets")
)
V2_METRICS = V2_UE_METRICS + V2_EDGE_POINT_METRICS
#: v2 dimensions: the UE reports' (``device`` is the Edge Point) and the Edge Point reports'.
V2_DIMENSIONS = ("customer_id", "device", "enb_ip", "seid", "ue_ip", "customer_name")
#: What each v2 dimension names (v2 says ``device`` for the Edge Point: a customer site).
V2_DIMENSION_MEANINGS: dict[str, str] = {
    "customer_id": "the customer (the account) the UE belongs to",
    "device": "the Edge Point serving the UE: one customer site, such as BLR-1001 (not a "
    "UE; v1 calls the site customer_site_id)",
    "enb_ip": "the eNodeB (radio access point) IP; v1 spells it enodeb_ip",
    "seid": "the UE's session id",
    "ue_ip": "the UE's IP address",
    "customer_name": "the customer's name, which Edge Point reports filter on",
}
#: The aggregations v2 documents per metric (every metric not named here: the default).
V2_AGGREGATIONS: dict[str, tuple[str, ...]] = {
    "ue_online_status": ("EXISTS",),
    "ue_connections": ("COUNT", "MAX", "AVG"),
}
_V2_DEFAULT_AGGREGATIONS = ("COUNT", "MAX", "MIN", "AVG")

# v1 name <-> v2 name, where the two APIs name one thing differently.
_PAIRS = (
    ("enodeb_ip", "enb_ip"),
    ("uplink_bandwidth", "uplink_bandwidth_usage"),
    ("downlink_bandwidth", "downlink_bandwidth_usage"),
    ("uplink_bytes", "ue_session_uplink_bytes"),
    ("downlink_bytes", "ue_session_downlink_bytes"),
    ("time_usage_seconds", "ue_session_duration_seconds"),
)
_COUNTERPARTS = {"v1": {b: a for a, b in _PAIRS}, "v2": dict(_PAIRS)}


@dataclass(frozen=True)
class Vocabulary:
    """The known names of one API version: its metrics, the dimensions one can group by and
    those one can filter on (``account_id`` too), its granularity and aggregation tokens."""

    version: str
    metrics: tuple[str, ...]
    dimensions: tuple[str, ...]
    filter_dimensions: tuple[str, ...]
    granularities: tuple[str, ...]
    aggregations: tuple[str, ...]


_VOCABULARIES = {
    "v1": Vocabulary("v1", METRICS, DIMENSIONS, ("account_id", *DIMENSIONS), GRANULARITIES,
                     AGGREGATIONS),
    "v2": Vocabulary("v2", V2_METRICS, V2_DIMENSIONS, ("account_id", *V2_DIMENSIONS),
                     GRANULARITIES, AGGREGATIONS),
}  # fmt: skip


def check_version(value: object, field: str = "api_version") -> str:
    """Return ``value`` if it is a known API version.

    Raises:
        QueryError: naming the field and the versions.
    """
    if value not in API_VERSIONS:
        raise QueryError(
            f"{field} must be one of {', '.join(map(repr, API_VERSIONS))}, got {value!r}",
            field=field,
        )
    return str(value)


def stamps_at_end(version: str) -> bool:
    """Whether API ``version`` stamps each piece of a range at its end.

    v1 stamps a bucket at its start (as the documented samples show). v2 splits the range at
    bucket boundaries and stamps each piece at its end (see docs/service.md), so a
    window of v2 owns the stamps in ``(start, end]`` instead of ``[start, end)``.
    """
    return check_version(version) == "v2"


def vocabulary(version: str) -> Vocabulary:
    """The known names of API ``version``.

    Raises:
        QueryError: an unknown version.
    """
    return _VOCABULARIES[check_version(version)]


def other(version: str) -> str:
    """The other API version."""
    return "v1" if version == "v2" else "v2"


def counterpart(name: str, version: str) -> str | None:
    """The name in ``version`` of a name of the other version, or None when there is none."""
    return _COUNTERPARTS[check_version(version)].get(name)


def check_foreign(name: str, field: str, known: tuple[str, ...], version: str) -> None:
    """Refuse a name that only the other version knows, naming its counterpart; ``known`` are
    the report ``version``'s names of the same kind (metrics or dimensions).

    Raises:
        QueryError: ``name`` is not in ``known`` but the other version knows it.
    """
    if name in known:
        return
    theirs = vocabulary(other(version))
    if name not in theirs.metrics + theirs.filter_dimensions:
        return
    twin = counterpart(name, version)
    hint = (
        f"; in {version} it is {twin!r}"
        if twin
        else f" with no {version} counterpart; {version} knows: {', '.join(known)}"
    )
    raise QueryError(f"{field} {name!r} is a {theirs.version} name{hint}", field=field)


def check_aggregation(name: str, aggregation: str | None, field: str, version: str) -> None:
    """Apply the per-metric aggregation rules v2 documents (v1 documents none).

    Raises:
        QueryError: a known v2 metric with an aggregation it does not allow.

    Example:
        >>> check_aggregation("ue_online_status", "COUNT", "metrics[0]", "v2")
        Traceback (most recent call last):
        ...
        edgereports.errors.QueryError: metrics[0].aggregation_type 'COUNT' is not allowed \
for 'ue_online_status' in v2; allowed: EXISTS
    """
    if version != "v2" or name not in V2_METRICS:
        return
    allowed = V2_AGGREGATIONS.get(name, _V2_DEFAULT_AGGREGATIONS)
    if aggregation not in allowed:
        where = f"{field}.aggregation_type"
        raise QueryError(
            f"{where} {aggregation!r} is not allowed for {name!r} in v2; "
            f"allowed: {', '.join(allowed)}",
            field=where,
        )
