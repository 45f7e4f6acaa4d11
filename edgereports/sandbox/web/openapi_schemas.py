"""Building blocks of the OpenAPI document: schema helpers, component schemas, campaign form."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..engine.request import AGGREGATIONS, DIMENSIONS, GRANULARITIES, METRICS
from .campaigns import FORM_FIELDS
from .patterns import URL_PATTERN

__all__ = [
    "STR",
    "J",
    "array",
    "campaign_form",
    "enum",
    "exact_filter",
    "json_content",
    "json_or_csv",
    "obj",
    "record",
    "ref",
    "responses",
    "schemas",
    "strings",
    "time_pattern",
    "timed_operation",
]

LOCAL_PATTERN = r"^20\d\d-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d$"
ORIGIN_PATTERN = r"^https?://[A-Za-z0-9.-]+(:\d{1,5})?$"

J = dict[str, Any]
STR: J = {"type": "string"}
_INT: J = {"type": "integer"}
_NUM: J = {"type": "number"}
_SERVER_TIMING: J = {
    "description": "W3C Server Timing, in milliseconds: gen (credentials, parsing, "
    "validation and the engine) and ser (rendering the body).",
    "schema": {"type": "string", "example": "gen;dur=12.345, ser;dur=4.567"},
}


def time_pattern(lasts: str) -> str:
    """Return the pattern of a request time: a timestamp with offset, NOW or LAST ``lasts``."""
    return (
        rf"^(NOW|LAST ({lasts})|20\d\d-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
        r"T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))$"
    )


def ref(name: str) -> J:
    """Return a reference to a component schema."""
    return {"$ref": f"#/components/schemas/{name}"}


def obj(props: J, required: list[str] | None = None, extra: Any = False) -> J:
    """Return an object schema."""
    out: J = {"type": "object", "properties": props, "additionalProperties": extra}
    if required:
        out["required"] = required
    return out


def record(props: J) -> J:
    """Return an object schema whose properties are all required."""
    return obj(props, list(props))


def enum(values: Iterable[str]) -> J:
    """Return a string schema of the given values."""
    return {"type": "string", "enum": list(values)}


def array(items: J, min_items: int | None = None, max_items: int | None = None) -> J:
    """Return an array schema (with its bounds, if any)."""
    out: J = {"type": "array"}
    if min_items is not None:
        out["minItems"] = min_items
    if max_items is not None:
        out["maxItems"] = max_items
    out["items"] = items
    return out


def exact_filter(names: list[str], expression: J) -> J:
    """Return the schema of an EXACT filter on the dimensions ``names``."""
    return record(
        {
            "dimension_name": enum(names),
            "operator": enum(["EXACT"]),
            "expressions": array(expression, 1, 1000),
        }
    )


def json_content(schema: J) -> J:
    """Return a JSON content map."""
    return {"application/json": {"schema": schema}}


def json_or_csv(schema: J) -> J:
    """Return a content map of JSON (``schema``) or CSV."""
    return {**json_content(schema), "text/csv": {"schema": STR}}


def responses(content: J, description: str = "OK", headers: J | None = None) -> J:
    """Return a 200 answer (``content``, with ``headers`` if any) and a default JSON error."""
    ok: J = {"description": description}
    if headers:
        ok["headers"] = headers
    ok["content"] = content
    return {
        "200": ok,
        "default": {"description": "An error", "content": json_content(ref("Error"))},
    }


def timed_operation(
    op_id: str, summary: str, scheme: str, body: str, description: str, content: J, **extra: Any
) -> J:
    """Return a report operation: a JSON ``body``, answers with a ``Server-Timing`` header."""
    return {
        "operationId": op_id,
        "summary": summary,
        "security": [{scheme: []}],
        **extra,
        "requestBody": {"required": True, "content": json_content(ref(body))},
        "responses": responses(content, description, {"Server-Timing": _SERVER_TIMING}),
    }


def strings(*names: str) -> J:
    """Return string properties of the given names."""
    return dict.fromkeys(names, STR)


def schemas() -> J:
    """Return the component schemas."""
    metric_filter = record(
        {
            "operator": enum(["PERCENTILE"]),
            "comparison_value": {"type": "number", "minimum": 0, "maximum": 100},
        }
    )
    metric = obj(
        {
            "name": enum(METRICS),
            "aggregation_type": enum(AGGREGATIONS),
            "metric_filter_clauses": array(record({"filters": array(metric_filter)})),
        },
        ["name"],
    )
    time_value: J = {
        "type": "string",
        "pattern": time_pattern("HOUR|DAY|WEEK|MONTH"),
        "description": "ISO 8601 with a UTC offset, NOW or LAST HOUR|DAY|WEEK|MONTH; "
        "end_date_time must be after start_date_time",
        "example": "2022-07-07T09:50:00+05:30",
    }
    point = obj(
        {"time_stamp": STR, "name": STR, "value": _NUM, "aggregation_type": STR},
        ["time_stamp", "name", "value"],
    )
    scalar: J = {"oneOf": [STR, _NUM], "nullable": True}
    str_or_int: J = {"oneOf": [STR, _INT]}
    clause = record({"filters": array(exact_filter(["account_id", *DIMENSIONS], str_or_int))})
    return {
        "Error": obj(
            {"status": _INT, "error": STR, "message": STR, "field": STR},
            ["status", "error", "message"],
        ),
        "ReportRequest": obj(
            {
                "start_date_time": time_value,
                "end_date_time": time_value,
                "granularity": {**enum(GRANULARITIES), "nullable": True},
                "dimensions": array(enum(DIMENSIONS)),
                "dimension_filter_clauses": array(clause),
                "metrics": array(metric, 1, 20),
            },
            ["start_date_time", "end_date_time", "dimension_filter_clauses", "metrics"],
        ),
        "TimeSeries": obj(
            {"result": array(array(point)), "account_id": str_or_int},
            ["result", "account_id"],
            extra=scalar,
        ),
        "CurrentValue": obj(
            {"start_time": STR, "end_time": STR, "account_id": str_or_int},
            ["start_time", "end_time", "account_id"],
            extra=scalar,
        ),
        "SimCounts": array(
            record(
                {
                    "date": {"type": "string", "pattern": r"^\d{2}-\d{2}-\d{4}$"},
                    "physical": _INT,
                    "esim": _INT,
                }
            )
        ),
        "ContentRecord": obj(
            {
                "id": _INT,
                **strings(
                    "partner_name",
                    "content_id",
                    "content_url",
                    "partner_content_url",
                    "partner_cloud_url",
                    "createdAt",
                    "updatedAt",
                    "content_upload_status",
                    "content_access",
                    "publish_access",
                    "content_status_message",
                    "partner_content_file_name",
                ),
                "content_size": _INT,
            },
            ["id", "content_id", "content_url", "content_upload_status"],
        ),
        "OnboardingItem": record(strings("message", "status", "url", "content_id")),
        "Url": record(strings("url")),
        "StatusMessage": record(strings("status", "message")),
        "WhitelistDomain": record(
            {"cors_whitelist_domain": {"type": "string", "pattern": ORIGIN_PATTERN}}
        ),
        "CampaignListItem": record(
            strings(
                "campaign_name", "status", "approval_status", "start_timestamp", "end_timestamp"
            )
        ),
        "CampaignStatus": record(strings("campaign_name", "status", "approval_status")),
        "CampaignChartItem": record(
            {
                **strings(
                    "campaign_name", "video_id", "status", "start_timestamp", "end_timestamp"
                ),
                "renewButton": {"type": "boolean"},
                "url": STR,
            }
        ),
    }


def _form_property(kind: str, limit: int, required: bool) -> J:
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
        return enum([kind.split(":", 1)[1]])
    if kind == "name":
        return {"type": "string", "pattern": r"^[A-Za-z0-9 _.\-]{1,100}$"}
    return {"type": "string", "maxLength": limit, "minLength": 1 if required else 0}


def campaign_form() -> J:
    """Return the request body of campaign onboarding."""
    props = {n: _form_property(k, lim, req) for n, (k, req, lim) in FORM_FIELDS.items()}
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
