"""The documented query patterns as named functions, and a catalogue of them.

``v1`` holds the eleven presets of the v1 reporting API, ``v2`` the documented v2 reports,
``catalogue`` the catalogue of both (the v2 ones marked ``api_version="v2"``): the names, purposes
and parameters that the CLI, the explorer, ``er.fetch`` and export jobs look presets up in.

Example:
    >>> from edgereports import presets
    >>> presets.ue_connections_avg_peak(
    ...     account_id="A", start="2022-07-07T00:00:00Z", end="2022-07-08T00:00:00Z"
    ... ).to_request()["metrics"]
    [{'name': 'ue_connections', 'aggregation_type': 'MAX'}, \
{'name': 'ue_connections', 'aggregation_type': 'AVG'}]
"""

from __future__ import annotations

from .catalogue import CATALOGUE, Param, PresetInfo, build, get, names
from .v1 import (
    DEFAULT_PERCENTILE,
    active_sim_count,
    bandwidth_percentile,
    byte_usage_subscriber,
    concurrent_online_ues,
    device_status,
    realtime_bandwidth,
    time_usage_enterprise,
    time_usage_subscriber,
    ue_connections_avg_peak,
    ue_connections_enterprise,
    ue_connections_subscriber,
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
    "DEFAULT_PERCENTILE",
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
