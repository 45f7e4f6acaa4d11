"""The video-content endpoints (area A): eight calls.

:class:`ContentClient` onboards content, lists it, waits for its sync to the edge, gives
playback and signed URLs, app keys and the CORS whitelist. ``client`` holds the client,
``_items`` the small records its calls return, ``_sync`` the wait for the sync; the
connection and the checks it shares with :mod:`edgereports.campaigns` are in
``edgereports._content_campaigns``.
"""

from __future__ import annotations

from ._items import AppKey, OnboardingItem, PlaybackUrl, WhitelistChange
from .client import CONTENT_COLUMNS, ContentClient

__all__ = [
    "CONTENT_COLUMNS",
    "AppKey",
    "ContentClient",
    "OnboardingItem",
    "PlaybackUrl",
    "WhitelistChange",
]
