"""The session reads the environment once per host: proxies and .netrc still apply."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import requests.sessions
import requests.utils

from edgereports.http import HttpClient, make_session
from tests.conftest import Step, scripted

KEY = "sk-test-env-5d1e"


def post(http: HttpClient) -> None:
    http.request("POST", "/connectivity/v1/report", params={"apikey": KEY}, json={})


def counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count every .netrc lookup, ours and requests' own."""
    calls: list[str] = []
    real = requests.utils.get_netrc_auth

    def lookup(url: Any, raise_errors: bool = False) -> Any:
        calls.append(str(url))
        return real(url, raise_errors)

    monkeypatch.setattr(requests.utils, "get_netrc_auth", lookup)
    monkeypatch.setattr(requests.sessions, "get_netrc_auth", lookup)
    return calls


def test_netrc_is_looked_up_once_per_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine other.example login u password p\n")
    monkeypatch.setenv("NETRC", str(netrc))
    calls = counting(monkeypatch)
    with scripted([Step()]) as server:
        http = HttpClient(server.url, secrets=[KEY], session=make_session(retries=0))
        for _ in range(5):
            post(http)
    assert len(server.seen) == 5
    assert len(calls) == 1
    assert all("Authorization" not in s.headers for s in server.seen)


def test_without_a_netrc_file_requests_is_not_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NETRC", str(tmp_path / "absent"))
    calls = counting(monkeypatch)
    with scripted([Step()]) as server:
        http = HttpClient(server.url, secrets=[KEY], session=make_session(retries=0))
        post(http)
        post(http)
    assert len(server.seen) == 2
    assert calls == []
    assert all("Authorization" not in s.headers for s in server.seen)
    # a file that appears later is found for a host not asked about before
    (tmp_path / "absent").write_text("machine localhost login analyst password n3trc-pass\n")
    with scripted([Step()]) as server:
        url = server.url.replace("127.0.0.1", "localhost")
        http = HttpClient(url, secrets=[KEY], session=make_session(retries=0))
        post(http)
    assert calls  # the file is read (by us, then by requests, which signs the request)
    assert server.seen[0].headers.get("Authorization", "")[:6] == "Basic "


def test_a_netrc_entry_still_signs_every_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login analyst password n3trc-pass\n")
    monkeypatch.setenv("NETRC", str(netrc))
    with scripted([Step()]) as server:
        http = HttpClient(server.url, secrets=[KEY], session=make_session(retries=0))
        post(http)
        post(http)
    assert [s.headers.get("Authorization", "")[:6] for s in server.seen] == ["Basic "] * 2


def test_proxy_from_the_environment_is_used_on_every_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with scripted([Step()]) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("http_proxy", proxy.url)
        http = HttpClient("http://reports.invalid", secrets=[KEY], session=make_session(retries=0))
        post(http)
        post(http)
    assert [s.path for s in proxy.seen] == ["/connectivity/v1/report"] * 2
    assert all(s.headers.get("Host") == "reports.invalid" for s in proxy.seen)


def test_without_trust_env_the_environment_is_not_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = counting(monkeypatch)
    with scripted([Step()]) as server:
        session = make_session(retries=0)
        session.trust_env = False
        post(HttpClient(server.url, secrets=[KEY], session=session))
    assert calls == [] and len(server.seen) == 1
