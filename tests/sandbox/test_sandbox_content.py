"""Area A of the sandbox: onboarding, sync, URLs, app keys, signed URLs, whitelist, playback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from edgereports.sandbox import SandboxHandle

SandboxFactory = Callable[..., SandboxHandle]


def call(sb: SandboxHandle, method: str, path: str, **kwargs: Any) -> requests.Response:
    kwargs.setdefault("headers", {"api_key": sb.api_key})
    params = {"partner_name": sb.partner_name, **kwargs.pop("params", {})}
    return requests.request(method, f"{sb.content_url}{path}", params=params, timeout=30,
                            **kwargs)  # fmt: skip


def onboard(sb: SandboxHandle, *publish: str) -> list[dict[str, Any]]:
    items = [{"url": f"https://cdn.partner.example/v/{i}/index.m3u8", "content_access": "public",
              "publish_access": p, "partner_cloud_url": f"https://cdn.partner.example/v/{i}/index.m3u8"}
             for i, p in enumerate(publish)]  # fmt: skip
    r = call(sb, "POST", "/content/add", json={"urlList": items})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def test_onboarded_content_turns_success_after_the_sync_delay(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox(sync_delay=120)
    answer = onboard(sb, "public", "private")
    assert [a["status"] for a in answer] == ["INPROGRESS", "INPROGRESS"]
    assert len({a["content_id"] for a in answer}) == 2
    records = call(sb, "GET", "/content/get-all").json()
    assert [r["content_upload_status"] for r in records] == ["INPROGRESS", "INPROGRESS"]
    assert [r["publish_access"] for r in records] == ["public", "private"]
    assert records[0]["createdAt"] == "2022-07-08T04:30:00.000Z"
    sb.clock.advance(119)
    assert call(sb, "GET", "/content/get-all").json()[0]["content_upload_status"] == "INPROGRESS"
    sb.clock.advance(1)
    records = call(sb, "GET", "/content/get-all").json()
    assert [r["content_upload_status"] for r in records] == ["success", "success"]
    assert records[0]["updatedAt"] == "2022-07-08T04:32:00.000Z"
    assert records[0]["content_status_message"] == "Content onboarded successfully"
    assert list(records[0]) == [
        "id", "partner_name", "content_id", "content_url", "partner_content_url",
        "partner_cloud_url", "createdAt", "updatedAt", "content_upload_status", "content_access",
        "publish_access", "content_status_message", "partner_content_file_name", "content_size",
    ]  # fmt: skip
    url = call(sb, "GET", f"/content/get-url/{answer[0]['content_id']}").json()["url"]
    assert url == records[0]["content_url"]
    assert call(sb, "GET", f"/content/get-url/{records[0]['id']}").status_code == 404


def test_public_playback_needs_the_api_key_and_a_synced_item(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox(sync_delay=10)
    cid = onboard(sb, "public")[0]["content_id"]
    url = call(sb, "GET", f"/content/get-url/{cid}").json()["url"]
    early = requests.get(f"{url}&api_key={sb.api_key}", timeout=30)
    assert early.status_code == 409
    assert early.json()["message"] == "the content is still syncing to the edge; try again later"
    sb.clock.advance(10)
    assert requests.get(url, timeout=30).status_code == 401
    assert requests.get(f"{url}&api_key=nope", timeout=30).status_code == 401
    r = requests.get(f"{url}&api_key={sb.api_key}", timeout=30)
    assert r.status_code == 200
    assert r.headers["Content-Type"] == "application/vnd.apple.mpegurl"
    lines = r.text.splitlines()
    assert lines[0] == "#EXTM3U" and lines[-1] == "#EXT-X-ENDLIST"
    segment = next(line for line in lines if line.startswith("segment0.ts?"))
    seg = requests.get(url.split("?")[0].rsplit("/", 1)[0] + "/" + segment, timeout=30)
    assert seg.status_code == 200 and seg.content[:1] == b"\x47"


def test_private_playback_needs_a_valid_unexpired_signature(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox(sync_delay=0)
    cid = onboard(sb, "private")[0]["content_id"]
    content = call(sb, "GET", f"/content/get-url/{cid}").json()["url"]
    assert requests.get(f"{content}&api_key={sb.api_key}", timeout=30).json()["message"] == (
        "private content plays only through a signed URL"
    )
    keys = call(sb, "GET", "/get-app-key").json()["app_keys"]
    assert len(keys) == 2 and all(len(k) == 32 for k in keys)
    signed = call(
        sb,
        "GET",
        "/signed-url",
        params={
            "app_key": keys[1],
            "expiry_time": 60,
            "content": content,
            "allow_signed_cookie": "false",
        },
    ).json()["url"]
    assert signed.startswith(content + "&")
    query = parse_qs(urlsplit(signed).query)
    assert int(query["expires"][0]) == int(sb.clock.timestamp()) + 60
    assert keys[1] not in signed
    play = f"{signed}&api_key={sb.api_key}"
    assert requests.get(play, timeout=30).status_code == 200
    tampered = play.replace(
        f"expires={query['expires'][0]}", f"expires={int(query['expires'][0]) + 600}"
    )
    r = requests.get(tampered, timeout=30)
    assert (r.status_code, r.json()["message"]) == (403, "the signature does not match")
    sb.clock.advance(60)
    r = requests.get(play, timeout=30)
    assert (r.status_code, r.json()["message"]) == (403, "the signed URL has expired")


def test_a_signed_cookie_unlocks_the_segments(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox(sync_delay=0)
    cid = onboard(sb, "private")[0]["content_id"]
    content = call(sb, "GET", f"/content/get-url/{cid}").json()["url"]
    key = call(sb, "GET", "/get-app-key").json()["app_keys"][0]
    signed = call(
        sb,
        "GET",
        "/signed-url",
        params={
            "app_key": key,
            "expiry_time": 600,
            "content": content,
            "allow_signed_cookie": "true",
        },
    ).json()["url"]
    with requests.Session() as s:
        assert s.get(f"{signed}&api_key={sb.api_key}", timeout=30).status_code == 200
        segment = content.split("?")[0].rsplit("/", 1)[0] + "/segment1.ts"
        r = s.get(segment, params={"api_key": sb.api_key}, timeout=30)
        assert r.status_code == 200
    assert requests.get(segment, params={"api_key": sb.api_key}, timeout=30).status_code == 403


KEY = "<app key>"
CONTENT = "<content url>"


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({"expiry_time": "60", "content": CONTENT}, 400, "app_key is required"),
        ({"app_key": "x" * 32, "expiry_time": "60", "content": CONTENT}, 403,
         "app_key is not valid"),
        ({"app_key": KEY, "expiry_time": "0", "content": CONTENT}, 400,
         "expiry_time must be a whole number of seconds >= 1"),
        ({"app_key": KEY, "expiry_time": "1.5", "content": CONTENT}, 400,
         "expiry_time must be a whole number of seconds >= 1"),
        ({"app_key": KEY, "expiry_time": "60", "content": CONTENT,
          "allow_signed_cookie": "yes"}, 400, "allow_signed_cookie must be 'true' or 'false'"),
        ({"app_key": KEY, "expiry_time": "60", "content": "https://elsewhere.example/a.m3u8"},
         404, "content must be the edge URL of onboarded content"),
    ],
)  # fmt: skip
def test_signed_url_validation(
    sandbox: SandboxHandle, params: dict[str, str], status: int, message: str
) -> None:
    key = call(sandbox, "GET", "/get-app-key").json()["app_keys"][0]
    real = {KEY: key, CONTENT: f"{sandbox.base_url}/edge/v1/{sandbox.partner_name}/nope/a.m3u8"}
    r = call(sandbox, "GET", "/signed-url", params={k: real.get(v, v) for k, v in params.items()})
    assert r.status_code == status
    assert message in r.json()["message"]


def test_whitelist_add_get_delete_and_cors(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox(sync_delay=0)
    assert call(sb, "GET", "/get-whitelist-domain").json() == {
        "cors_whitelist_domain": [sb.base_url]
    }
    origin = "https://player.example.com"
    r = call(sb, "POST", "/add-whitelist-domain", json={"cors_whitelist_domain": origin})
    assert r.json() == {"status": "SUCCESS", "message": "Domain added to the whitelist"}
    assert origin in call(sb, "GET", "/get-whitelist-domain").json()["cors_whitelist_domain"]
    cid = onboard(sb, "public")[0]["content_id"]
    url = call(sb, "GET", f"/content/get-url/{cid}").json()["url"] + f"&api_key={sb.api_key}"
    r = requests.get(url, headers={"Origin": origin}, timeout=30)
    assert r.status_code == 200 and r.headers["Access-Control-Allow-Origin"] == origin
    pre = requests.options(url, headers={"Origin": origin}, timeout=30)
    assert pre.status_code == 204 and pre.headers["Access-Control-Allow-Origin"] == origin
    r = requests.get(url, headers={"Origin": "https://evil.example"}, timeout=30)
    assert r.status_code == 403 and "Access-Control-Allow-Origin" not in r.headers
    r = call(sb, "DELETE", "/delete-whitelist-domain", json={"cors_whitelist_domain": origin})
    assert r.json()["status"] == "SUCCESS"
    assert requests.get(url, headers={"Origin": origin}, timeout=30).status_code == 403
    r = call(sb, "DELETE", "/delete-whitelist-domain", json={"cors_whitelist_domain": origin})
    assert r.status_code == 404


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("https://player.example.com/", "must not end with '/'"),
        ("https://player.example.com/path", "scheme and host, no path"),
        ("player.example.com", "scheme and host, no path"),
        ("", "must be a non-empty string"),
        (5, "must be a non-empty string"),
    ],
)
def test_whitelist_validation(sandbox: SandboxHandle, value: Any, message: str) -> None:
    r = call(sandbox, "POST", "/add-whitelist-domain", json={"cors_whitelist_domain": value})
    assert r.status_code == 400
    assert message in r.json()["message"]
    assert r.json()["field"] == "cors_whitelist_domain"


@pytest.mark.parametrize(
    ("body", "message", "field"),
    [
        ({}, "urlList must be a non-empty array", "urlList"),
        ({"urlList": []}, "urlList must be a non-empty array", "urlList"),
        (
            {"urlList": [{"url": "ftp://x/y.mp4"}]},
            "urlList[0].url must be an http(s) URL",
            "urlList[0].url",
        ),
        (
            {"urlList": [{"url": "https://x/y.mp4", "publish_access": "secret"}]},
            "urlList[0].publish_access must be 'public' or 'private'",
            "urlList[0].publish_access",
        ),
        (
            {"urlList": [{"url": "https://x/y.mp4", "content_access": "private"}]},
            "urlList[0].content_access must be 'public'",
            "urlList[0].content_access",
        ),
        (
            {"urlList": [{"url": "https://x/y.mp4"}] * 51},
            "urlList holds 51 items; at most 50",
            "urlList",
        ),
        (
            {"urlList": [{"url": "https://x/y.mp4", "size": 1}]},
            "unknown field 'size'",
            "urlList[0].size",
        ),
        ({"files": []}, "unknown field 'files'", "files"),
    ],
)
def test_content_add_validation(
    sandbox: SandboxHandle, body: dict[str, Any], message: str, field: str
) -> None:
    r = call(sandbox, "POST", "/content/add", json=body)
    assert r.status_code == 400
    assert message in r.json()["message"]
    assert r.json()["field"] == field


@pytest.mark.parametrize(
    ("headers", "params", "status", "message"),
    [
        ({}, {}, 401, "the api_key header is required"),
        ({"api_key": "wrong"}, {}, 401, "invalid api_key"),
        (None, {"partner_name": ""}, 400, "the partner_name query parameter is required"),
        (None, {"partner_name": "someone-else"}, 403, "no subscription 'someone-else'"),
    ],
)
def test_content_auth(
    sandbox: SandboxHandle,
    headers: dict[str, str] | None,
    params: dict[str, str],
    status: int,
    message: str,
) -> None:
    sent = {"api_key": sandbox.api_key} if headers is None else headers
    r = call(sandbox, "GET", "/get-app-key", headers=sent,
             params=params)  # fmt: skip
    assert r.status_code == status
    assert message in r.json()["message"]
    assert sandbox.api_key not in r.text


def test_json_endpoints_reject_other_bodies(sandbox: SandboxHandle) -> None:
    r = call(sandbox, "POST", "/content/add", data="urlList=1",
             headers={"api_key": sandbox.api_key,
                      "Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
    assert r.status_code == 415
    r = call(sandbox, "POST", "/content/add", data="{oops",
             headers={"api_key": sandbox.api_key, "Content-Type": "application/json"})  # fmt: skip
    assert (r.status_code, r.json()["message"]) == (400, "the request body is not valid JSON")
