"""Payload decoding (JSON or CSV, by content) and shape detection."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

import orjson

from ..errors import SchemaError
from ._request import RequestInfo
from ._util import excerpt, fail

Kind = Literal["parsed", "json", "csv", "empty"]
_NONSPACE = re.compile(rb"\S")


def decode(payload: object) -> tuple[Kind, Any]:
    """Tell what a payload is, without parsing it.

    Returns:
        ``(kind, obj)``: ``"parsed"`` with the dict or list as given, ``"json"`` or ``"csv"``
        with the body as bytes (a UTF-8 BOM removed), or ``"empty"``.

    Raises:
        SchemaError: for a payload of another type.
    """
    if isinstance(payload, dict | list):
        return "parsed", payload
    if isinstance(payload, bytearray | memoryview):
        payload = bytes(payload)
    if isinstance(payload, str):
        payload = payload.encode("utf-8", errors="surrogatepass")
    if not isinstance(payload, bytes):
        raise SchemaError(
            f"payload must be parsed JSON (dict or list) or bytes/str, "
            f"not {type(payload).__name__}",
            where="",
        )
    body = payload[3:] if payload.startswith(b"\xef\xbb\xbf") else payload
    start = first_byte(body)
    if not start:
        return "empty", b""
    return ("json" if start in (b"{", b"[") else "csv"), body


def first_byte(body: bytes) -> bytes:
    """Return the first non-whitespace byte of ``body`` (``b""`` when there is none)."""
    m = _NONSPACE.search(body)
    return m.group() if m else b""


def parse_json(body: bytes) -> Any:
    """Parse JSON bytes with orjson.

    Raises:
        SchemaError: when the bytes are not valid JSON; ``where`` is the character offset.
    """
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise SchemaError(
            f"payload is not valid JSON ({exc}): {excerpt(body[:200].decode(errors='replace'))}",
            where=f"char {exc.pos}",
        ) from None


def detect_shape(obj: Any, req: RequestInfo | None = None) -> str:
    """Return the shape of a parsed JSON answer.

    ``{"result": ...}`` is a time series; an object with ``start_time``/``end_time`` (or a
    list of them) a current value; a list of objects with ``date`` SIM counts. An empty list
    is the request's shape when a request is given, else SIM counts.

    Args:
        obj: the parsed JSON.
        req: the request, when known.

    Returns:
        ``"timeseries"``, ``"current"`` or ``"sim_count"``.

    Raises:
        SchemaError: for anything that matches no known shape.
    """
    if isinstance(obj, Mapping):
        if "result" in obj:
            return "timeseries"
        if "start_time" in obj or "end_time" in obj:
            return "current"
        keys = ", ".join(str(k) for k in list(obj)[:10])
        fail(f"object matches no known answer shape (members: {keys or 'none'})", "", obj)
    if isinstance(obj, list):
        if not obj:
            return req.shape if req is not None else "sim_count"
        first = obj[0]
        if isinstance(first, Mapping):
            if "date" in first:
                return "sim_count"
            if "start_time" in first or "end_time" in first:
                return "current"
        fail("list matches no known answer shape", "[0]", first)
    fail("payload matches no known answer shape", "", obj)
