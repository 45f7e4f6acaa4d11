"""The notification-campaign endpoints (area B): four calls.

:class:`CampaignClient` onboards a :class:`Campaign` (its checked form and media files) and
reads the campaigns' list, one campaign's status and the campaign chart.
"""

from __future__ import annotations

from ._form import FORM_FIELDS, SMS_TEXT_MAX, TIME_ZONE_RANGE, Campaign
from .client import CAMPAIGN_CHART_COLUMNS, CAMPAIGN_LIST_COLUMNS, CampaignClient, CampaignStatus

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
