"""The OpenAPI 3.0 document of the 13 endpoints (and v2 reporting) as the sandbox implements them.

Served at ``GET /openapi.json``. Every operation lists its 200 answer and a ``default`` JSON
error (``Error``). Content and campaign operations take the header ``api_key`` (security scheme
``ApiKeyHeader``) and the query ``partner_name``; the report takes the query ``apikey``
(``ApiKeyQuery``), and its answers carry a ``Server-Timing`` header. The v2 report and the
reporting service are in ``openapi_v2.py``.
"""

from __future__ import annotations

from typing import Any

from .campaigns import PREFIX as CAMPAIGNS
from .content import PREFIX as CONTENT
from .openapi_schemas import (
    J,
    campaign_form,
    json_content,
    obj,
    ref,
    responses,
    schemas,
)
from .openapi_v2 import V2_SECURITY, v2_paths, v2_schemas
from .patterns import URL_PATTERN
from .state import SandboxState

__all__ = ["build_openapi"]

_STR: J = {"type": "string"}
_INT: J = {"type": "integer"}

_PARTNER: J = {
    "name": "partner_name",
    "in": "query",
    "required": True,
    "schema": _STR,
    "description": "The subscription's Service ID.",
}

_SERVER_TIMING: J = {
    "description": "W3C Server Timing, in milliseconds: gen (credentials, parsing, "
    "validation and the engine) and ser (rendering the body).",
    "schema": {"type": "string", "example": "gen;dur=12.345, ser;dur=4.567"},
}


def _op(op_id: str, summary: str, ok: J, **extra: Any) -> J:
    out: J = {
        "operationId": op_id,
        "summary": summary,
        "security": [{"ApiKeyHeader": []}],
        "parameters": [_PARTNER, *extra.pop("parameters", [])],
        "responses": responses(ok),
    }
    out.update(extra)
    return out


def build_openapi(state: SandboxState) -> J:
    """Return the OpenAPI document for a sandbox.

    Args:
        state: the sandbox (its address becomes the server URL).

    Returns:
        The document, JSON-ready.
    """
    whitelist_body = {"required": True, "content": json_content(ref("WhitelistDomain"))}
    url_list = obj(
        {
            "urlList": {
                "type": "array",
                "minItems": 1,
                "maxItems": 50,
                "items": obj(
                    {
                        "url": {"type": "string", "pattern": URL_PATTERN, "maxLength": 2048},
                        "content_access": {"type": "string", "enum": ["public"]},
                        "publish_access": {"type": "string", "enum": ["public", "private"]},
                        "partner_cloud_url": {
                            "type": "string",
                            "pattern": URL_PATTERN,
                            "maxLength": 2048,
                        },
                    },
                    ["url"],
                ),
            }
        },
        ["urlList"],
    )
    q = {"in": "query", "required": True}
    paths: J = {
        f"{CONTENT}/content/add": {
            "post": _op(
                "contentAdd",
                "Onboard content (public or private)",
                {"type": "array", "items": ref("OnboardingItem")},
                requestBody={"required": True, "content": json_content(url_list)},
            )
        },
        f"{CONTENT}/content/get-all": {
            "get": _op(
                "contentGetAll",
                "All content of the subscription",
                {"type": "array", "items": ref("ContentRecord")},
            )
        },
        f"{CONTENT}/content/get-url/{{content_id}}": {
            "get": _op(
                "contentGetUrl",
                "Edge playback URL of one content",
                ref("Url"),
                parameters=[{"name": "content_id", "in": "path", "required": True, "schema": _STR}],
            )
        },
        f"{CONTENT}/get-app-key": {
            "get": _op(
                "getAppKey",
                "App keys for signing",
                obj({"app_keys": {"type": "array", "items": _STR}}, ["app_keys"]),
            )
        },
        f"{CONTENT}/signed-url": {
            "get": _op(
                "signedUrl",
                "Signed URL of private content",
                ref("Url"),
                parameters=[
                    {"name": "app_key", **q, "schema": {"type": "string", "minLength": 1}},
                    {"name": "expiry_time", **q, "schema": {"type": "integer", "minimum": 1}},
                    {"name": "content", **q, "schema": _STR},
                    {
                        "name": "allow_signed_cookie",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string", "enum": ["true", "false"]},
                    },
                ],
            )
        },
        f"{CONTENT}/get-whitelist-domain": {
            "get": _op(
                "getWhitelistDomain",
                "CORS whitelist",
                obj(
                    {"cors_whitelist_domain": {"type": "array", "items": _STR}},
                    ["cors_whitelist_domain"],
                ),
            )
        },
        f"{CONTENT}/add-whitelist-domain": {
            "post": _op(
                "addWhitelistDomain",
                "Add a CORS origin",
                ref("StatusMessage"),
                requestBody=whitelist_body,
            )
        },
        f"{CONTENT}/delete-whitelist-domain": {
            "delete": _op(
                "deleteWhitelistDomain",
                "Remove a CORS origin",
                ref("StatusMessage"),
                requestBody=whitelist_body,
            )
        },
        f"{CAMPAIGNS}/campaignsOps": {
            "post": _op(
                "campaignOnboard",
                "Onboard a campaign",
                obj({"message": _STR}, ["message"]),
                requestBody=campaign_form(),
            ),
            "get": _op(
                "campaignList",
                "List campaigns",
                {"type": "array", "items": ref("CampaignListItem")},
            ),
        },
        f"{CAMPAIGNS}/campaigns/status/{{campaign_name}}": {
            "get": _op(
                "campaignStatus",
                "Status of one campaign",
                ref("CampaignStatus"),
                parameters=[
                    {"name": "campaign_name", "in": "path", "required": True, "schema": _STR}
                ],
            )
        },
        f"{CAMPAIGNS}/campaignChart": {
            "get": _op(
                "campaignChart",
                "Campaign chart data",
                {"type": "array", "items": ref("CampaignChartItem")},
            )
        },
        "/connectivity/v1/report": {
            "post": {
                "operationId": "report",
                "summary": "Connectivity report",
                "security": [{"ApiKeyQuery": []}],
                "requestBody": {"required": True, "content": json_content(ref("ReportRequest"))},
                "responses": {
                    "200": {
                        "description": "A time series, a current value or SIM counts",
                        "headers": {"Server-Timing": _SERVER_TIMING},
                        "content": {
                            "application/json": {
                                "schema": {
                                    "anyOf": [
                                        ref("TimeSeries"),
                                        ref("CurrentValue"),
                                        ref("SimCounts"),
                                    ]
                                }
                            },
                            "text/csv": {"schema": _STR},
                        },
                    },
                    "default": {"description": "An error", "content": json_content(ref("Error"))},
                },
            }
        },
    }
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "edgereports sandbox",
            "version": "1.0.0",
            "description": "Local emulator of the edge video, campaign and connectivity "
            "reporting service.",
        },
        "servers": [{"url": state.base_url.rstrip("/") or "/"}],
        "paths": {**paths, **v2_paths(_SERVER_TIMING)},
        "components": {
            "schemas": {**schemas(), **v2_schemas()},
            "securitySchemes": {
                "ApiKeyHeader": {"type": "apiKey", "in": "header", "name": "api_key"},
                "ApiKeyQuery": {"type": "apiKey", "in": "query", "name": "apikey"},
                **V2_SECURITY,
            },
        },
    }
