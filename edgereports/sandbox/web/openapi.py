"""The OpenAPI 3.0 document of the 13 endpoints (and v2 reporting) as the sandbox implements them.

Served at ``GET /openapi.json``. Every operation lists its 200 answer and a ``default`` JSON
error (``Error``). Content and campaign operations take the header ``api_key`` (security scheme
``ApiKeyHeader``) and the query ``partner_name``; the report takes the query ``apikey``
(``ApiKeyQuery``), and its answers carry a ``Server-Timing`` header. The v2 report and the
reporting service are in ``openapi_v2.py``.
"""

from __future__ import annotations

from .campaigns import PREFIX as CAMPAIGNS
from .content import PREFIX as CONTENT
from .openapi_schemas import (
    STR,
    J,
    array,
    campaign_form,
    enum,
    json_content,
    json_or_csv,
    obj,
    record,
    ref,
    responses,
    schemas,
    timed_operation,
)
from .openapi_v2 import V2_SECURITY, v2_paths, v2_schemas
from .patterns import URL_PATTERN
from .state import SandboxState

__all__ = ["build_openapi"]

_PARTNER: J = {
    "name": "partner_name",
    "in": "query",
    "required": True,
    "schema": STR,
    "description": "The subscription's Service ID.",
}
_URL: J = {"type": "string", "pattern": URL_PATTERN, "maxLength": 2048}


def _op(op_id: str, summary: str, ok: J, body: J | None = None, params: tuple[J, ...] = ()) -> J:
    out: J = {
        "operationId": op_id,
        "summary": summary,
        "security": [{"ApiKeyHeader": []}],
        "parameters": [_PARTNER, *params],
        "responses": responses(json_content(ok)),
    }
    if body is not None:
        out["requestBody"] = body
    return out


def _param(name: str, where: str, schema: J, required: bool = True) -> J:
    return {"name": name, "in": where, "required": required, "schema": schema}


def build_openapi(state: SandboxState) -> J:
    """Return the OpenAPI document for a sandbox.

    Args:
        state: the sandbox (its address becomes the server URL).

    Returns:
        The document, JSON-ready.
    """
    whitelist_body = {"required": True, "content": json_content(ref("WhitelistDomain"))}
    item = obj(
        {
            "url": _URL,
            "content_access": enum(["public"]),
            "publish_access": enum(["public", "private"]),
            "partner_cloud_url": _URL,
        },
        ["url"],
    )
    url_list = record({"urlList": array(item, 1, 50)})
    paths: J = {
        f"{CONTENT}/content/add": {
            "post": _op(
                "contentAdd",
                "Onboard content (public or private)",
                array(ref("OnboardingItem")),
                {"required": True, "content": json_content(url_list)},
            )
        },
        f"{CONTENT}/content/get-all": {
            "get": _op(
                "contentGetAll", "All content of the subscription", array(ref("ContentRecord"))
            )
        },
        f"{CONTENT}/content/get-url/{{content_id}}": {
            "get": _op(
                "contentGetUrl",
                "Edge playback URL of one content",
                ref("Url"),
                params=(_param("content_id", "path", STR),),
            )
        },
        f"{CONTENT}/get-app-key": {
            "get": _op("getAppKey", "App keys for signing", record({"app_keys": array(STR)}))
        },
        f"{CONTENT}/signed-url": {
            "get": _op(
                "signedUrl",
                "Signed URL of private content",
                ref("Url"),
                params=(
                    _param("app_key", "query", {"type": "string", "minLength": 1}),
                    _param("expiry_time", "query", {"type": "integer", "minimum": 1}),
                    _param("content", "query", STR),
                    _param("allow_signed_cookie", "query", enum(["true", "false"]), False),
                ),
            )
        },
        f"{CONTENT}/get-whitelist-domain": {
            "get": _op(
                "getWhitelistDomain",
                "CORS whitelist",
                record({"cors_whitelist_domain": array(STR)}),
            )
        },
        f"{CONTENT}/add-whitelist-domain": {
            "post": _op(
                "addWhitelistDomain", "Add a CORS origin", ref("StatusMessage"), whitelist_body
            )
        },
        f"{CONTENT}/delete-whitelist-domain": {
            "delete": _op(
                "deleteWhitelistDomain",
                "Remove a CORS origin",
                ref("StatusMessage"),
                whitelist_body,
            )
        },
        f"{CAMPAIGNS}/campaignsOps": {
            "post": _op(
                "campaignOnboard", "Onboard a campaign", record({"message": STR}), campaign_form()
            ),
            "get": _op("campaignList", "List campaigns", array(ref("CampaignListItem"))),
        },
        f"{CAMPAIGNS}/campaigns/status/{{campaign_name}}": {
            "get": _op(
                "campaignStatus",
                "Status of one campaign",
                ref("CampaignStatus"),
                params=(_param("campaign_name", "path", STR),),
            )
        },
        f"{CAMPAIGNS}/campaignChart": {
            "get": _op("campaignChart", "Campaign chart data", array(ref("CampaignChartItem")))
        },
        "/connectivity/v1/report": {
            "post": timed_operation(
                "report",
                "Connectivity report",
                "ApiKeyQuery",
                "ReportRequest",
                "A time series, a current value or SIM counts",
                json_or_csv({"anyOf": [ref("TimeSeries"), ref("CurrentValue"), ref("SimCounts")]}),
            )
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
        "paths": {**paths, **v2_paths()},
        "components": {
            "schemas": {**schemas(), **v2_schemas()},
            "securitySchemes": {
                "ApiKeyHeader": {"type": "apiKey", "in": "header", "name": "api_key"},
                "ApiKeyQuery": {"type": "apiKey", "in": "query", "name": "apikey"},
                **V2_SECURITY,
            },
        },
    }
