"""``Campaign``: every form field of the campaign onboarding endpoint, typed and checked.

Decisions where the service's documentation is silent (which campaign form fields are
required, and their allowed values beyond those it lists) are listed in
:mod:`edgereports.campaigns.client`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Final

from .._content_campaigns.validate import check_http_url, check_int, check_media_file, check_text
from ..errors import InputError

__all__ = ["FORM_FIELDS", "SMS_TEXT_MAX", "TIME_ZONE_RANGE", "Campaign"]

#: The longest ``smsText`` accepted: one single-part SMS.
SMS_TEXT_MAX: Final = 160
#: The time-zone offsets accepted, in hours.
TIME_ZONE_RANGE: Final = (-12.0, 14.0)
_LOCAL_FORMAT: Final = "%Y-%m-%dT%H:%M:%S"

#: :class:`Campaign` attribute → form field name, in the documented order.
FORM_FIELDS: Final[dict[str, str]] = {
    "name": "campaignName",
    "title": "campaignTitle",
    "description": "campaignDescription",
    "start": "campaignStartDate",
    "end": "campaignEndDate",
    "time_zone": "timeZone",
    "content_type": "contentType",
    "video": "content",
    "thumbnail": "thumbnail",
    "channel_type": "channelType",
    "sms_text": "smsText",
    "number_of_sms": "numberOfSms",
    "brand_url": "brandUrl",
    "chat_url": "chatUrl",
    "call_to_action_url": "callToActionUrl",
    "call_to_action_button_text": "callToActionButtonText",
    "call_to_action_duration": "callToActionDuration",
    "call_to_action_frequency": "callToActionFrequency",
    "is_360": "is360",
    "is_auto_redirect": "isAutoRedirect",
    "is_last_slot": "isLastSlot",
    "is_campaign_approve": "is_campaign_approve",
    "preference_data": "preferenceData",
    "default_tab_preference": "defaultTabPreference",
    "video_duration": "videoDuration",
    "token": "token",
}

_BOOLEANS: Final = ("is_360", "is_auto_redirect", "is_last_slot")
_OPTIONAL_TEXT: Final = (
    "is_campaign_approve",
    "preference_data",
    "default_tab_preference",
    "video_duration",
    "token",
)
_REQUIRED_TEXT: Final = (
    "name",
    "title",
    "description",
    "content_type",
    "channel_type",
    "call_to_action_button_text",
)
_URLS: Final = ("brand_url", "chat_url", "call_to_action_url")


def _check_time_zone(value: object) -> float:
    low, high = TIME_ZONE_RANGE
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"time_zone must be a number of hours such as 5.5, got {value!r}")
    if not low <= value <= high:
        raise InputError(f"time_zone {value:g} is outside {low:g}..+{high:g} hours from UTC")
    if not float(value * 4).is_integer():
        raise InputError(
            f"time_zone {value:g} is not a whole number of quarter hours (e.g. 5.5 or 5.75)"
        )
    return float(value)


def _local(value: object, what: str, hours: float) -> datetime:
    if not isinstance(value, datetime):
        raise InputError(
            f"{what} must be a datetime (naive = wall time in time_zone), "
            f"got {type(value).__name__}"
        )
    if value.tzinfo is not None and value.utcoffset() is not None:
        value = value.astimezone(timezone(timedelta(hours=hours))).replace(tzinfo=None)
    return value.replace(microsecond=0, tzinfo=None)


@dataclass(frozen=True)
class Campaign:
    """A notification campaign: every documented form field, typed and checked on creation.

    Attribute names are the snake_case of the form fields (:data:`FORM_FIELDS`); ``video`` is
    the ``content`` file.

    Args:
        name: ``campaignName``.
        title: ``campaignTitle``.
        description: ``campaignDescription``.
        start: ``campaignStartDate``; naive = wall time in ``time_zone``, aware = converted.
        end: ``campaignEndDate``; after ``start``.
        time_zone: ``timeZone``, hours from UTC in -12..+14, quarter hours (e.g. 5.5).
        video: ``content``, a video file (``video/*`` by its extension).
        thumbnail: ``thumbnail``, an image file (``image/*``).
        sms_text: ``smsText``, at most 160 characters.
        number_of_sms: ``numberOfSms``, at least 1.
        brand_url: ``brandUrl``, an http(s) URL.
        chat_url: ``chatUrl``, an http(s) URL.
        call_to_action_url: ``callToActionUrl``, an http(s) URL.
        call_to_action_button_text: ``callToActionButtonText``.
        call_to_action_duration: ``callToActionDuration`` (text; an int is written as text).
        call_to_action_frequency: ``callToActionFrequency``, at least 0.
        content_type: ``contentType`` (``Video``).
        channel_type: ``channelType`` (``SMS``).
        is_360: ``is360``.
        is_auto_redirect: ``isAutoRedirect``.
        is_last_slot: ``isLastSlot``.
        is_campaign_approve: ``is_campaign_approve`` (may be empty).
        preference_data: ``preferenceData`` (may be empty).
        default_tab_preference: ``defaultTabPreference`` (may be empty).
        video_duration: ``videoDuration`` (may be empty).
        token: ``token`` (may be empty; never shown in the repr).

    Raises:
        InputError: any field that breaks the rules above, named with its form field.

    Example:
        The media files must exist (here two empty ones); :meth:`CampaignClient.onboard`
        sends the campaign.

        >>> from datetime import datetime
        >>> from pathlib import Path
        >>> video, thumbnail = Path("spring.mp4"), Path("spring.png")
        >>> video.touch(); thumbnail.touch()
        >>> campaign = Campaign(
        ...     name="spring-sale", title="Spring", description="Spring offers",
        ...     start=datetime(2030, 3, 1, 9), end=datetime(2030, 3, 8, 21), time_zone=5.5,
        ...     video=video, thumbnail=thumbnail, sms_text="Spring offers inside",
        ...     number_of_sms=1, brand_url="https://brand.example",
        ...     chat_url="https://brand.example/chat", call_to_action_url="https://brand.example/buy",
        ...     call_to_action_button_text="Buy", call_to_action_duration=10,
        ...     call_to_action_frequency=1,
        ... )
        >>> form = campaign.form()
        >>> form["campaignStartDate"], form["timeZone"], form["is360"]
        ('2030-03-01T09:00:00', '5.5', 'false')
        >>> import dataclasses
        >>> dataclasses.replace(campaign, sms_text="x" * 161)
        Traceback (most recent call last):
        ...
        edgereports.errors.InputError: sms_text (smsText) has 161 characters; at most 160 ...
    """

    name: str
    title: str
    description: str
    start: datetime
    end: datetime
    time_zone: float
    video: Path
    thumbnail: Path
    sms_text: str
    number_of_sms: int
    brand_url: str
    chat_url: str
    call_to_action_url: str
    call_to_action_button_text: str
    call_to_action_duration: str | int
    call_to_action_frequency: int
    content_type: str = "Video"
    channel_type: str = "SMS"
    is_360: bool = False
    is_auto_redirect: bool = False
    is_last_slot: bool = False
    is_campaign_approve: str = ""
    preference_data: str = ""
    default_tab_preference: str = ""
    video_duration: str = ""
    token: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        def label(attr: str) -> str:
            return f"{attr} ({FORM_FIELDS[attr]})"

        for attr in _REQUIRED_TEXT:
            check_text(getattr(self, attr), label(attr))
        for attr in _OPTIONAL_TEXT:
            check_text(getattr(self, attr), label(attr), required=False)
        check_text(self.sms_text, label("sms_text"), max_length=SMS_TEXT_MAX)
        duration = self.call_to_action_duration
        if isinstance(duration, int) and not isinstance(duration, bool):
            object.__setattr__(self, "call_to_action_duration", str(duration))
        check_text(self.call_to_action_duration, label("call_to_action_duration"))
        for attr in _URLS:
            object.__setattr__(self, attr, check_http_url(getattr(self, attr), label(attr)))
        for attr in _BOOLEANS:
            if not isinstance(getattr(self, attr), bool):
                raise InputError(
                    f"{label(attr)} must be True or False, got {getattr(self, attr)!r}"
                )
        check_int(self.number_of_sms, label("number_of_sms"), minimum=1)
        check_int(self.call_to_action_frequency, label("call_to_action_frequency"), minimum=0)
        hours = _check_time_zone(self.time_zone)
        object.__setattr__(self, "time_zone", hours)
        start = _local(self.start, label("start"), hours)
        end = _local(self.end, label("end"), hours)
        if end <= start:
            raise InputError(
                f"end (campaignEndDate) {end:{_LOCAL_FORMAT}} must be after start "
                f"(campaignStartDate) {start:{_LOCAL_FORMAT}}"
            )
        object.__setattr__(self, "video", check_media_file(self.video, label("video"), "video")[0])
        object.__setattr__(
            self, "thumbnail", check_media_file(self.thumbnail, label("thumbnail"), "image")[0]
        )

    def form(self) -> dict[str, str]:
        """Return the text fields of the form, by their documented names, in that order.

        The two file fields (``content``, ``thumbnail``) are left out; see :meth:`files`.

        Example:
            ``{"campaignName": "spring", ..., "campaignStartDate": "2030-03-01T09:00:00",
            "timeZone": "5.5", ..., "is360": "false", ...}``
        """
        out: dict[str, str] = {}
        for attr, name in FORM_FIELDS.items():
            value = getattr(self, attr)
            if attr in ("video", "thumbnail"):
                continue
            if attr in ("start", "end"):
                out[name] = _local(value, attr, self.time_zone).strftime(_LOCAL_FORMAT)
            elif attr == "time_zone":
                out[name] = f"{value:g}"
            elif isinstance(value, bool):
                out[name] = "true" if value else "false"
            else:
                out[name] = str(value)
        return out

    def files(self) -> dict[str, tuple[Path, str]]:
        """Return the file fields: ``{"content": (path, media type), "thumbnail": (...)}``.

        Raises:
            InputError: a file has gone or changed type since the campaign was made.
        """
        return {
            "content": check_media_file(self.video, "video (content)", "video"),
            "thumbnail": check_media_file(self.thumbnail, "thumbnail (thumbnail)", "image"),
        }

    @property
    def start_utc(self) -> datetime:
        """The start as an aware UTC datetime."""
        return self._utc(self.start)

    @property
    def end_utc(self) -> datetime:
        """The end as an aware UTC datetime."""
        return self._utc(self.end)

    def _utc(self, value: datetime) -> datetime:
        local = _local(value, "start", self.time_zone)
        return local.replace(tzinfo=timezone(timedelta(hours=self.time_zone))).astimezone(UTC)
