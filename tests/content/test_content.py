"""ContentClient: input checks, secrets kept out of reprs, and the lifecycle against the sandbox."""

from __future__ import annotations

import re
import traceback
import warnings
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

import edgereports as er
from edgereports.content import (
    CONTENT_COLUMNS,
    AppKey,
    ContentClient,
    PlaybackUrl,
    WhitelistChange,
)
from edgereports.http import make_session
from edgereports.sandbox import SandboxHandle
from tests.conftest import Step, scripted

SandboxFactory = Callable[..., SandboxHandle]

KEY = "k3y-abcdef123456"
NOWHERE = "http://127.0.0.1:9"  # nothing is sent: every case fails before a request


@pytest.fixture
def offline() -> ContentClient:
    return ContentClient(KEY, "partner-1", NOWHERE, retries=0)


Call = Callable[[ContentClient], Any]

INVALID: list[tuple[str, Call, str]] = [
    (
        "ftp url",
        lambda c: c.add("ftp://files.example/a.mp4"),
        "urls[0] 'ftp://files.example/a.mp4' is not an http(s) URL",
    ),
    (
        "no scheme",
        lambda c: c.add(["https://a.example/1.mp4", "a.example/2.mp4"]),
        "urls[1] 'a.example/2.mp4' is not an http(s) URL",
    ),
    ("no host", lambda c: c.add("https:///a.mp4"), "urls[0] 'https:///a.mp4' has no host"),
    (
        "blank inside",
        lambda c: c.add("https://a.example/my clip.mp4"),
        "urls[0] 'https://a.example/my clip.mp4' contains blanks",
    ),
    ("not a string", lambda c: c.add([42]), "urls[0] must be an http(s) URL string, got int"),
    ("no url", lambda c: c.add([]), "urls is empty; give at least one http(s) URL"),
    (
        "repeat",
        lambda c: c.add(["https://a.example/1.mp4", "https://a.example/1.mp4"]),
        "urls[1] repeats urls[0]",
    ),
    (
        "publish access",
        lambda c: c.add("https://a.example/1.mp4", publish_access="secret"),
        "publish_access must be 'public' or 'private', got 'secret'",
    ),
    (
        "row id int",
        lambda c: c.get_url(7),
        "content_id 7 is an integer, which looks like a row id; "
        "use the content_id column of list()",
    ),
    (
        "row id text",
        lambda c: c.get_url("12"),
        "content_id '12' is purely numeric, which looks like a row id; use the content_id column",
    ),
    ("blank id", lambda c: c.get_url(" "), "content_id must be a non-empty string, got ' '"),
    (
        "zero expiry",
        lambda c: c.signed_url("https://e.example/x.m3u8", app_key="a", expires_in=0),
        "expires_in must be a positive number of seconds, got 0",
    ),
    (
        "negative expiry",
        lambda c: c.signed_url("https://e.example/x.m3u8", app_key="a", expires_in=-5),
        "expires_in must be a positive number of seconds, got -5",
    ),
    (
        "negative timedelta",
        lambda c: c.signed_url(
            "https://e.example/x.m3u8", app_key="a", expires_in=timedelta(minutes=-1)
        ),
        "expires_in must be a positive number of seconds, got -60",
    ),
    (
        "fractional expiry",
        lambda c: c.signed_url("https://e.example/x.m3u8", app_key="a", expires_in=1.5),
        "expires_in must be a whole number of seconds, got 1.5",
    ),
    (
        "text expiry",
        lambda c: c.signed_url("https://e.example/x.m3u8", app_key="a", expires_in="60"),
        "expires_in must be a number of seconds or a timedelta, got str",
    ),
    (
        "content not a url",
        lambda c: c.signed_url("abc123", app_key="a"),
        "content 'abc123' is not an http(s) URL",
    ),
    (
        "cookie flag",
        lambda c: c.signed_url("https://e.example/x", app_key="a", allow_signed_cookie="true"),
        "allow_signed_cookie must be True or False, got 'true'",
    ),
    (
        "blank app key",
        lambda c: c.signed_url("https://e.example/x", app_key="  "),
        "app_key is blank; omit it to use the first app key",
    ),
    (
        "playback not url",
        lambda c: c.playback_url("edge/x.m3u8"),
        "url 'edge/x.m3u8' is not an http(s) URL",
    ),
    (
        "origin no scheme",
        lambda c: c.allow_domain("player.example"),
        "origin 'player.example' has no scheme; write it as 'https://player.example'",
    ),
    (
        "origin path",
        lambda c: c.allow_domain("https://player.example/embed"),
        "origin 'https://player.example/embed' has a path ('/embed'); "
        "an origin is scheme://host[:port] only, e.g. 'https://player.example'",
    ),
    (
        "origin query",
        lambda c: c.allow_domain("https://player.example?x=1"),
        "origin 'https://player.example?x=1' has a query",
    ),
    (
        "origin slash query",
        lambda c: c.remove_domain("https://player.example/?x=1"),
        "origin 'https://player.example/?x=1' has a query",
    ),
    (
        "origin fragment",
        lambda c: c.remove_domain("https://player.example#top"),
        "origin 'https://player.example#top' has a fragment",
    ),
    (
        "origin scheme",
        lambda c: c.allow_domain("ftp://player.example"),
        "origin 'ftp://player.example' must use http or https",
    ),
    ("origin no host", lambda c: c.allow_domain("https://"), "origin 'https://' has no host"),
    (
        "origin port",
        lambda c: c.allow_domain("https://player.example:99999"),
        "origin 'https://player.example:99999' has an invalid port",
    ),
    (
        "playback origin",
        lambda c: c.fetch_playback("https://e.example/x", origin="e.example"),
        "origin 'e.example' has no scheme",
    ),
    (
        "wait nothing",
        lambda c: c.wait_until_synced([]),
        "content_ids is empty; give at least one content_id",
    ),
    (
        "wait row id",
        lambda c: c.wait_until_synced(["abc", 3]),
        "content_ids[1] 3 is an integer, which looks like a row id",
    ),
    (
        "wait timeout",
        lambda c: c.wait_until_synced("abc", timeout=0),
        "timeout must be a positive number of seconds, got 0",
    ),
    (
        "wait poll",
        lambda c: c.wait_until_synced("abc", poll=-1),
        "poll must be a positive number of seconds, got -1",
    ),
]


@pytest.mark.parametrize(("case", "call", "message"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_input_is_refused_before_any_request(
    offline: ContentClient, case: str, call: Call, message: str
) -> None:
    with pytest.raises(er.InputError, match=re.escape(message)):
        call(offline)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"api_key": " "}, "api_key is empty; set EDGEREPORTS_API_KEY or pass api_key="),
        ({"partner_name": ""}, "partner_name is empty; set EDGEREPORTS_PARTNER_NAME"),
        (
            {"base_url": "api.example"},
            "base_url must be an http(s) URL such as https://host.example, got 'api.example'",
        ),
        # every number is checked when the client is built
        ({"timeout": 0}, "timeout must be a positive number of seconds, got 0"),
        ({"timeout": (-1, 5)}, "timeout (connect) must be a positive number of seconds"),
        ({"timeout": float("nan")}, "timeout must be a positive number of seconds"),
        ({"retries": -1}, "retries must be a whole number >= 0, got -1"),
    ],
)
def test_bad_connection_settings(kwargs: dict[str, Any], message: str) -> None:
    args = {"api_key": KEY, "partner_name": "p", "base_url": NOWHERE, **kwargs}
    with pytest.raises(er.ConfigError, match=re.escape(message)):
        ContentClient(**args)


def test_from_settings_names_what_is_missing() -> None:
    with pytest.raises(
        er.ConfigError,
        match=re.escape(
            "missing settings: api_key (EDGEREPORTS_API_KEY), "
            "partner_name (EDGEREPORTS_PARTNER_NAME)"
        ),
    ):
        ContentClient.from_settings(er.Settings(base_url=NOWHERE))


def test_trailing_slash_of_an_origin_is_removed_with_a_warning() -> None:
    from edgereports._content_campaigns.validate import check_origin

    with pytest.warns(
        UserWarning,
        match=re.escape("removed the trailing slash of origin 'https://player.example:8443/'"),
    ):
        assert check_origin("https://player.example:8443/") == "https://player.example:8443"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_origin(" http://localhost:3000 ") == "http://localhost:3000"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://e.example/v/x.m3u8", "https://e.example/v/x.m3u8?api_key=k3y-abcdef123456"),
        (
            "https://e.example/v/x.m3u8?partner_name=p",
            "https://e.example/v/x.m3u8?partner_name=p&api_key=k3y-abcdef123456",
        ),
        (
            "https://e.example/v/x.m3u8?expires=9&signature=ab&api_key=old",
            "https://e.example/v/x.m3u8?expires=9&signature=ab&api_key=k3y-abcdef123456",
        ),
        ("https://e.example/x.mp4?", "https://e.example/x.mp4?api_key=k3y-abcdef123456"),
        ("https://e.example/x.mp4#t=5", "https://e.example/x.mp4?api_key=k3y-abcdef123456#t=5"),
    ],
)
def test_playback_url_appends_the_key(offline: ContentClient, url: str, expected: str) -> None:
    playback = offline.playback_url(url)
    assert playback == expected
    assert isinstance(playback, PlaybackUrl)
    assert KEY not in repr(playback)
    assert KEY not in playback.redacted
    assert "api_key=***" in repr(playback)


def test_nothing_shows_a_key(offline: ContentClient) -> None:
    assert KEY not in repr(offline)
    assert repr(offline) == f"ContentClient(partner_name='partner-1', base_url='{NOWHERE}')"
    secret = AppKey("0123456789abcdef")
    assert "0123456789abcdef" not in repr(secret) + str(secret) + repr([secret])


def test_content_columns_are_the_spec_fields() -> None:
    # The documented content record fields, copied by hand in their order.
    assert [name for name, _ in CONTENT_COLUMNS] == [
        "id",
        "partner_name",
        "content_id",
        "content_url",
        "partner_content_url",
        "partner_cloud_url",
        "createdAt",
        "updatedAt",
        "content_upload_status",
        "content_access",
        "publish_access",
        "content_status_message",
        "partner_content_file_name",
        "content_size",
    ]


# -- against the sandbox --------------------------------------------------------------------

CDN = "https://cdn.partner.example/v"


def client_for(sb: SandboxHandle, **kwargs: Any) -> ContentClient:
    return ContentClient(sb.api_key, sb.partner_name, sb.base_url, **kwargs)


def test_whole_lifecycle_public_and_private(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox(sync_delay=0.5, clock=None)  # real time: content syncs after 0.5 s
    client = client_for(sb)
    public = client.add(f"{CDN}/1/index.m3u8", publish_access="public")
    private = client.add([f"{CDN}/2/index.m3u8"])  # private is the default
    assert [(i.url, i.status) for i in public + private] == [
        (f"{CDN}/1/index.m3u8", "INPROGRESS"),
        (f"{CDN}/2/index.m3u8", "INPROGRESS"),
    ]
    ids = [public[0].content_id, private[0].content_id]

    records = client.list()
    assert list(records.columns) == [name for name, _ in CONTENT_COLUMNS]
    assert list(records["content_id"]) == ids
    assert list(records["publish_access"]) == ["public", "private"]
    assert list(records["content_access"]) == ["public", "public"]
    assert list(records["partner_cloud_url"]) == [f"{CDN}/1/index.m3u8", f"{CDN}/2/index.m3u8"]
    assert list(records["content_upload_status"]) == ["INPROGRESS", "INPROGRESS"]
    assert str(records["createdAt"].dtype) == "datetime64[us, UTC]"
    assert str(records["content_size"].dtype) == "Int64"
    assert str(records["id"].dtype) == "Int64"
    assert records["content_id"].dtype == "string"

    synced = client.wait_until_synced(private + public, timeout=20, poll=0.1, progress=False)
    assert list(synced["content_id"]) == ids[::-1]
    assert list(synced["content_upload_status"]) == ["success", "success"]
    assert (synced["updatedAt"] > synced["createdAt"]).all()

    # public: the edge URL plus the API key plays
    edge = client.get_url(ids[0])
    assert edge == synced["content_url"].iloc[1]
    playback = client.playback_url(edge)
    answer = requests.get(playback, timeout=30)
    assert answer.status_code == 200
    assert answer.headers["Content-Type"] == "application/vnd.apple.mpegurl"
    assert answer.text.startswith("#EXTM3U")
    assert client.fetch_playback(playback).text == answer.text

    # private: refused unsigned, plays signed
    edge = client.get_url(ids[1])
    with pytest.raises(
        er.AuthError, match="private content plays only through a signed URL"
    ) as info:
        client.fetch_playback(client.playback_url(edge))
    assert sb.api_key not in "".join(traceback.format_exception(info.value))
    signed = client.signed_url(edge, expires_in=timedelta(minutes=5))
    assert signed.startswith(edge + "&")
    assert requests.get(client.playback_url(signed), timeout=30).status_code == 200

    # an Origin must be on the whitelist
    origin = "https://player.example"
    with pytest.raises(er.AuthError, match=r"origin https://player\.example is not on the CORS"):
        client.fetch_playback(client.playback_url(signed), origin=origin)
    with pytest.warns(UserWarning, match="removed the trailing slash"):
        client.allow_domain(origin + "/")
    played = client.fetch_playback(client.playback_url(signed), origin=origin)
    assert played.headers["Access-Control-Allow-Origin"] == origin
    client.remove_domain(origin)
    with pytest.raises(er.AuthError, match="not on the CORS whitelist"):
        client.fetch_playback(client.playback_url(signed), origin=origin)

    # an expired signature is refused
    short = client.playback_url(client.signed_url(edge, expires_in=60))
    assert requests.get(short, timeout=30).status_code == 200
    sb.clock.advance(61)
    late = requests.get(short, timeout=30)
    assert (late.status_code, late.json()["message"]) == (403, "the signed URL has expired")


def test_wait_times_out_and_lists_what_is_pending(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox(sync_delay=120)  # the clock stands still unless moved
    client = client_for(sb)
    first = client.add(f"{CDN}/1/index.m3u8")[0].content_id
    sb.clock.advance(120)
    second = client.add(f"{CDN}/2/index.m3u8")[0].content_id
    unknown = "0123456789abcdef01234567"
    with pytest.raises(er.SyncTimeout) as info:
        client.wait_until_synced([first, second, unknown], timeout=0.3, poll=0.1, progress=False)
    assert info.value.pending == [second, unknown]
    assert str(info.value) == (
        f"2 of 3 content(s) not synced after 0.3 s: {second} (INPROGRESS: Content onboarding "
        f"is in progress); {unknown} (not listed by get-all)"
    )
    assert isinstance(info.value, TimeoutError)
    assert list(client.wait_until_synced(first, timeout=1, progress=False)["content_id"]) == [first]


def test_progress_bar_counts_synced_content(
    make_sandbox: SandboxFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    sb = make_sandbox(sync_delay=0)
    client = client_for(sb)
    items = client.add([f"{CDN}/1/index.m3u8", f"{CDN}/2/index.m3u8"])
    client.wait_until_synced(items, timeout=5, poll=0.1, progress=True)
    assert "2/2" in capsys.readouterr().err


def test_whitelist_round_trip(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox()
    client = client_for(sb)
    before = client.domains()
    assert before == [sb.base_url]  # the service's default whitelist URL
    added = client.allow_domain("https://player.example:8443")
    assert added == WhitelistChange(
        "https://player.example:8443", "SUCCESS", "Domain added to the whitelist"
    )
    assert client.domains() == [*before, "https://player.example:8443"]
    removed = client.remove_domain("https://player.example:8443")
    assert (removed.status, removed.message) == ("SUCCESS", "Domain removed from the whitelist")
    assert client.domains() == before
    with pytest.raises(er.NotFoundError, match="is not on the whitelist"):
        client.remove_domain("https://player.example:8443")


def test_app_keys_and_signing_with_a_chosen_key(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox(sync_delay=0)
    client = client_for(sb)
    keys = client.app_keys()
    assert len(keys) == 2
    for key in keys:
        assert key.value not in repr(keys)
    edge = client.get_url(client.add(f"{CDN}/1/index.m3u8")[0].content_id)
    by_default = parse_qs(urlsplit(client.signed_url(edge)).query)
    chosen = parse_qs(urlsplit(client.signed_url(edge, app_key=keys[1])).query)
    as_text = parse_qs(urlsplit(client.signed_url(edge, app_key=keys[1].value)).query)
    assert by_default["kid"] != chosen["kid"] == as_text["kid"]
    assert by_default["cookie"] == ["0"]
    cookie = client.signed_url(edge, expires_in=90, allow_signed_cookie=True)
    assert parse_qs(urlsplit(cookie).query)["cookie"] == ["1"]
    assert requests.get(client.playback_url(cookie), timeout=30).status_code == 200


def test_a_wrong_key_is_an_auth_error_that_shows_no_key(sandbox: SandboxHandle) -> None:
    wrong = "wrong-key-0123456789"
    client = ContentClient(wrong, sandbox.partner_name, sandbox.base_url)
    with pytest.raises(er.AuthError) as info:
        client.list()
    assert info.value.status_code == 401
    assert "invalid api_key" in str(info.value)
    shown = "".join(traceback.format_exception(info.value)) + repr(info.value)
    assert wrong not in shown and sandbox.api_key not in shown


def test_unknown_content_is_not_found(sandbox: SandboxHandle) -> None:
    with pytest.raises(er.NotFoundError, match="unknown content_id 'abcdef0123456789abcdef01'"):
        client_for(sandbox).get_url("abcdef0123456789abcdef01")


def test_an_empty_list_has_every_column(make_sandbox: SandboxFactory) -> None:
    records = client_for(make_sandbox()).list()
    assert records.empty
    assert list(records.columns) == [name for name, _ in CONTENT_COLUMNS]
    assert str(records["updatedAt"].dtype) == "datetime64[us, UTC]"


def test_onboarding_is_sent_once_and_reads_are_retried(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox()
    client = client_for(sb, session=make_session(retries=2, backoff=0.01))
    sb.enqueue_faults("503")
    before = sb.request_count("content")
    with pytest.raises(er.ApiError, match="HTTP 503") as info:
        client.add(f"{CDN}/1/index.m3u8")
    assert info.value.status_code == 503
    assert sb.request_count("content") - before == 1  # not repeated: it could duplicate content
    assert client.list().empty  # and nothing was onboarded
    sb.enqueue_faults("503")
    before = sb.request_count("content")
    assert client.domains() == [sb.base_url]
    assert sb.request_count("content") - before == 2  # a read is retried


def test_signing_request_on_the_wire_and_an_echoed_app_key_is_redacted() -> None:
    app_key = "appkey-0123456789abcdef"
    echo = f'{{"message": "app key {app_key} is suspended"}}'.encode()
    steps = [
        Step(body=f'{{"app_keys": ["{app_key}"]}}'.encode()),
        Step(body=b'{"url": "https://e.example/x.m3u8?signature=ab"}'),
        Step(status=400, body=echo),
    ]
    with scripted(steps) as server:
        client = ContentClient(KEY, "partner-1", server.url, retries=0)
        signed = client.signed_url("https://e.example/x.m3u8", expires_in=timedelta(hours=2))
        assert signed == "https://e.example/x.m3u8?signature=ab"
        with pytest.raises(er.ApiError, match="is suspended") as info:
            client.signed_url("https://e.example/x.m3u8", app_key=app_key)
    shown = "".join(traceback.format_exception(info.value)) + info.value.body_excerpt
    assert app_key not in shown and KEY not in shown
    first, second, _ = server.seen
    assert (first.method, first.path) == ("GET", "/api/v1/stream-tech/get-app-key")
    assert (second.path, second.headers["api_key"]) == ("/api/v1/stream-tech/signed-url", KEY)
    assert second.query == {
        "partner_name": ["partner-1"],
        "app_key": [app_key],
        "expiry_time": ["7200"],
        "content": ["https://e.example/x.m3u8"],
        "allow_signed_cookie": ["false"],
    }
