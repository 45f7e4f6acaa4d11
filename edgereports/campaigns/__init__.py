"""The notification-campaign endpoints (area B): four calls.

:class:`CampaignClient` onboards a :class:`Campaign` (its checked form and media files) and
reads the campaigns' list, one campaign's status and the campaign chart. ``client`` holds the
client, ``_form`` the campaign's form; the connection and the checks it shares with
:mod:`edgereports.content` are in ``edgereports._content_campaigns``.
"""

from __future__ import annotations

from .client import (
    CAMPAIGN_CHART_COLUMNS,
    CAMPAIGN_LIST_COLUMNS,
    FORM_FIELDS,
    SMS_TEXT_MAX,
    TIME_ZONE_RANGE,
    Campaign,
    CampaignClient,
    CampaignStatus,
)

__all__ = [
    "CAMPAIGN_CHART_COLUMNS",
    "CAMPAIGN_LIST_COLUMNS",
    "FORM_FIELDS",
    "SMS_TEXT_MAX",
    "TIME_ZONE_RANGE",
    "Campaign",
    "CampaignClient",
    "CampaignStatus",
]
