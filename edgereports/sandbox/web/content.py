"""Area A: content onboarding, edge URLs, app keys, signed URLs, CORS whitelist (docs/service.md).

An onboarded item turns ``success`` once the sandbox clock passes ``createdAt + sync_delay``.
``content_url`` ends in ``?partner_name={partner}`` so that the documented
``&api_key=<API_KEY>`` can be appended as is. The whitelist starts with the sandbox's own
origin. Playback of the edge URLs and the signatures are in ``playback.py``, the store in
``content_store.py``.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, Response, jsonify, request

from ..clock import iso_ms
from ..problems import ApiProblem, bad
from .content_store import ContentItem, ContentStore
from .patterns import URL
from .playback import serve_playback, sign
from .state import SandboxState

__all__ = ["register_content"]

_ORIGIN = re.compile(r"^https?://[A-Za-z0-9.-]+(:\d{1,5})?$")
PREFIX = "/api/v1/stream-tech"


def _json_body(fields: tuple[str, ...]) -> dict[str, Any]:
    if not request.is_json:
        raise ApiProblem(415, "Content-Type must be application/json")
    body = request.get_json(silent=True)
    if body is None:
        raise ApiProblem(400, "the request body is not valid JSON")
    if not isinstance(body, dict):
        raise ApiProblem(400, "the request body must be a JSON object")
    for key in body:
        if key not in fields:
            raise ApiProblem(400, f"unknown field {key!r}; allowed: {', '.join(fields)}", field=key)
    return body


def _url(value: Any, field: str) -> str:
    if not isinstance(value, str) or not URL.match(value) or len(value) > 2048:
        raise bad(f"{field} must be an http(s) URL", field)
    return value


def _origin(body: dict[str, Any]) -> str:
    value, field = body.get("cors_whitelist_domain"), "cors_whitelist_domain"
    if not isinstance(value, str) or not value:
        raise bad("cors_whitelist_domain must be a non-empty string", field)
    if value.endswith("/"):
        raise bad("cors_whitelist_domain must not end with '/'", field)
    if len(value) > 253 or not _ORIGIN.match(value):
        raise bad(
            "cors_whitelist_domain must be an origin like "
            "https://player.example.com (scheme and host, no path)",
            field,
        )
    return value


def register_content(app: Flask, state: SandboxState) -> None:
    """Register the area A routes and the playback route on ``app``.

    Args:
        app: the Flask app.
        state: the sandbox state.
    """
    origin = state.base_url.rstrip("/")
    store = ContentStore(state.seed, origin)

    def content_url(item: ContentItem) -> str:
        base = state.base_url.rstrip("/") or request.host_url.rstrip("/")
        p = state.partner_name
        return f"{base}/edge/v1/{p}/{item.content_id}/{item.file_name}?partner_name={p}"

    def record(item: ContentItem, now: float) -> dict[str, Any]:
        synced = now >= item.created + state.sync_delay
        return {
            "id": item.id,
            "partner_name": state.partner_name,
            "content_id": item.content_id,
            "content_url": content_url(item),
            "partner_content_url": item.url,
            "partner_cloud_url": item.partner_cloud_url,
            "createdAt": iso_ms(item.created),
            "updatedAt": iso_ms(item.created + state.sync_delay if synced else item.created),
            "content_upload_status": "success" if synced else "INPROGRESS",
            "content_access": item.content_access,
            "publish_access": item.publish_access,
            "content_status_message": "Content onboarded successfully"
            if synced
            else "Content onboarding is in progress",
            "partner_content_file_name": item.file_name,
            "content_size": item.size,
        }

    @app.post(f"{PREFIX}/content/add")
    def content_add() -> Any:
        body = _json_body(("urlList",))
        items = body.get("urlList")
        if not isinstance(items, list) or not items:
            raise bad("urlList must be a non-empty array", "urlList")
        if len(items) > state.limits.url_list:
            raise bad(
                f"urlList holds {len(items)} items; at most {state.limits.url_list}", "urlList"
            )
        checked = []
        for i, it in enumerate(items):
            where = f"urlList[{i}]"
            if not isinstance(it, dict):
                raise bad(f"{where} must be an object", where)
            allowed = ("url", "content_access", "publish_access", "partner_cloud_url")
            for key in it:
                if key not in allowed:
                    raise bad(f"{where}: unknown field {key!r}", f"{where}.{key}")
            url = _url(it.get("url"), f"{where}.url")
            cloud = _url(it.get("partner_cloud_url", url), f"{where}.partner_cloud_url")
            access = it.get("content_access", "public")
            if access != "public":
                raise bad(f"{where}.content_access must be 'public'", f"{where}.content_access")
            publish = it.get("publish_access", "private")
            if publish not in ("public", "private"):
                raise bad(
                    f"{where}.publish_access must be 'public' or 'private'",
                    f"{where}.publish_access",
                )
            checked.append((url, cloud, access, publish))
        now = state.clock.timestamp()
        out = []
        for url, cloud, access, publish in checked:
            item = store.add(url, cloud, access, publish, now)
            out.append(
                {
                    "message": "Content onboarding is in progress",
                    "status": "INPROGRESS",
                    "url": url,
                    "content_id": item.content_id,
                }
            )
        return jsonify(out)

    @app.get(f"{PREFIX}/content/get-all")
    def content_get_all() -> Any:
        now = state.clock.timestamp()
        return jsonify([record(it, now) for it in store.all()])

    @app.get(f"{PREFIX}/content/get-url/<content_id>")
    def content_get_url(content_id: str) -> Any:
        item = store.get(content_id)
        if item is None:
            raise ApiProblem(
                404,
                f"unknown content_id {content_id!r} (use content_id, not id)",
                field="content_id",
            )
        return jsonify({"url": content_url(item)})

    @app.get(f"{PREFIX}/get-app-key")
    def get_app_key() -> Any:
        return jsonify({"app_keys": list(store.app_keys)})

    @app.get(f"{PREFIX}/signed-url")
    def signed_url() -> Any:
        args = request.args
        app_key = args.get("app_key")
        if not app_key:
            raise bad("app_key is required", "app_key")
        if app_key not in store.app_keys:
            raise ApiProblem(403, "app_key is not valid for this subscription", field="app_key")
        raw = args.get("expiry_time", "")
        if not raw.isdigit() or int(raw) < 1 or len(raw) > 15:
            raise bad("expiry_time must be a whole number of seconds >= 1", "expiry_time")
        cookie_raw = args.get("allow_signed_cookie", "false")
        if cookie_raw not in ("true", "false"):
            raise bad("allow_signed_cookie must be 'true' or 'false'", "allow_signed_cookie")
        target = args.get("content", "")
        try:
            parts = urlsplit(target).path.split("/")
        except ValueError:  # e.g. "http://[": not a URL, so no content of ours
            parts = []
        item = store.get(parts[4]) if len(parts) > 5 and parts[1:3] == ["edge", "v1"] else None
        if item is None or parts[3] != state.partner_name:
            raise ApiProblem(
                404, "content must be the edge URL of onboarded content", field="content"
            )
        expires = int(state.clock.timestamp()) + int(raw)
        cookie = 1 if cookie_raw == "true" else 0
        sig = sign(app_key, item.content_id, expires, cookie)
        kid = store.key_id(app_key)
        url = f"{content_url(item)}&expires={expires}&kid={kid}&cookie={cookie}&signature={sig}"
        return jsonify({"url": url})

    @app.get(f"{PREFIX}/get-whitelist-domain")
    def get_whitelist() -> Any:
        return jsonify({"cors_whitelist_domain": store.whitelist()})

    @app.post(f"{PREFIX}/add-whitelist-domain")
    def add_whitelist() -> Any:
        value = _origin(_json_body(("cors_whitelist_domain",)))
        added = store.whitelist_add(value)
        msg = "Domain added to the whitelist" if added else "Domain is already whitelisted"
        return jsonify({"status": "SUCCESS", "message": msg})

    @app.delete(f"{PREFIX}/delete-whitelist-domain")
    def delete_whitelist() -> Any:
        value = _origin(_json_body(("cors_whitelist_domain",)))
        if not store.whitelist_delete(value):
            raise ApiProblem(404, f"{value} is not on the whitelist", field="cors_whitelist_domain")
        return jsonify({"status": "SUCCESS", "message": "Domain removed from the whitelist"})

    @app.route("/edge/v1/<partner>/<content_id>/<path:name>", methods=["GET", "OPTIONS"])
    def playback(partner: str, content_id: str, name: str) -> Response:
        return serve_playback(state, store, partner, content_id, name)
