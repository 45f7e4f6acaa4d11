"""``CampaignClient`` and ``Campaign``: the four notification-campaign endpoints.

Where the service's documentation is silent, the rules are the user guide's ("Content and
campaigns") and :class:`Campaign`'s; besides them: a start in the past is allowed (the service
decides); booleans are sent as the text ``true``/``false`` and files with the media type their
extension gives (:mod:`mimetypes`), with no size limit (the service states none); ``list()``
adds ``approved`` (``boolean``), parsed from the textual ``approval_status``, which is kept as
sent; ``token`` never shows in a repr.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import quote

from .._content_campaigns.base import BaseClient
from .._content_campaigns.records import Kind, check_object, check_records, frame, parse_bool
from .._content_campaigns.validate import check_text
from ..errors import InputError
from ._form import FORM_FIELDS, Campaign

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CAMPAIGN_CHART_COLUMNS", "CAMPAIGN_LIST_COLUMNS", "CampaignClient", "CampaignStatus"]

_PREFIX: Final = "rmn-api/api/v1/rmn/agencies"

#: The columns of :meth:`CampaignClient.list` (the documented fields, then ``approved``).
CAMPAIGN_LIST_COLUMNS: Final[tuple[tuple[str, Kind], ...]] = (
    ("campaign_name", "string"),
    ("status", "string"),
    ("approval_status", "string"),
    ("start_timestamp", "timestamp"),
    ("end_timestamp", "timestamp"),
)
#: The columns of :meth:`CampaignClient.chart`.
CAMPAIGN_CHART_COLUMNS: Final[tuple[tuple[str, Kind], ...]] = (
    ("campaign_name", "string"),
    ("video_id", "string"),
    ("status", "string"),
    ("start_timestamp", "timestamp"),
    ("end_timestamp", "timestamp"),
    ("renewButton", "bool"),
    ("url", "string"),
)


@dataclass(frozen=True)
class CampaignStatus:
    """The status of one campaign.

    Attributes:
        campaign_name: the campaign.
        status: e.g. ``Scheduled``.
        approval_status: the textual boolean the service sent (e.g. ``'true'``).
    """

    campaign_name: str
    status: str
    approval_status: str

    @property
    def approved(self) -> bool | None:
        """``approval_status`` as a bool, or None when it is not a textual boolean."""
        return parse_bool(self.approval_status)


class CampaignClient(BaseClient):
    """Client of the campaign endpoints: onboard, list, status, chart.

    Same connection and authentication as :class:`~edgereports.content.ContentClient`
    (``api_key`` header, ``partner_name`` query parameter).

    Args:
        api_key: the developer's API key.
        partner_name: the subscription's Service ID.
        base_url: the address of the content and campaign APIs.
        timeout: read timeout in seconds (or a ``(connect, read)`` pair).
        retries: retries of failed calls.
        session: a ``requests.Session`` to use instead of a new one.

    Raises:
        ConfigError: a missing key or partner name, or a base_url that is not http(s).

    Example:
        Arguments are checked before anything is sent:

        >>> campaigns = CampaignClient("k" * 8, "partner-1", "https://api.example")
        >>> campaigns
        CampaignClient(partner_name='partner-1', base_url='https://api.example')
        >>> campaigns.status(" ")
        Traceback (most recent call last):
        ...
        edgereports.errors.InputError: name is required and must not be blank
    """

    def onboard(self, campaign: Campaign) -> str:
        """Onboard a campaign: one multipart form with its media.

        Args:
            campaign: the campaign; its fields were checked when it was made and its files are
                checked again here.

        Returns:
            The service's message (it says to check the campaign's dry-run status).

        Raises:
            InputError: not a Campaign, or a file has gone since.
            ApiError: the service refused (AuthError for a wrong key).
        """
        if not isinstance(campaign, Campaign):
            raise InputError(f"onboard takes a Campaign, got {type(campaign).__name__}")
        files = campaign.files()
        form = campaign.form()
        what = "campaignsOps (onboard)"
        with ExitStack() as stack:
            parts: list[tuple[str, tuple[str | None, object] | tuple[str, object, str]]] = []
            for name in FORM_FIELDS.values():
                if name in files:
                    path, media_type = files[name]
                    handle = stack.enter_context(path.open("rb"))
                    parts.append((name, (path.name, handle, media_type)))
                else:
                    parts.append((name, (None, form[name])))
            payload = self._json(
                "POST",
                f"{_PREFIX}/campaignsOps",
                what,
                files=parts,
                headers={"accept": "application/json"},
                once=True,
            )
        return str(check_object(payload, what, "message")["message"])

    def list(self) -> pd.DataFrame:
        """List the campaigns.

        Returns:
            A frame with the documented fields (timestamps ``datetime64[us, UTC]``, text
            ``string``) and ``approved`` (``boolean``, parsed from ``approval_status``).

        Raises:
            ApiError: the service refused.
            SchemaError: the answer is not an array of objects.
        """
        what = "campaignsOps (list)"
        records = check_records(self._json("GET", f"{_PREFIX}/campaignsOps", what), what)
        df = frame(records, CAMPAIGN_LIST_COLUMNS, what)
        approved = frame(records, (("approval_status", "bool"),), what)["approval_status"]
        df.insert(len(CAMPAIGN_LIST_COLUMNS), "approved", approved)
        return df

    def status(self, name: str) -> CampaignStatus:
        """Read the status of one campaign.

        Args:
            name: the campaign name.

        Returns:
            Its :class:`CampaignStatus`.

        Raises:
            InputError: a blank name.
            NotFoundError: no such campaign.
        """
        check_text(name, "name")
        what = "campaigns/status"
        path = f"{_PREFIX}/campaigns/status/{quote(name, safe='')}"
        payload = check_object(self._json("GET", path, what), what, "status")
        return CampaignStatus(
            campaign_name=str(payload.get("campaign_name", name)),
            status=str(payload["status"]),
            approval_status=str(payload.get("approval_status", "")),
        )

    def chart(self) -> pd.DataFrame:
        """Read the campaign chart.

        Returns:
            A frame with the documented fields (``renewButton`` as ``boolean``).

        Raises:
            ApiError: the service refused.
            SchemaError: the answer is not an array of objects.
        """
        what = "campaignChart"
        records = check_records(self._json("GET", f"{_PREFIX}/campaignChart", what), what)
        return frame(records, CAMPAIGN_CHART_COLUMNS, what)
