"""Area B: campaign onboarding (multipart), list, status and chart.

``FORM_FIELDS`` lists the form fields of ``POST campaignsOps`` and how each is checked; unknown
and repeated fields are rejected with 400, an empty optional value counts as absent. States, by
the sandbox clock against the campaign's window in UTC (local dates minus ``timeZone``):
``Scheduled`` before the start, ``Running`` until the end, ``Completed`` from the end on.
``approval_status`` is ``"false"`` when ``is_campaign_approve`` was ``false`` and does not change
the state. The uploaded video is served back at ``GET /rmn-api/media/<video_id>``.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from flask import Flask, Response, jsonify, request

from ..clock import iso_ms
from ..model.hashing import key_of
from ..problems import ApiProblem, bad
from .patterns import URL
from .state import SandboxState

__all__ = ["Campaign", "CampaignStore", "campaign_state", "register_campaigns"]

PREFIX = "/rmn-api/api/v1/rmn/agencies"
_NAME = re.compile(r"^[A-Za-z0-9 _.\-]{1,100}$")
_LOCAL = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")
_NUMBER = re.compile(r"-?\d{1,2}(\.\d{1,6})?")
# field: (kind, required, limit)
FORM_FIELDS: dict[str, tuple[str, bool, int]] = {
    "campaignName": ("name", True, 100),
    "campaignTitle": ("text", False, 200),
    "campaignDescription": ("text", False, 2000),
    "campaignStartDate": ("local", True, 0),
    "campaignEndDate": ("local", True, 0),
    "timeZone": ("tz", True, 0),
    "contentType": ("enum:Video", True, 0),
    "content": ("file:video/", True, 0),
    "thumbnail": ("file:image/", False, 0),
    "channelType": ("enum:SMS", True, 0),
    "smsText": ("text", True, 1000),
    "numberOfSms": ("int:1:1000000", True, 0),
    "brandUrl": ("url", False, 2048),
    "chatUrl": ("url", False, 2048),
    "callToActionUrl": ("url", False, 2048),
    "callToActionButtonText": ("text", False, 50),
    "callToActionDuration": ("text", False, 50),
    "callToActionFrequency": ("int:0:1000000", False, 0),
    "is360": ("bool", False, 0),
    "isAutoRedirect": ("bool", False, 0),
    "isLastSlot": ("bool", False, 0),
    "is_campaign_approve": ("bool", False, 0),
    "preferenceData": ("text", False, 2000),
    "defaultTabPreference": ("text", False, 2000),
    "videoDuration": ("text", False, 2000),
    "token": ("text", False, 2000),
}


@dataclass(frozen=True)
class Media:
    """An uploaded file."""

    media_id: str
    filename: str
    mimetype: str
    data: bytes


@dataclass(frozen=True)
class Campaign:
    """An onboarded campaign."""

    name: str
    start: float
    end: float
    approved: bool
    video: Media
    thumbnail: Media | None
    fields: dict[str, Any]
    created: float


def campaign_state(c: Campaign, now: float) -> str:
    """Return ``Scheduled``, ``Running`` or ``Completed`` for campaign ``c`` at ``now``."""
    if now < c.start:
        return "Scheduled"
    if now < c.end:
        return "Running"
    return "Completed"


class CampaignStore:
    """Thread-safe in-memory campaigns and media of one sandbox."""

    def __init__(self, seed: int) -> None:
        self._lock = threading.Lock()
        self._seed = seed
        self._campaigns: dict[str, Campaign] = {}
        self._media: dict[str, Media] = {}
        self._n = 0

    def media_id(self) -> str:
        """Return a fresh media id."""
        with self._lock:
            self._n += 1
            return f"{key_of(self._seed, 50, self._n):016x}"

    def add(self, campaign: Campaign) -> bool:
        """Store a campaign; return False if the name is taken."""
        with self._lock:
            if campaign.name in self._campaigns:
                return False
            self._campaigns[campaign.name] = campaign
            for m in (campaign.video, campaign.thumbnail):
                if m is not None:
                    self._media[m.media_id] = m
            return True

    def get(self, name: str) -> Campaign | None:
        """Return the campaign called ``name``, if any."""
        with self._lock:
            return self._campaigns.get(name)

    def all(self) -> list[Campaign]:
        """Return every campaign, oldest first."""
        with self._lock:
            return list(self._campaigns.values())

    def media(self, media_id: str) -> Media | None:
        """Return an uploaded file, if any."""
        with self._lock:
            return self._media.get(media_id)


def _local(value: str, name: str, tz: float) -> float:
    if not _LOCAL.match(value):
        raise bad(f"{name} must be a local date-time YYYY-MM-DDTHH:MM:SS", name)
    try:
        when = datetime.fromisoformat(value).replace(tzinfo=UTC)
    except ValueError:
        raise bad(f"{name} {value!r} is not a valid date and time", name) from None
    return (when - timedelta(hours=tz)).timestamp()


def _check_value(name: str, kind: str, limit: int, value: str) -> Any:
    """Validate one text field; return its typed value."""
    if kind == "name":
        if not _NAME.match(value):
            raise bad(f"{name} must be 1 to 100 letters, digits, spaces, '_', '.' or '-'", name)
        return value
    if kind == "text":
        if len(value) > limit:
            raise bad(f"{name} is longer than {limit} characters", name)
        return value
    if kind == "url":
        if len(value) > limit or not URL.match(value):
            raise bad(f"{name} must be an http(s) URL", name)
        return value
    if kind.startswith("enum:"):
        allowed = kind.split(":", 1)[1]
        if value != allowed:
            raise bad(f"{name} must be {allowed!r}", name)
        return value
    if kind.startswith("int:"):
        _, lo, hi = kind.split(":")
        if not re.fullmatch(r"-?\d{1,10}", value) or not int(lo) <= int(value) <= int(hi):
            raise bad(f"{name} must be an integer from {lo} to {hi}", name)
        return int(value)
    if kind == "bool":
        if value.lower() not in ("true", "false"):
            raise bad(f"{name} must be true or false", name)
        return value.lower() == "true"
    if kind == "tz":
        if not _NUMBER.fullmatch(value):
            raise bad(f"{name} must be a number of hours", name)
        tz = float(value)
        if not -12 <= tz <= 14 or (tz * 4) != int(tz * 4):
            raise bad(f"{name} must be between -12 and 14 in quarter hours", name)
        return tz
    return value  # "local": checked once the time zone is known


def parse_campaign_form(store: CampaignStore, now: float) -> Campaign:
    """Validate the multipart form of the current request into a campaign.

    Args:
        store: where media ids come from.
        now: the clock's now (epoch seconds).

    Returns:
        The campaign (not stored yet).

    Raises:
        ApiProblem: 415 for a non-multipart body, 400 naming the field at fault.
    """
    if request.mimetype != "multipart/form-data":
        raise ApiProblem(415, "Content-Type must be multipart/form-data")
    values: dict[str, Any] = {}
    files: dict[str, Media] = {}
    for key in list(request.form.keys()) + list(request.files.keys()):
        if key not in FORM_FIELDS:
            raise bad(f"unknown form field {key!r}", key)
    for name, (kind, required, limit) in FORM_FIELDS.items():
        texts = request.form.getlist(name)
        uploads = request.files.getlist(name)
        if len(texts) + len(uploads) > 1:
            raise bad(f"{name} is given more than once", name)
        if kind.startswith("file:"):
            if texts and texts[0]:
                raise bad(f"{name} must be a file upload", name)
            if not uploads:
                if required:
                    raise bad(f"{name} is required (a file)", name)
                continue
            up = uploads[0]
            prefix = kind.split(":", 1)[1]
            if not up.mimetype.startswith(prefix):
                raise bad(
                    f"{name} must be sent with a media type {prefix}*, not {up.mimetype or 'none'}",
                    name,
                )
            data = up.read()
            if not data:
                raise bad(f"{name} is an empty file", name)
            files[name] = Media(store.media_id(), up.filename or name, up.mimetype, data)
            continue
        if uploads:
            raise bad(f"{name} must be a form value, not a file", name)
        value = texts[0] if texts else ""
        if value == "":
            if required:
                raise bad(f"{name} is required", name)
            continue
        values[name] = _check_value(name, kind, limit, value)
    tz = values["timeZone"]
    start = _local(values["campaignStartDate"], "campaignStartDate", tz)
    end = _local(values["campaignEndDate"], "campaignEndDate", tz)
    if end <= start:
        raise bad("campaignEndDate must be after campaignStartDate", "campaignEndDate")
    return Campaign(
        name=values["campaignName"],
        start=start,
        end=end,
        approved=values.get("is_campaign_approve", True),
        video=files["content"],
        thumbnail=files.get("thumbnail"),
        fields=values,
        created=now,
    )


def register_campaigns(app: Flask, state: SandboxState) -> None:
    """Register the area B routes (and the media route) on ``app``.

    Args:
        app: the Flask app.
        state: the sandbox state.
    """
    store = CampaignStore(state.seed)

    def media_url(m: Media) -> str:
        return f"{state.base_url.rstrip('/')}/rmn-api/media/{m.media_id}"

    @app.post(f"{PREFIX}/campaignsOps")
    def campaign_add() -> Any:
        campaign = parse_campaign_form(store, state.clock.timestamp())
        if not store.add(campaign):
            raise ApiProblem(
                409, f"a campaign named {campaign.name!r} already exists", field="campaignName"
            )
        return jsonify(
            {
                "message": "Campaign onboarded successfully. Please check the campaign "
                "dry-run status."
            }
        )

    def summary(c: Campaign, now: float, window: bool = False) -> dict[str, Any]:
        approved = "true" if c.approved else "false"
        out = {
            "campaign_name": c.name,
            "status": campaign_state(c, now),
            "approval_status": approved,
        }
        if window:
            out.update(start_timestamp=iso_ms(c.start), end_timestamp=iso_ms(c.end))
        return out

    @app.get(f"{PREFIX}/campaignsOps")
    def campaign_list() -> Any:
        now = state.clock.timestamp()
        return jsonify([summary(c, now, window=True) for c in store.all()])

    @app.get(f"{PREFIX}/campaigns/status/<campaign_name>")
    def campaign_status(campaign_name: str) -> Any:
        c = store.get(campaign_name)
        if c is None:
            raise ApiProblem(404, f"no campaign named {campaign_name!r}", field="campaign_name")
        return jsonify(summary(c, state.clock.timestamp()))

    @app.get(f"{PREFIX}/campaignChart")
    def campaign_chart() -> Any:
        now = state.clock.timestamp()
        out = []
        for c in store.all():
            status = campaign_state(c, now)
            out.append(
                {
                    "campaign_name": c.name,
                    "video_id": c.video.media_id,
                    "status": status,
                    "start_timestamp": iso_ms(c.start),
                    "end_timestamp": iso_ms(c.end),
                    "renewButton": status == "Completed",
                    "url": media_url(c.video),
                }
            )
        return jsonify(out)

    @app.get("/rmn-api/media/<media_id>")
    def campaign_media(media_id: str) -> Response:
        m = store.media(media_id)
        if m is None:
            raise ApiProblem(404, "no such media")
        return Response(m.data, mimetype=m.mimetype)
