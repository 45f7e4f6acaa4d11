"""The OpenAPI parts of the v2 reporting: the v2 report and the reporting service.

The v2 report takes the key in the query parameter ``Authorization`` (security scheme
``AuthorizationQuery``) and answers a time series (``TimeSeries``) or CSV; the reporting service
takes ``Authorization: Bearer <token>`` (``BearerToken``) and answers ``ServiceAnswer``.
"""

from __future__ import annotations

from ..engine.reporting_service import SERVICE_DIMENSIONS, SERVICE_METRICS
from ..engine.v2 import V2_DIMENSIONS, V2_METRICS
from .openapi_schemas import TIME_PATTERN, J, json_content, obj, ref

__all__ = ["V2_SECURITY", "v2_paths", "v2_schemas"]

_STR: J = {"type": "string"}
_AGGREGATIONS = ["COUNT", "AVG", "MAX", "MIN", "EXISTS"]
_SERVICE_TIME = (
    r"^(NOW|LAST (MINUTE|HOUR|DAY|WEEK|MONTH)|20\d\d-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
    r"T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))$"
)

#: The security schemes of the two operations.
V2_SECURITY: J = {
    "AuthorizationQuery": {"type": "apiKey", "in": "query", "name": "Authorization"},
    "BearerToken": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
}


def _filters(names: list[str]) -> J:
    return obj(
        {
            "dimension_name": {"type": "string", "enum": names},
            "operator": {"type": "string", "enum": ["EXACT"]},
            "expressions": {"type": "array", "minItems": 1, "maxItems": 1000, "items": _STR},
        },
        ["dimension_name", "operator", "expressions"],
    )


def v2_schemas() -> J:
    """The component schemas of the v2 operations."""
    time_value: J = {"type": "string", "pattern": TIME_PATTERN}
    metric = obj(
        {
            "name": {"type": "string", "enum": list(V2_METRICS)},
            "aggregation_type": {"type": "string", "enum": _AGGREGATIONS},
        },
        ["name", "aggregation_type"],
    )
    clause = obj(
        {"filters": {"type": "array", "items": _filters(["account_id", *V2_DIMENSIONS])}},
        ["filters"],
    )
    return {
        "V2ReportRequest": obj(
            {
                "start_date_time": time_value,
                "end_date_time": time_value,
                "granularity": {"type": "string", "enum": ["HOUR", "DAY"]},
                "dimensions": {"type": "array", "items": {"type": "string",
                                                          "enum": list(V2_DIMENSIONS)}},
                "dimension_filter_clauses": {"type": "array", "items": clause},
                "metrics": {"type": "array", "minItems": 1, "maxItems": 20, "items": metric},
            },
            ["start_date_time", "end_date_time", "metrics"],
        ),
        "ServiceRequest": obj(
            {
                "start_date_time": {"type": "string", "pattern": _SERVICE_TIME},
                "end_date_time": {"type": "string", "pattern": _SERVICE_TIME},
                "step": {"type": "string", "pattern": r"^(\d+[smhdwy])+$", "example": "5m"},
                "dimension_filters": {
                    "type": "array",
                    "items": _filters(list(SERVICE_DIMENSIONS)),
                },
                "metrics": obj(
                    {
                        "name": {"type": "string", "enum": list(SERVICE_METRICS)},
                        "aggregation_type": {"type": "string", "enum": _AGGREGATIONS},
                    },
                    ["name", "aggregation_type"],
                ),
            },
            ["start_date_time", "end_date_time", "step", "metrics"],
        ),
        "ServiceAnswer": obj(
            {
                "account_id": _STR,
                "mobile-core-id": _STR,
                "metric": _STR,
                "aggregation_type": _STR,
                "edgepoint": _STR,
                "result": {
                    "type": "array",
                    "items": obj(
                        {"time_stamp": _STR, "value": {"type": "number"}},
                        ["time_stamp", "value"],
                    ),
                },
            },
            ["account_id", "mobile-core-id", "metric", "aggregation_type", "edgepoint", "result"],
        ),
    }  # fmt: skip


def v2_paths(server_timing: J) -> J:
    """The two operations, by path."""
    error: J = {"description": "An error", "content": json_content(ref("Error"))}
    return {
        "/connectivity/v2/report": {
            "post": {
                "operationId": "reportV2",
                "summary": "Connectivity report, v2 (UE and Edge Point metrics)",
                "security": [{"AuthorizationQuery": []}],
                "requestBody": {"required": True,
                                "content": json_content(ref("V2ReportRequest"))},
                "responses": {
                    "200": {
                        "description": "A time series, each piece stamped at its end",
                        "headers": {"Server-Timing": server_timing},
                        "content": {
                            "application/json": {"schema": ref("TimeSeries")},
                            "text/csv": {"schema": _STR},
                        },
                    },
                    "default": error,
                },
            }
        },
        "/reporting/v2/reporting-service/{coreId}": {
            "post": {
                "operationId": "reportingService",
                "summary": "The reporting service: access points and UEs of a mobile core",
                "security": [{"BearerToken": []}],
                "parameters": [{"name": "coreId", "in": "path", "required": True,
                                "schema": _STR}],
                "requestBody": {"required": True,
                                "content": json_content(ref("ServiceRequest"))},
                "responses": {
                    "200": {
                        "description": "The flat answer",
                        "headers": {"Server-Timing": server_timing},
                        "content": json_content(ref("ServiceAnswer")),
                    },
                    "default": error,
                },
            }
        },
    }  # fmt: skip
