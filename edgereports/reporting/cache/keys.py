"""What a cached chunk is keyed by, which parts may be cached at all, and the facts of a part
the cache needs (computed once per pull).

A series key is a hash of the canonical request with its range removed (the offset of its
bounds kept: frames are stamped in it), the accept type, the service address and API version
and the frame schema's version. The account (or the id that scopes an account-less request)
and the fan-out value are filters of the request, so they are in it. The key never is: it is
not part of a request, and only the hash is stored.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson

from ...query import Report
from ...query.pinning import unpinned_dimensions
from ...query.timegrid import is_aligned
from ..plan import Part, bucket_of
from .grid import Chunk, chunk_starts, chunks

__all__ = ["Facts", "facts_of", "frames_version", "series_key", "uncacheable"]

_RANGE = ("start_date_time", "end_date_time")


@functools.cache
def frames_version() -> str:
    """A digest of the pinned Arrow schemas of every frame shape: a new schema, new keys."""
    from ... import schema

    text = "|".join(str(schema.arrow_schema(shape)) for shape in schema.SHAPES)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def series_key(
    sent: Report,
    accept: str,
    service: str,
    api_version: str,
    *,
    request: dict[str, Any] | None = None,
    span: tuple[datetime, datetime] | None = None,
) -> str:
    """The key of the chunks of one fan-out branch (a hex digest; no secret can be in it).
    ``request`` and ``span``: the report's request and range, when known already."""
    sent_request = request if request is not None else sent.to_request()
    request = {k: v for k, v in sent_request.items() if k not in _RANGE}
    span = span if span is not None else sent.time_range()
    offset = span[0].utcoffset() if span is not None else None
    identity = {
        "request": request,
        "offset": (offset or timedelta(0)).total_seconds(),
        "accept": accept,
        "service": service,
        "api_version": api_version,
        "frames": frames_version(),
    }
    return hashlib.sha256(orjson.dumps(identity, option=orjson.OPT_SORT_KEYS)).hexdigest()


def uncacheable(
    part: Part,
    api_version: str,
    bucket: timedelta | None,
    span: tuple[datetime, datetime] | None,
) -> str | None:
    """Why ``part`` is not cached (None: it may be), given its bucket length and range.
    Correctness first: a case the grid cannot serve exactly is fetched."""
    sent = part.sent
    if sent.is_now:
        return "NOW/LAST reports are never cached"
    if unpinned_dimensions(sent):
        return "grouped by an unpinned dimension (its top talker depends on the range)"
    if part.window is None or bucket is None or span is None:
        return "not a report with buckets (sent whole)"
    if api_version != "v1":
        return f"reporting {api_version} answers are not cached (stamps at the ends of pieces)"
    if not (is_aligned(span[0], bucket) and is_aligned(span[1], bucket)):
        return "range bounds are not on UTC bucket boundaries (their buckets straddle the grid)"
    return None


@dataclass(frozen=True)
class Facts:
    """What a pull needs to know of one part, computed once (each costs a request render)."""

    reason: str | None  # why it is not cached (None: it may be)
    bucket: timedelta | None
    span: tuple[datetime, datetime] | None
    names: list[int]  # the starts of the part's chunks of the grid, epoch seconds
    series: str
    scope: str
    request: dict[str, Any]  # the part's request (no key in it)

    @functools.cached_property
    def grid(self) -> list[Chunk]:
        """The part's chunks of the grid (made when asked: a whole hit needs their starts
        alone)."""
        if not self.names or self.span is None or self.bucket is None:
            return []
        return chunks(self.span[0], self.span[1], self.bucket)


def facts_of(
    part: Part,
    accept: str,
    service: str,
    api_version: str,
    *,
    scope: Callable[[dict[str, Any]], str],
) -> Facts:
    """The facts of ``part``: its bucket, range and request rendered once, why it is not
    cached, its chunks of the grid, its series key and (``scope``) what its key is bound to."""
    sent = part.sent
    bucket, span, request = bucket_of(sent), sent.time_range(), sent.to_request()
    reason = uncacheable(part, api_version, bucket, span)
    names = chunk_starts(span[0], span[1], bucket) if reason is None and bucket and span else []
    key = ""
    if names:
        key = series_key(sent, accept, service, api_version, request=request, span=span)
    return Facts(reason, bucket, span, names, key, scope(request), request)
