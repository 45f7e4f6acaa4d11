"""The video-content endpoints (area A): eight calls.

:class:`ContentClient` onboards content, lists it, waits for its sync to the edge, gives
playback and signed URLs, app keys and the CORS whitelist.
"""

from __future__ import annotations

from ._items import CONTENT_COLUMNS, AppKey, OnboardingItem, PlaybackUrl, WhitelistChange
from .client import ContentClient

__all__ = [
    "CONTENT_COLUMNS",
    "AppKey",
    "ContentClient",
    "OnboardingItem",
    "PlaybackUrl",
    "WhitelistChange",
]
