"""Building blocks of the OpenAPI document: component schemas and the campaign form."""

from __future__ import annotations

from typing import Any

from ..engine.request import AGGREGATIONS, DIMENSIONS, GRANULARITIES, METRICS
from .campaigns import FORM_FIELDS
from .patterns import URL_PATTERN

__all__ = ["J", "campaign_form", "json_content", "obj", "ref", "responses", "schemas"]

TIME_PATTERN = (
    r"^(NOW|LAST (HOUR|DAY|WEEK|MONTH)|20\d\d-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
    r"T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))$"
)
LOCAL_PATTERN = r"^20\d\d-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d$"
ORIGIN_PATTERN = r"^https?://[A-Za-z0-9.-]+(:\d{1,5})?$"

J = dict[str, Any]
_STR: J = {"type": "string"}
_INT: J = {"type": "integer"}
_BOOL: J = {"type": "boolean"}


def ref(name: str) -> J:
    """Return a reference to a component schema."""
    return {"$ref": f"#/components/schemas/{name}"}


def obj(props: J, required: list[str] | None = None, extra: Any = False) -> J:
    """Return an object schema."""
    out: J = {"type": "object", "properties": props, "additionalProperties": extra}
    if required:
        out["required"] = required
    return out


def json_content(schema: J) -> J:
    """Return a JSON content map."""
    return {"application/json": {"schema": schema}}


def responses(ok: J, description: str = "OK") -> J:
    """Return a 200 answer and a default JSON error."""
    return {
        "200": {"description": description, "content": json_content(ok)},
        "default": {"description": "An error", "content": json_content(ref("Error"))},
    }


def schemas() -> J:
    """Return the component schemas."""
    filt = obj(
        {
            "dimension_name": {"type": "string", "enum": ["account_id", *DIMENSIONS]},
            "operator": {"type": "string", "enum": ["EXACT"]},
            "expressions": {
                "type": "array",
                "minItems": 1,
                "maxItems": 1000,
                "items": {"oneOf": [_STR, _INT]},
            },
        },
        ["dimension_name", "operator", "expressions"],
    )
    metric_filter = obj(
        {
            "operator": {"type": "string", "enum": ["PERCENTILE"]},
            "comparison_value": {"type": "number", "minimum": 0, "maximum": 100},
        },
        ["operator", "comparison_value"],
    )
    metric = obj(
        {
            "name": {"type": "string", "enum": list(METRICS)},
            "aggregation_type": {"type": "string", "enum": list(AGGREGATIONS)},
            "metric_filter_clauses": {
                "type": "array",
                "items": obj({"filters": {"type": "array", "items": metric_filter}}, ["filters"]),
            },
        },
        ["name"],
    )
    time_value: J = {
        "type": "string",
        "pattern": TIME_PATTERN,
        "description": "ISO 8601 with a UTC offset, NOW or LAST HOUR|DAY|WEEK|MONTH; "
        "end_date_time must be after start_date_time",
        "example": "2022-07-07T09:50:00+05:30",
    }
    point = obj(
        {
            "time_stamp": _STR,
            "name": _STR,
            "value": {"type": "number"},
            "aggregation_type": _STR,
        },
        ["time_stamp", "name", "value"],
    )
    scalar: J = {"oneOf": [_STR, {"type": "number"}], "nullable": True}
    return {
        "Error": obj(
            {"status": _INT, "error": _STR, "message": _STR, "field": _STR},
            ["status", "error", "message"],
        ),
        "ReportRequest": obj(
            {
                "start_date_time": time_value,
                "end_date_time": time_value,
                "granularity": {"type": "string", "enum": list(GRANULARITIES), "nullable": True},
                "dimensions": {
                    "type": "array",
                    "items": {"type": "string", "enum": list(DIMENSIONS)},
                },
                "dimension_filter_clauses": {
                    "type": "array",
                    "items": obj({"filters": {"type": "array", "items": filt}}, ["filters"]),
                },
                "metrics": {"type": "array", "minItems": 1, "maxItems": 20, "items": metric},
            },
            ["start_date_time", "end_date_time", "dimension_filter_clauses", "metrics"],
        ),
        "TimeSeries": obj(
            {
                "result": {"type": "array", "items": {"type": "array", "items": point}},
                "account_id": {"oneOf": [_STR, _INT]},
            },
            ["result", "account_id"],
            extra=scalar,
        ),
        "CurrentValue": obj(
            {"start_time": _STR, "end_time": _STR, "account_id": {"oneOf": [_STR, _INT]}},
            ["start_time", "end_time", "account_id"],
            extra=scalar,
        ),
        "SimCounts": {
            "type": "array",
            "items": obj(
                {
                    "date": {"type": "string", "pattern": r"^\d{2}-\d{2}-\d{4}$"},
                    "physical": _INT,
                    "esim": _INT,
                },
                ["date", "physical", "esim"],
            ),
        },
        "ContentRecord": obj(
            {
                "id": _INT,
                "partner_name": _STR,
                "content_id": _STR,
                "content_url": _STR,
                "partner_content_url": _STR,
                "partner_cloud_url": _STR,
                "createdAt": _STR,
                "updatedAt": _STR,
                "content_upload_status": _STR,
                "content_access": _STR,
                "publish_access": _STR,
                "content_status_message": _STR,
                "partner_content_file_name": _STR,
                "content_size": _INT,
            },
            ["id", "content_id", "content_url", "content_upload_status"],
        ),
        "OnboardingItem": obj(
            {"message": _STR, "status": _STR, "url": _STR, "content_id": _STR},
            ["message", "status", "url", "content_id"],
        ),
        "Url": obj({"url": _STR}, ["url"]),
        "StatusMessage": obj({"status": _STR, "message": _STR}, ["status", "message"]),
        "WhitelistDomain": obj(
            {"cors_whitelist_domain": {"type": "string", "pattern": ORIGIN_PATTERN}},
            ["cors_whitelist_domain"],
        ),
        "CampaignListItem": obj(
            {
                "campaign_name": _STR,
                "status": _STR,
                "approval_status": _STR,
                "start_timestamp": _STR,
                "end_timestamp": _STR,
            },
            ["campaign_name", "status", "approval_status", "start_timestamp", "end_timestamp"],
        ),
        "CampaignStatus": obj(
            {"campaign_name": _STR, "status": _STR, "approval_status": _STR},
            ["campaign_name", "status", "approval_status"],
        ),
        "CampaignChartItem": obj(
            {
                "campaign_name": _STR,
                "video_id": _STR,
                "status": _STR,
                "start_timestamp": _STR,
                "end_timestamp": _STR,
                "renewButton": _BOOL,
                "url": _STR,
            },
            [
                "campaign_name",
                "video_id",
                "status",
                "start_timestamp",
                "end_timestamp",
                "renewButton",
                "url",
            ],
        ),
    }


def _form_property(name: str, kind: str, limit: int, required: bool) -> J:
    """Return the schema of one campaign form field, as ``campaigns.py`` checks it."""
    if kind.startswith("file:"):
        return {"type": "string", "format": "binary", "minLength": 1}
    if kind.startswith("int:"):
        _, lo, hi = kind.split(":")
        return {"type": "integer", "minimum": int(lo), "maximum": int(hi)}
    if kind == "tz":
        return {"type": "number", "minimum": -12, "maximum": 14, "multipleOf": 0.25}
    if kind == "url":
        return {"type": "string", "pattern": URL_PATTERN, "maxLength": limit}
    if kind == "bool":
        return {"type": "boolean"}
    if kind == "local":
        return {
            "type": "string",
            "pattern": LOCAL_PATTERN,
            "example": "2022-07-08T10:00:00",
            "description": "local date-time; campaignEndDate must be after campaignStartDate",
        }
    if kind.startswith("enum:"):
        return {"type": "string", "enum": [kind.split(":", 1)[1]]}
    if kind == "name":
        return {"type": "string", "pattern": r"^[A-Za-z0-9 _.\-]{1,100}$"}
    return {"type": "string", "maxLength": limit, "minLength": 1 if required else 0}


def campaign_form() -> J:
    """Return the request body of campaign onboarding."""
    props = {n: _form_property(n, k, lim, req) for n, (k, req, lim) in FORM_FIELDS.items()}
    required = [n for n, (_k, req, _lim) in FORM_FIELDS.items() if req]
    return {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": obj(props, required),
                "encoding": {
                    "content": {"contentType": "video/mp4"},
                    "thumbnail": {"contentType": "image/png"},
                },
            }
        },
    }
