"""The content (area A) and campaign (area B) endpoints: eight and four calls.

:class:`ContentClient` onboards content, lists it, gives playback and signed URLs, app keys and
the CORS whitelist; :class:`CampaignClient` onboards notification campaigns and reads their
list, status and chart. The private modules hold what both share: the HTTP base
(``_service``), argument checks (``_validate``), record checks (``_records``), waiting for the
sync (``_sync``), the content record types and the campaign form.

Example:
    >>> import edgereports as er
    >>> content = er.ContentClient.from_settings(er.Settings.from_env())  # doctest: +SKIP
    >>> content.list().head()  # doctest: +SKIP
"""

from __future__ import annotations

from ._content_types import AppKey, OnboardingItem, PlaybackUrl, WhitelistChange
from .campaigns import Campaign, CampaignClient, CampaignStatus
from .content import ContentClient

__all__ = [
    "AppKey",
    "Campaign",
    "CampaignClient",
    "CampaignStatus",
    "ContentClient",
    "OnboardingItem",
    "PlaybackUrl",
    "WhitelistChange",
]
