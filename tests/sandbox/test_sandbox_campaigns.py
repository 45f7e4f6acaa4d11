"""Area B of the sandbox: multipart onboarding with validation, list, status by clock, chart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import requests

from edgereports.sandbox import SandboxHandle

SandboxFactory = Callable[..., SandboxHandle]
VIDEO = ("clip.mp4", b"\x00\x00\x00\x18ftypmp42", "video/mp4")
IMAGE = ("thumb.png", b"\x89PNG\r\n\x1a\n", "image/png")


def form(name: str = "summer-sale", **changes: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "campaignName": name,
        "campaignTitle": "Summer sale",
        "campaignDescription": "Ten percent off",
        "campaignStartDate": "2022-07-09T10:00:00",
        "campaignEndDate": "2022-07-10T10:00:00",
        "timeZone": "5.5",
        "contentType": "Video",
        "channelType": "SMS",
        "smsText": "Watch our video",
        "numberOfSms": "2",
        "brandUrl": "https://brand.example",
        "chatUrl": "https://chat.example",
        "callToActionUrl": "https://shop.example",
        "callToActionButtonText": "Shop",
        "callToActionDuration": "5",
        "callToActionFrequency": "1",
        "is360": "false",
        "isAutoRedirect": "False",
        "isLastSlot": "true",
        "is_campaign_approve": "",
        "preferenceData": "",
        "defaultTabPreference": "",
        "videoDuration": "",
        "token": "",
    }
    fields.update(changes)
    return {k: v for k, v in fields.items() if v is not None}


def post(sb: SandboxHandle, data: dict[str, Any], files: dict[str, Any] | None = None,
         **kwargs: Any) -> requests.Response:  # fmt: skip
    sent = {"content": VIDEO, "thumbnail": IMAGE} if files is None else files
    return requests.post(f"{sb.campaigns_url}/campaignsOps",
                         params={"partner_name": sb.partner_name},
                         headers={"api_key": sb.api_key, "accept": "application/json"},
                         data=data, files=sent, timeout=30, **kwargs)  # fmt: skip


def get(sb: SandboxHandle, path: str) -> Any:
    r = requests.get(f"{sb.campaigns_url}{path}", params={"partner_name": sb.partner_name},
                     headers={"api_key": sb.api_key}, timeout=30)  # fmt: skip
    assert r.status_code == 200, r.text
    return r.json()


def test_a_campaign_goes_scheduled_running_completed_by_the_clock(
    make_sandbox: SandboxFactory,
) -> None:
    sb = make_sandbox()
    r = post(sb, form())
    assert r.status_code == 200, r.text
    assert "onboarded successfully" in r.json()["message"]
    assert get(sb, "/campaignsOps") == [{
        "campaign_name": "summer-sale", "status": "Scheduled", "approval_status": "true",
        "start_timestamp": "2022-07-09T04:30:00.000Z", "end_timestamp": "2022-07-10T04:30:00.000Z",
    }]  # fmt: skip
    sb.clock.set("2022-07-09T04:30:00Z")
    assert get(sb, "/campaigns/status/summer-sale") == {
        "campaign_name": "summer-sale",
        "status": "Running",
        "approval_status": "true",
    }
    sb.clock.set("2022-07-10T04:29:59Z")
    assert get(sb, "/campaigns/status/summer-sale")["status"] == "Running"
    sb.clock.set("2022-07-10T04:30:00Z")
    assert get(sb, "/campaigns/status/summer-sale")["status"] == "Completed"
    chart = get(sb, "/campaignChart")
    assert len(chart) == 1 and chart[0]["renewButton"] is True
    assert chart[0]["status"] == "Completed"
    media = requests.get(chart[0]["url"], timeout=30)
    assert media.content == VIDEO[1] and media.headers["Content-Type"] == "video/mp4"


def test_optional_fields_may_be_left_out_and_approval_is_echoed(sandbox: SandboxHandle) -> None:
    minimal = {
        k: v
        for k, v in form("minimal-one").items()
        if k
        in {
            "campaignName",
            "campaignStartDate",
            "campaignEndDate",
            "timeZone",
            "contentType",
            "channelType",
            "smsText",
            "numberOfSms",
        }
    }
    minimal["is_campaign_approve"] = "false"
    r = post(sandbox, minimal, files={"content": VIDEO})
    assert r.status_code == 200, r.text
    assert get(sandbox, "/campaigns/status/minimal-one")["approval_status"] == "false"
    again = post(sandbox, minimal, files={"content": VIDEO})
    assert again.status_code == 409
    assert again.json()["message"] == "a campaign named 'minimal-one' already exists"


CASES: list[tuple[str, dict[str, Any], dict[str, Any] | None, str, str]] = [
    ("no name", {"campaignName": None}, None, "campaignName is required", "campaignName"),
    ("bad name", {"campaignName": "a/b"}, None, "campaignName must be 1 to 100 letters",
     "campaignName"),
    ("bad date", {"campaignStartDate": "2022-07-09 10:00"}, None,
     "campaignStartDate must be a local date-time YYYY-MM-DDTHH:MM:SS", "campaignStartDate"),
    ("offset date", {"campaignEndDate": "2022-07-10T10:00:00+05:30"}, None,
     "campaignEndDate must be a local date-time", "campaignEndDate"),
    ("impossible date", {"campaignStartDate": "2022-02-30T10:00:00"}, None,
     "is not a valid date and time", "campaignStartDate"),
    ("end before start", {"campaignEndDate": "2022-07-08T10:00:00"}, None,
     "campaignEndDate must be after campaignStartDate", "campaignEndDate"),
    ("time zone text", {"timeZone": "IST"}, None, "timeZone must be a number of hours",
     "timeZone"),
    ("time zone range", {"timeZone": "15"}, None,
     "timeZone must be between -12 and 14 in quarter hours", "timeZone"),
    ("time zone step", {"timeZone": "5.6"}, None,
     "timeZone must be between -12 and 14 in quarter hours", "timeZone"),
    ("content type", {"contentType": "Image"}, None, "contentType must be 'Video'",
     "contentType"),
    ("channel", {"channelType": "EMAIL"}, None, "channelType must be 'SMS'", "channelType"),
    ("sms count", {"numberOfSms": "two"}, None, "numberOfSms must be an integer from 1",
     "numberOfSms"),
    ("sms count zero", {"numberOfSms": "0"}, None, "numberOfSms must be an integer from 1",
     "numberOfSms"),
    ("frequency", {"callToActionFrequency": "-1"}, None,
     "callToActionFrequency must be an integer from 0", "callToActionFrequency"),
    ("url", {"brandUrl": "brand.example"}, None, "brandUrl must be an http(s) URL", "brandUrl"),
    ("boolean", {"is360": "maybe"}, None, "is360 must be true or false", "is360"),
    ("approval", {"is_campaign_approve": "yes"}, None,
     "is_campaign_approve must be true or false", "is_campaign_approve"),
    ("unknown field", {"budget": "10"}, None, "unknown form field 'budget'", "budget"),
    ("repeated field", {"smsText": ["a", "b"]}, None, "smsText is given more than once",
     "smsText"),
    ("long sms", {"smsText": "x" * 1001}, None, "smsText is longer than 1000 characters",
     "smsText"),
    ("no video", {}, {"thumbnail": IMAGE}, "content is required (a file)", "content"),
    ("video as text", {"content": "clip.mp4"}, {"thumbnail": IMAGE},
     "content must be a file upload", "content"),
    ("video type", {}, {"content": ("clip.png", b"x", "image/png")},
     "content must be sent with a media type video/*, not image/png", "content"),
    ("thumbnail type", {}, {"content": VIDEO, "thumbnail": ("t.mp4", b"x", "video/mp4")},
     "thumbnail must be sent with a media type image/*", "thumbnail"),
    ("empty video", {}, {"content": ("clip.mp4", b"", "video/mp4")}, "content is an empty file",
     "content"),
    ("text as file", {"smsText": None},
     {"content": VIDEO, "smsText": ("a.txt", b"hi", "text/plain")},
     "smsText must be a form value, not a file", "smsText"),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "files", "message", "field"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_every_form_field_is_validated(
    sandbox: SandboxHandle,
    changes: dict[str, Any],
    files: dict[str, Any] | None,
    message: str,
    field: str,
) -> None:
    r = post(sandbox, form("validation-case", **changes), files=files)
    assert r.status_code == 400, r.text
    assert message in r.json()["message"]
    assert r.json()["field"] == field


def test_onboarding_needs_multipart_and_credentials(sandbox: SandboxHandle) -> None:
    url = f"{sandbox.campaigns_url}/campaignsOps"
    r = requests.post(url, params={"partner_name": sandbox.partner_name},
                      headers={"api_key": sandbox.api_key}, json=form(), timeout=30)  # fmt: skip
    assert (r.status_code, r.json()["message"]) == (415, "Content-Type must be multipart/form-data")
    r = requests.get(url, params={"partner_name": sandbox.partner_name}, timeout=30)
    assert r.status_code == 401
    r = requests.get(url, headers={"api_key": sandbox.api_key}, timeout=30)
    assert (r.status_code, r.json()["message"]) == (
        400,
        "the partner_name query parameter is required",
    )
    r = requests.get(f"{sandbox.campaigns_url}/campaigns/status/nope",
                     params={"partner_name": sandbox.partner_name},
                     headers={"api_key": sandbox.api_key}, timeout=30)  # fmt: skip
    assert (r.status_code, r.json()["message"]) == (404, "no campaign named 'nope'")


def test_an_oversized_upload_is_413(make_sandbox: SandboxFactory) -> None:
    from edgereports.sandbox import Limits

    sb = make_sandbox(limits=Limits(upload_body=4096))
    r = post(sb, form(), files={"content": ("big.mp4", b"\x00" * 8192, "video/mp4")})
    assert r.status_code == 413
    assert "too large" in r.json()["message"]
