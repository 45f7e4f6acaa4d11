"""Playback of onboarded content at the edge URLs (``/edge/v1/<partner>/<content_id>/<file>``).

- ``GET`` the content URL with ``&api_key=<API_KEY>``: 401 without the right key, 404 for
  unknown content, 409 while the content is still syncing, 403 for private content without a
  valid unexpired signature (from the signed URL's query or, after a signed URL made with
  ``allow_signed_cookie=true`` was played once, from the ``edge_signature`` cookie), 403 for an
  ``Origin`` not on the CORS whitelist. Whitelisted origins get ``Access-Control-Allow-Origin``
  (``OPTIONS`` preflights too).
- ``*.m3u8`` names answer a two-segment HLS playlist whose segment URIs carry the same query;
  other names answer a few MPEG-TS null packets.
- A signature is the hex HMAC-SHA256, keyed with the app key, of ``content_id:expires:cookie``.
"""

from __future__ import annotations

import hashlib
import hmac

from flask import Response, request

from ..problems import ApiProblem
from .content_store import ContentItem, ContentStore
from .state import SandboxState, same_secret

__all__ = ["serve_playback", "sign"]

TS_NULL_PACKET = bytes([0x47, 0x1F, 0xFF, 0x10]) + b"\xff" * 184


def sign(app_key: str, content_id: str, expires: int, cookie: int) -> str:
    """Return the signature of a signed URL."""
    msg = f"{content_id}:{expires}:{cookie}".encode()
    return hmac.new(app_key.encode(), msg, hashlib.sha256).hexdigest()


def _cors(resp: Response, origin: str | None) -> Response:
    if origin:
        resp.headers["Access-Control-Allow-Origin"] = origin
        resp.headers["Access-Control-Allow-Credentials"] = "true"
        resp.headers["Vary"] = "Origin"
    return resp


def serve_playback(
    state: SandboxState, store: ContentStore, partner: str, content_id: str, name: str
) -> Response:
    """Answer a playback request (the checks are in the module docstring).

    Args:
        state: the sandbox state.
        store: the content store.
        partner: the partner in the path.
        content_id: the content in the path.
        name: the file name in the path.

    Returns:
        The playlist, a segment or a 204 preflight answer.

    Raises:
        ApiProblem: 401, 403, 404 or 409 as above.
    """
    origin = request.headers.get("Origin")
    if origin is not None and origin not in store.whitelist():
        raise ApiProblem(403, f"origin {origin} is not on the CORS whitelist")
    if request.method == "OPTIONS":
        resp = Response(status=204)
        resp.headers["Access-Control-Allow-Methods"] = "GET, OPTIONS"
        resp.headers["Access-Control-Allow-Headers"] = "Range, Content-Type"
        return _cors(resp, origin)
    key = request.args.get("api_key")
    if not key:
        raise ApiProblem(401, "append &api_key=<API_KEY> to the URL", field="api_key")
    if not same_secret(key, state.api_key):
        raise ApiProblem(401, "invalid api_key", field="api_key")
    item = store.get(content_id)
    if item is None or partner != state.partner_name:
        raise ApiProblem(404, "no such content at this edge")
    now = state.clock.timestamp()
    if now < item.created + state.sync_delay:
        raise ApiProblem(409, "the content is still syncing to the edge; try again later")
    set_cookie: str | None = None
    if item.publish_access == "private":
        set_cookie = _check_signature(state, store, item, now)
    query = request.query_string.decode()
    if name.endswith(".m3u8"):
        lines = [
            "#EXTM3U",
            "#EXT-X-VERSION:3",
            "#EXT-X-TARGETDURATION:4",
            "#EXT-X-MEDIA-SEQUENCE:0",
        ]
        for i in range(2):
            lines += ["#EXTINF:4.0,", f"segment{i}.ts?{query}"]
        lines.append("#EXT-X-ENDLIST")
        resp = Response("\n".join(lines) + "\n", mimetype="application/vnd.apple.mpegurl")
    else:
        resp = Response(TS_NULL_PACKET * 4, mimetype="video/mp2t")
    if set_cookie:
        resp.set_cookie(
            "edge_signature",
            set_cookie,
            path=f"/edge/v1/{partner}/{content_id}/",
            httponly=True,
            samesite="None",
            secure=False,
        )
    return _cors(resp, origin)


def _check_signature(
    state: SandboxState, store: ContentStore, item: ContentItem, now: float
) -> str | None:
    """Check a private item's signature; return a cookie value to set, if any."""
    args = request.args
    from_query = "signature" in args
    if from_query:
        fields = (
            args.get("expires", ""),
            args.get("kid", ""),
            args.get("cookie", ""),
            args.get("signature", ""),
        )
    else:
        cookie = request.cookies.get("edge_signature", "")
        parts = cookie.split(".")
        fields = (parts[0], parts[1], parts[2], parts[3]) if len(parts) == 4 else ("", "", "", "")
    expires, kid, cookie_flag, sig = fields
    if not sig:
        raise ApiProblem(403, "private content plays only through a signed URL")
    app_key = store.key_by_id(kid)
    if app_key is None or not expires.isdigit() or cookie_flag not in ("0", "1"):
        raise ApiProblem(403, "the signed URL is malformed")
    expected = sign(app_key, item.content_id, int(expires), int(cookie_flag))
    if not same_secret(expected, sig):
        raise ApiProblem(403, "the signature does not match")
    if now >= int(expires):
        raise ApiProblem(403, "the signed URL has expired")
    if from_query and cookie_flag == "1":
        return ".".join(fields)
    return None
