"""The OpenAPI parts of the v2 reporting: the v2 report and the reporting service.

The v2 report takes the key in the query parameter ``Authorization`` (security scheme
``AuthorizationQuery``) and answers a time series (``TimeSeries``) or CSV; the reporting service
takes ``Authorization: Bearer <token>`` (``BearerToken``) and answers ``ServiceAnswer``.
"""

from __future__ import annotations

from ..engine.reporting_service import SERVICE_DIMENSIONS, SERVICE_METRICS
from ..engine.v2 import V2_DIMENSIONS, V2_METRICS
from .openapi_schemas import (
    STR,
    J,
    array,
    enum,
    exact_filter,
    json_content,
    json_or_csv,
    obj,
    record,
    ref,
    strings,
    time_pattern,
    timed_operation,
)

__all__ = ["V2_SECURITY", "v2_paths", "v2_schemas"]

_AGGREGATIONS = ["COUNT", "AVG", "MAX", "MIN", "EXISTS"]

#: The security schemes of the two operations.
V2_SECURITY: J = {
    "AuthorizationQuery": {"type": "apiKey", "in": "query", "name": "Authorization"},
    "BearerToken": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
}


def _metric(names: list[str]) -> J:
    return record({"name": enum(names), "aggregation_type": enum(_AGGREGATIONS)})


def v2_schemas() -> J:
    """The component schemas of the v2 operations."""
    time_value: J = {"type": "string", "pattern": time_pattern("HOUR|DAY|WEEK|MONTH")}
    service_time: J = {"type": "string", "pattern": time_pattern("MINUTE|HOUR|DAY|WEEK|MONTH")}
    v2_filter = exact_filter(["account_id", *V2_DIMENSIONS], STR)
    return {
        "V2ReportRequest": obj(
            {
                "start_date_time": time_value,
                "end_date_time": time_value,
                "granularity": enum(["HOUR", "DAY"]),
                "dimensions": array(enum(V2_DIMENSIONS)),
                "dimension_filter_clauses": array(record({"filters": array(v2_filter)})),
                "metrics": array(_metric(list(V2_METRICS)), 1, 20),
            },
            ["start_date_time", "end_date_time", "metrics"],
        ),
        "ServiceRequest": obj(
            {
                "start_date_time": service_time,
                "end_date_time": service_time,
                "step": {"type": "string", "pattern": r"^(\d+[smhdwy])+$", "example": "5m"},
                "dimension_filters": array(exact_filter(list(SERVICE_DIMENSIONS), STR)),
                "metrics": _metric(list(SERVICE_METRICS)),
            },
            ["start_date_time", "end_date_time", "step", "metrics"],
        ),
        "ServiceAnswer": record(
            {
                **strings(
                    "account_id", "mobile-core-id", "metric", "aggregation_type", "edgepoint"
                ),
                "result": array(record({"time_stamp": STR, "value": {"type": "number"}})),
            }
        ),
    }


def v2_paths() -> J:
    """The two operations, by path."""
    return {
        "/connectivity/v2/report": {
            "post": timed_operation(
                "reportV2",
                "Connectivity report, v2 (UE and Edge Point metrics)",
                "AuthorizationQuery",
                "V2ReportRequest",
                "A time series, each piece stamped at its end",
                json_or_csv(ref("TimeSeries")),
            )
        },
        "/reporting/v2/reporting-service/{coreId}": {
            "post": timed_operation(
                "reportingService",
                "The reporting service: access points and UEs of a mobile core",
                "BearerToken",
                "ServiceRequest",
                "The flat answer",
                json_content(ref("ServiceAnswer")),
                parameters=[{"name": "coreId", "in": "path", "required": True, "schema": STR}],
            )
        },
    }
