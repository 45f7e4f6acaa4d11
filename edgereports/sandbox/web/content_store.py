"""The content store of area A: onboarded items, app keys and the CORS whitelist.

The routes over it are in ``content.py`` (the API) and ``playback.py`` (the edge URLs).
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..model.hashing import key_of

__all__ = ["ContentItem", "ContentStore"]


@dataclass(frozen=True)
class ContentItem:
    """One onboarded content item."""

    id: int
    content_id: str
    url: str
    partner_cloud_url: str
    content_access: str
    publish_access: str
    file_name: str
    size: int
    created: float


class ContentStore:
    """Thread-safe in-memory content, app keys and whitelist of one sandbox."""

    def __init__(self, seed: int, default_origin: str) -> None:
        self._lock = threading.Lock()
        self._seed = seed
        self._items: dict[str, ContentItem] = {}
        self.app_keys = tuple(
            f"{key_of(seed, 40, i):016x}{key_of(seed, 41, i):016x}" for i in range(2)
        )
        self._whitelist: list[str] = [default_origin] if default_origin else []

    def add(self, url: str, cloud_url: str, access: str, publish: str, now: float) -> ContentItem:
        """Onboard one item and return it."""
        with self._lock:
            n = len(self._items) + 1
            cid = f"{key_of(self._seed, 30, n):016x}{key_of(self._seed, 31, n) & 0xFFFFFFFF:08x}"
            name = urlsplit(url).path.rsplit("/", 1)[-1] or "index.m3u8"
            size = 1_000_000 + key_of(self._seed, 32, n) % 499_000_000
            item = ContentItem(n, cid, url, cloud_url, access, publish, name, size, now)
            self._items[cid] = item
            return item

    def get(self, content_id: str) -> ContentItem | None:
        """Return the item with ``content_id``, if any."""
        with self._lock:
            return self._items.get(content_id)

    def all(self) -> list[ContentItem]:
        """Return every item, oldest first."""
        with self._lock:
            return list(self._items.values())

    def whitelist(self) -> list[str]:
        """Return the whitelist."""
        with self._lock:
            return list(self._whitelist)

    def whitelist_add(self, origin: str) -> bool:
        """Add an origin; return False if it was already there."""
        with self._lock:
            if origin in self._whitelist:
                return False
            self._whitelist.append(origin)
            return True

    def whitelist_delete(self, origin: str) -> bool:
        """Delete an origin; return False if it was not there."""
        with self._lock:
            if origin not in self._whitelist:
                return False
            self._whitelist.remove(origin)
            return True

    def key_id(self, app_key: str) -> str:
        """Return the public id of an app key (the first 8 hex digits of its SHA-256)."""
        return hashlib.sha256(app_key.encode()).hexdigest()[:8]

    def key_by_id(self, kid: str) -> str | None:
        """Return the app key with public id ``kid``, if any."""
        return next((k for k in self.app_keys if self.key_id(k) == kid), None)
