"""Campaign and CampaignClient: the form, its checks, and the four endpoints against the sandbox."""

from __future__ import annotations

import dataclasses
import re
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from email.parser import BytesParser
from email.policy import default
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import requests

import edgereports as er
from edgereports.campaigns import (
    CAMPAIGN_CHART_COLUMNS,
    CAMPAIGN_LIST_COLUMNS,
    FORM_FIELDS,
    Campaign,
    CampaignClient,
    CampaignStatus,
)
from edgereports.http import make_session
from edgereports.sandbox import SandboxHandle
from tests.conftest import Step, scripted

SandboxFactory = Callable[..., SandboxHandle]

# The documented form fields of campaign onboarding, copied by hand in the documented order.
DOCUMENTED_FORM_FIELDS = [
    "campaignName",
    "campaignTitle",
    "campaignDescription",
    "campaignStartDate",
    "campaignEndDate",
    "timeZone",
    "contentType",
    "content",
    "thumbnail",
    "channelType",
    "smsText",
    "numberOfSms",
    "brandUrl",
    "chatUrl",
    "callToActionUrl",
    "callToActionButtonText",
    "callToActionDuration",
    "callToActionFrequency",
    "is360",
    "isAutoRedirect",
    "isLastSlot",
    "is_campaign_approve",
    "preferenceData",
    "defaultTabPreference",
    "videoDuration",
    "token",
]

# A PNG signature and an ISO-BMFF 'ftyp' box: a few real-looking bytes per file.
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
MP4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + b"\x00" * 32


@pytest.fixture
def media(tmp_path: Path) -> dict[str, Path]:
    files = {
        "video": tmp_path / "clip.mp4",
        "thumbnail": tmp_path / "thumb.png",
        "text": tmp_path / "notes.txt",
        "noext": tmp_path / "thumbnail",
    }
    files["video"].write_bytes(MP4)
    files["thumbnail"].write_bytes(PNG)
    files["text"].write_text("not media")
    files["noext"].write_bytes(PNG)
    return files


def fields_for(media: dict[str, Path], **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "spring-sale",
        "title": "Spring sale",
        "description": "Twenty percent off this week",
        "start": datetime(2030, 3, 1, 9, 0, 0),
        "end": datetime(2030, 3, 8, 21, 30, 0),
        "time_zone": 5.5,
        "video": media["video"],
        "thumbnail": media["thumbnail"],
        "sms_text": "Spring sale: 20% off. Watch the video!",
        "number_of_sms": 2,
        "brand_url": "https://brand.example",
        "chat_url": "https://brand.example/chat",
        "call_to_action_url": "https://brand.example/shop?utm=sms",
        "call_to_action_button_text": "Shop now",
        "call_to_action_duration": "10",
        "call_to_action_frequency": 3,
    }
    base.update(changes)
    return base


def test_form_fields_are_exactly_the_spec_fields() -> None:
    assert list(FORM_FIELDS.values()) == DOCUMENTED_FORM_FIELDS
    assert set(FORM_FIELDS) == {f.name for f in dataclasses.fields(Campaign)}


def test_form_text_fields(media: dict[str, Path]) -> None:
    campaign = Campaign(**fields_for(media, is_auto_redirect=True, video_duration="30"))
    assert campaign.form() == {
        "campaignName": "spring-sale",
        "campaignTitle": "Spring sale",
        "campaignDescription": "Twenty percent off this week",
        "campaignStartDate": "2030-03-01T09:00:00",
        "campaignEndDate": "2030-03-08T21:30:00",
        "timeZone": "5.5",
        "contentType": "Video",
        "channelType": "SMS",
        "smsText": "Spring sale: 20% off. Watch the video!",
        "numberOfSms": "2",
        "brandUrl": "https://brand.example",
        "chatUrl": "https://brand.example/chat",
        "callToActionUrl": "https://brand.example/shop?utm=sms",
        "callToActionButtonText": "Shop now",
        "callToActionDuration": "10",
        "callToActionFrequency": "3",
        "is360": "false",
        "isAutoRedirect": "true",
        "isLastSlot": "false",
        "is_campaign_approve": "",
        "preferenceData": "",
        "defaultTabPreference": "",
        "videoDuration": "30",
        "token": "",
    }
    assert campaign.files() == {
        "content": (media["video"], "video/mp4"),
        "thumbnail": (media["thumbnail"], "image/png"),
    }


@pytest.mark.parametrize(
    ("start", "time_zone", "sent", "utc"),
    [
        # naive: wall time in time_zone
        (datetime(2030, 3, 1, 9, 0, 0, 123456), 5.5, "2030-03-01T09:00:00", "2030-03-01T03:30:00"),
        # aware: converted to time_zone's wall time
        (
            datetime(2030, 3, 1, 3, 30, tzinfo=UTC),
            5.5,
            "2030-03-01T09:00:00",
            "2030-03-01T03:30:00",
        ),
        (datetime(2030, 3, 1, 3, 30, tzinfo=UTC), -4, "2030-02-28T23:30:00", "2030-03-01T03:30:00"),
        (datetime(2030, 3, 1, 12, 0), 5.75, "2030-03-01T12:00:00", "2030-03-01T06:15:00"),
    ],
)
def test_start_is_sent_as_local_wall_time(
    media: dict[str, Path], start: datetime, time_zone: float, sent: str, utc: str
) -> None:
    campaign = Campaign(
        **fields_for(media, start=start, end=datetime(2031, 1, 1), time_zone=time_zone)
    )
    assert campaign.form()["campaignStartDate"] == sent
    assert campaign.start_utc == datetime.fromisoformat(utc).replace(tzinfo=UTC)


@pytest.mark.parametrize(("hours", "text"), [(0, "0"), (-4, "-4"), (5.75, "5.75"), (14, "14")])
def test_time_zone_is_sent_as_a_number(media: dict[str, Path], hours: float, text: str) -> None:
    assert Campaign(**fields_for(media, time_zone=hours)).form()["timeZone"] == text


def test_an_int_duration_is_sent_as_text(media: dict[str, Path]) -> None:
    assert (
        Campaign(**fields_for(media, call_to_action_duration=15)).form()["callToActionDuration"]
        == "15"
    )


def test_token_is_not_in_the_repr(media: dict[str, Path]) -> None:
    campaign = Campaign(**fields_for(media, token="tok-secret-123"))
    assert "tok-secret-123" not in repr(campaign)
    assert campaign.form()["token"] == "tok-secret-123"


INVALID: list[tuple[dict[str, Any], str]] = [
    (
        {"end": datetime(2030, 2, 28, 9, 0)},
        "end (campaignEndDate) 2030-02-28T09:00:00 must be after start (campaignStartDate) "
        "2030-03-01T09:00:00",
    ),
    (
        {"end": datetime(2030, 3, 1, 9, 0)},
        "end (campaignEndDate) 2030-03-01T09:00:00 must be after start",
    ),
    (
        {"start": "2030-03-01T09:00:00"},
        "start (campaignStartDate) must be a datetime (naive = wall time in time_zone), got str",
    ),
    ({"sms_text": "x" * 161}, "sms_text (smsText) has 161 characters; at most 160 are allowed"),
    ({"sms_text": "  "}, "sms_text (smsText) is required and must not be blank"),
    ({"name": ""}, "name (campaignName) is required and must not be blank"),
    ({"title": None}, "title (campaignTitle) must be a string, got NoneType"),
    (
        {"brand_url": "www.brand.example"},
        "brand_url (brandUrl) 'www.brand.example' is not an http(s) URL",
    ),
    (
        {"chat_url": "mailto:chat@brand.example"},
        "chat_url (chatUrl) 'mailto:chat@brand.example' is not an http(s) URL",
    ),
    (
        {"call_to_action_url": "javascript:alert(1)"},
        "call_to_action_url (callToActionUrl) 'javascript:alert(1)' is not an http(s) URL",
    ),
    (
        {"call_to_action_url": "https://"},
        "call_to_action_url (callToActionUrl) 'https://' has no host",
    ),
    ({"time_zone": 15}, "time_zone 15 is outside -12..+14 hours from UTC"),
    ({"time_zone": -12.5}, "time_zone -12.5 is outside -12..+14 hours from UTC"),
    ({"time_zone": 5.3}, "time_zone 5.3 is not a whole number of quarter hours"),
    ({"time_zone": "5.5"}, "time_zone must be a number of hours such as 5.5, got '5.5'"),
    ({"time_zone": float("nan")}, "time_zone must be a number of hours such as 5.5, got nan"),
    ({"number_of_sms": 0}, "number_of_sms (numberOfSms) must be at least 1, got 0"),
    ({"number_of_sms": True}, "number_of_sms (numberOfSms) must be an integer, got True"),
    ({"number_of_sms": 2.0}, "number_of_sms (numberOfSms) must be an integer, got 2.0"),
    (
        {"call_to_action_frequency": -1},
        "call_to_action_frequency (callToActionFrequency) must be at least 0, got -1",
    ),
    ({"is_360": "false"}, "is_360 (is360) must be True or False, got 'false'"),
    ({"call_to_action_duration": ""}, "call_to_action_duration (callToActionDuration) is required"),
]


@pytest.mark.parametrize(("changes", "message"), INVALID)
def test_invalid_campaigns(media: dict[str, Path], changes: dict[str, Any], message: str) -> None:
    with pytest.raises(er.InputError, match=re.escape(message)):
        Campaign(**fields_for(media, **changes))


@pytest.mark.parametrize(
    ("field", "file", "message"),
    [
        ("video", "missing.mp4", "video (content) file '{path}' does not exist"),
        (
            "video",
            "thumbnail",
            "video (content) file '{path}' has media type image/png, not video/*",
        ),
        ("video", "text", "video (content) file '{path}' has media type text/plain, not video/*"),
        (
            "thumbnail",
            "video",
            "thumbnail (thumbnail) file '{path}' has media type video/mp4, not image/*",
        ),
        ("thumbnail", "noext", "thumbnail (thumbnail) file '{path}' has no known media type"),
        ("thumbnail", "dir", "thumbnail (thumbnail) file '{path}' is a directory"),
    ],
)
def test_invalid_media_files(
    media: dict[str, Path], tmp_path: Path, field: str, file: str, message: str
) -> None:
    path = {"missing.mp4": tmp_path / "missing.mp4", "dir": tmp_path}.get(file) or media[file]
    with pytest.raises(er.InputError, match=re.escape(message.format(path=path))):
        Campaign(**fields_for(media, **{field: path}))


def test_a_file_removed_after_creation_is_caught_before_sending(media: dict[str, Path]) -> None:
    campaign = Campaign(**fields_for(media))
    media["video"].unlink()
    client = CampaignClient("k3y-abcdef123456", "partner", "http://127.0.0.1:9", retries=0)
    with pytest.raises(er.InputError, match=r"video \(content\) file '.*clip\.mp4' does not exist"):
        client.onboard(campaign)


def test_status_approved() -> None:
    assert CampaignStatus("c", "Scheduled", "true").approved is True
    assert CampaignStatus("c", "Scheduled", "False").approved is False
    assert CampaignStatus("c", "Scheduled", "pending").approved is None


# -- against the sandbox --------------------------------------------------------------------


def client_for(sb: SandboxHandle, **kwargs: Any) -> CampaignClient:
    return CampaignClient(sb.api_key, sb.partner_name, sb.base_url, **kwargs)


def test_onboard_then_list_status_and_chart(
    make_sandbox: SandboxFactory, media: dict[str, Path]
) -> None:
    sb = make_sandbox()  # clock fixed at 2022-07-08T04:30Z, before the campaign
    client = client_for(sb)
    campaign = Campaign(**fields_for(media))
    message = client.onboard(campaign)
    assert message == ("Campaign onboarded successfully. Please check the campaign dry-run status.")

    listed = client.list()
    assert list(listed.columns) == [
        *(name for name, _ in CAMPAIGN_LIST_COLUMNS),
        "approved",
    ]
    row = listed.iloc[0]
    assert (row["campaign_name"], row["status"], row["approval_status"]) == (
        "spring-sale",
        "Scheduled",
        "true",
    )
    assert bool(row["approved"]) is True
    # 2030-03-01T09:00 at +05:30 is 03:30 UTC
    assert row["start_timestamp"] == pd.Timestamp("2030-03-01T03:30:00Z")
    assert row["end_timestamp"] == pd.Timestamp("2030-03-08T16:00:00Z")
    assert str(listed["start_timestamp"].dtype) == "datetime64[us, UTC]"
    assert listed["approved"].dtype == "boolean"

    assert client.status("spring-sale") == CampaignStatus("spring-sale", "Scheduled", "true")

    chart = client.chart()
    assert list(chart.columns) == [name for name, _ in CAMPAIGN_CHART_COLUMNS]
    assert chart["renewButton"].dtype == "boolean"
    assert not chart["renewButton"].iloc[0]
    assert chart["start_timestamp"].iloc[0] == row["start_timestamp"]
    # the uploaded video comes back byte for byte, with the media type it was sent with
    video = requests.get(chart["url"].iloc[0], timeout=30)
    assert (video.content, video.headers["Content-Type"]) == (MP4, "video/mp4")

    sb.clock.set("2030-03-09T00:00:00+00:00")
    assert client.status("spring-sale").status == "Completed"
    assert bool(client.chart()["renewButton"].iloc[0]) is True


def test_names_with_spaces_and_refused_approval(
    make_sandbox: SandboxFactory, media: dict[str, Path]
) -> None:
    client = client_for(make_sandbox())
    client.onboard(Campaign(**fields_for(media, name="summer sale 2", is_campaign_approve="false")))
    status = client.status("summer sale 2")
    assert (status.campaign_name, status.approval_status, status.approved) == (
        "summer sale 2",
        "false",
        False,
    )
    with pytest.raises(er.NotFoundError, match="no campaign named 'winter'"):
        client.status("winter")
    with pytest.raises(er.InputError, match="name is required"):
        client.status(" ")


def test_a_refused_onboarding_is_an_api_error_sent_once(
    make_sandbox: SandboxFactory, media: dict[str, Path]
) -> None:
    sb = make_sandbox()
    client = client_for(sb, session=make_session(retries=2, backoff=0.01))
    campaign = Campaign(**fields_for(media))
    client.onboard(campaign)
    with pytest.raises(er.ApiError, match="a campaign named 'spring-sale' already exists") as info:
        client.onboard(campaign)
    assert info.value.status_code == 409
    sb.enqueue_faults("502")
    before = sb.request_count("campaigns")
    with pytest.raises(er.ApiError, match="HTTP 502"):
        client.onboard(Campaign(**fields_for(media, name="other")))
    assert sb.request_count("campaigns") - before == 1


def test_a_wrong_key_is_an_auth_error_that_shows_no_key(
    sandbox: SandboxHandle, media: dict[str, Path]
) -> None:
    wrong = "wrong-key-0123456789"
    client = CampaignClient(wrong, sandbox.partner_name, sandbox.base_url)
    for call in (client.list, client.chart, lambda: client.onboard(Campaign(**fields_for(media)))):
        with pytest.raises(er.AuthError) as info:
            call()
        shown = "".join(traceback.format_exception(info.value)) + repr(info.value)
        assert wrong not in shown and sandbox.api_key not in shown
        assert info.value.status_code == 401


def test_empty_frames_have_every_column(make_sandbox: SandboxFactory) -> None:
    client = client_for(make_sandbox())
    assert list(client.list().columns) == [*(n for n, _ in CAMPAIGN_LIST_COLUMNS), "approved"]
    chart = client.chart()
    assert chart.empty
    assert list(chart.columns) == [name for name, _ in CAMPAIGN_CHART_COLUMNS]


def test_the_multipart_form_on_the_wire(media: dict[str, Path]) -> None:
    steps = [Step(body=b'{"message": "ok"}')]
    with scripted(steps) as server:
        client = CampaignClient("k3y-abcdef123456", "partner-1", server.url, retries=0)
        assert client.onboard(Campaign(**fields_for(media))) == "ok"
    [seen] = server.seen
    assert (seen.method, seen.path) == ("POST", "/rmn-api/api/v1/rmn/agencies/campaignsOps")
    assert seen.query == {"partner_name": ["partner-1"]}
    assert (seen.headers["api_key"], seen.headers["accept"]) == (
        "k3y-abcdef123456",
        "application/json",
    )
    head = f"Content-Type: {seen.headers['Content-Type']}\r\n\r\n".encode()
    message = BytesParser(policy=default).parsebytes(head + seen.body)
    assert message.get_content_type() == "multipart/form-data"
    parts = [
        (p.get_param("name", header="content-disposition"), p.get_filename(), p.get_content_type())
        for p in message.iter_parts()
    ]
    assert [name for name, _, _ in parts] == DOCUMENTED_FORM_FIELDS
    files = {name: (filename, ctype) for name, filename, ctype in parts if filename}
    assert files == {"content": ("clip.mp4", "video/mp4"), "thumbnail": ("thumb.png", "image/png")}
    payloads = {
        p.get_param("name", header="content-disposition"): p.get_payload(decode=True)
        for p in message.iter_parts()
    }
    assert payloads["content"] == MP4 and payloads["thumbnail"] == PNG
    assert payloads["campaignStartDate"] == b"2030-03-01T09:00:00"
    assert payloads["timeZone"] == b"5.5"
    assert payloads["is360"] == b"false"
