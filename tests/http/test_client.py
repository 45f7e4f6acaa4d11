"""The shared HTTP layer against a scripted loopback server: retries, budget, errors, redaction."""

from __future__ import annotations

import logging
import time
import traceback

import pytest
import requests

from edgereports.errors import (
    ApiError,
    AuthError,
    NotFoundError,
    RateLimitError,
    TransportError,
)
from edgereports.http import HttpClient, install_log_redaction, make_session
from tests.conftest import (
    Step,
    chained,
    closed_port_url,
    every_logger_at_debug,
    raw_server,
    scripted,
)

KEY = "sk-test-7f3a9c1e5b"
FAST = {"retries": 4, "backoff": 0.01, "retry_after_cap": 0.2}


def client(url: str, *, retries: int = 4, **session: float) -> HttpClient:
    options = {**FAST, **session, "retries": retries}
    return HttpClient(
        url,
        secrets=[KEY],
        timeout=(2.0, 2.0),
        retries=retries,
        session=make_session(**options),  # type: ignore[arg-type]
    )


def get(http: HttpClient, what: str = "") -> requests.Response:
    return http.request(
        "POST", "/connectivity/v1/report", params={"apikey": KEY}, json={}, what=what
    )


def no_key(exc: BaseException) -> str:
    text = "".join(traceback.format_exception(exc))
    assert KEY not in text
    return text


def test_session_retry_policy() -> None:
    retry = (
        make_session(retries=3, backoff=0.25, retry_after_cap=7)
        .get_adapter("https://x")
        .max_retries
    )
    assert retry.total == retry.connect == retry.read == retry.status == 3
    assert set(retry.status_forcelist) == {429, 500, 502, 503, 504}
    assert "POST" in retry.allowed_methods
    assert retry.respect_retry_after_header and not retry.raise_on_status
    # Retry-After is clamped to [backoff / 10, cap]: never a zero wait unless backoff is 0.
    assert retry.parse_retry_after("0") == 0.025
    assert retry.parse_retry_after("1.5") == 1.5
    assert retry.parse_retry_after("3600") == 7
    no_floor = make_session(backoff=0).get_adapter("http://x").max_retries
    assert no_floor.parse_retry_after("0") == 0


def test_retries_5xx_then_succeeds() -> None:
    with scripted([Step(503), Step(502), Step(200, b'{"n": 1}')]) as srv:
        response = get(client(srv.url))
    assert response.json() == {"n": 1}
    assert len(srv.seen) == 3
    assert srv.seen[0].method == "POST" and srv.seen[0].query == {"apikey": [KEY]}


@pytest.mark.parametrize(
    ("status", "error", "attempts"),
    [
        (503, ApiError, 5),
        (500, ApiError, 5),
        (400, ApiError, 1),
        (401, AuthError, 1),
        (403, AuthError, 1),
        (404, NotFoundError, 1),
    ],
)
def test_status_maps_to_error(status: int, error: type[ApiError], attempts: int) -> None:
    body = f'{{"message": "bad key {KEY}", "url": "/x?apikey={KEY}"}}'.encode()
    with scripted([Step(status, body)]) as srv, pytest.raises(error) as info:
        get(client(srv.url), what="window 2022-07-07..2022-07-08")
    exc = info.value
    assert type(exc) is error
    assert len(srv.seen) == attempts
    assert exc.status_code == status
    assert str(exc).startswith("window 2022-07-07..2022-07-08: POST ")
    assert f"HTTP {status}" in str(exc) and f"after {attempts} attempt(s)" in str(exc)
    assert exc.url.endswith("/connectivity/v1/report?apikey=***")
    assert "bad key ***" in exc.body_excerpt and len(exc.body_excerpt) <= 200
    assert exc.__cause__ is None and exc.__context__ is None
    no_key(exc)


def test_rate_limit_honours_retry_after_then_gives_up() -> None:
    limited = Step(429, b"slow down", (("Retry-After", "0.1"),))
    with scripted([limited]) as srv:
        started = time.perf_counter()
        with pytest.raises(RateLimitError) as info:
            get(client(srv.url, retries=2))
        elapsed = time.perf_counter() - started
    assert len(srv.seen) == 3
    assert elapsed >= 0.2  # two waits of the Retry-After (0.1 s each)
    assert info.value.retry_after == 0.1 and info.value.status_code == 429
    assert "after 3 attempt(s)" in str(info.value)
    no_key(info.value)


def test_retry_after_is_capped() -> None:
    with scripted([Step(429, b"", (("Retry-After", "3600"),)), Step(200)]) as srv:
        started = time.perf_counter()
        get(client(srv.url, retry_after_cap=0.05))
    assert len(srv.seen) == 2
    assert time.perf_counter() - started < 30  # an hour asked, the cap honoured


def test_retry_after_zero_still_waits() -> None:
    zero = Step(429, b"", (("Retry-After", "0"),))
    with scripted([zero, zero, Step(200)]) as srv:
        started = time.perf_counter()
        get(client(srv.url, backoff=1.0))
    assert len(srv.seen) == 3
    assert time.perf_counter() - started >= 0.2  # two waits of a tenth of the backoff


def test_dropped_body_is_retried_by_the_outer_layer() -> None:
    with scripted([Step(200, b'{"half": "of this body is lost"}', drop=True), Step(200)]) as srv:
        response = get(client(srv.url))
    assert response.json() == {"ok": True}
    assert len(srv.seen) == 2


@pytest.mark.parametrize(
    "steps",
    [
        [Step(200, b'{"x": "yyyyyyyy"}', drop=True)],
        [Step(503), Step(200, b'{"x": "yyyyyyyy"}', drop=True)],
        [Step(close=True)],
    ],
    ids=["drops", "5xx-and-drops", "closed-before-answer"],
)
def test_one_budget_of_attempts(steps: list[Step]) -> None:
    # The script repeats its last step: after the first 5xx every answer fails. urllib3 and
    # the body-read layer share retries=3, so the server sees exactly 4 requests.
    with scripted(steps) as srv, pytest.raises(TransportError) as info:
        get(client(srv.url, retries=3), what="window 1/1")
    assert len(srv.seen) == 4
    assert "after 4 attempt(s)" in str(info.value)
    assert str(info.value).startswith("window 1/1: POST http://127.0.0.1:")
    no_key(info.value)


def test_closed_port_is_a_transport_error_at_once() -> None:
    # nothing listens: the refusal is final, so no retry and no backoff delay it
    started = time.perf_counter()
    with pytest.raises(TransportError) as info:
        get(client(closed_port_url(), retries=4, backoff=0.5))
    assert time.perf_counter() - started < 1.0
    assert "after 1 attempt(s)" in str(info.value)
    assert "Connection refused" in str(info.value)
    assert info.value.unreachable is True
    assert "apikey=***" in str(info.value)
    no_key(info.value)


def test_read_timeout_is_a_transport_error() -> None:
    with scripted([Step(sleep=1.0)]) as srv:
        http = HttpClient(
            srv.url,
            secrets=[KEY],
            timeout=(1.0, 0.2),
            retries=1,
            session=make_session(retries=1, backoff=0.01),
        )
        with pytest.raises(TransportError) as info:
            get(http)
    assert len(srv.seen) == 2
    assert "after 2 attempt(s)" in str(info.value)
    no_key(info.value)


def test_user_session_is_used_as_is_with_our_errors() -> None:
    session = requests.Session()
    session.headers["X-Team"] = "analytics"
    with scripted([Step(200, b'{"x": "yyyyyyyy"}', drop=True), Step(418, b"teapot")]) as srv:
        http = HttpClient(srv.url, secrets=[KEY], retries=2, session=session)
        with pytest.raises(ApiError) as info:
            get(http)
    assert [s.headers.get("X-Team") for s in srv.seen] == ["analytics", "analytics"]
    assert info.value.status_code == 418 and "after 2 attempt(s)" in str(info.value)


def test_full_url_and_repr() -> None:
    with scripted([Step(200)]) as srv:
        http = client("http://unused.invalid")
        response = http.request("GET", f"{srv.url}/abs", params={"apikey": KEY})
    assert response.status_code == 200 and srv.seen[0].path == "/abs"
    assert repr(http) == "HttpClient(base_url='http://unused.invalid')"
    assert http.url("x/y") == "http://unused.invalid/x/y"


def test_no_key_in_any_log_record(caplog: pytest.LogCaptureFixture) -> None:
    with scripted([Step(503), Step(200, b"{}", drop=True), Step(200)]) as srv:
        http = client(srv.url)
        with caplog.at_level(logging.DEBUG), every_logger_at_debug():
            get(http)
            logging.getLogger("edgereports.http").debug("url %s", f"{srv.url}/?apikey={KEY}")
    formatter = logging.Formatter("%(name)s %(message)s")
    lines = [formatter.format(r) for r in caplog.records]
    assert any("apikey=***" in line for line in lines)  # urllib3 printed the URL, redacted
    assert not [line for line in lines if KEY in line]


def test_log_redaction_is_idempotent() -> None:
    install_log_redaction([KEY])
    install_log_redaction([KEY, "another-secret"])
    for name in ("urllib3", "urllib3.connectionpool", "edgereports"):
        filters = [
            f for f in logging.getLogger(name).filters if type(f).__name__ == "_RedactingFilter"
        ]
        assert len(filters) == 1


@pytest.mark.parametrize(
    ("reason", "error"),
    [(f"Invalid key {KEY}", AuthError), (f"apikey={KEY}", AuthError), (f"bad {KEY}", ApiError)],
)
def test_status_line_with_the_key_is_redacted(reason: str, error: type[ApiError]) -> None:
    """the reason phrase goes through redaction like the URL and body."""
    status = 401 if error is AuthError else 400
    # http.server writes its own reason phrase: send the raw status line instead
    with raw_server(f"HTTP/1.1 {status} {reason}") as url, pytest.raises(error) as info:
        get(client(url, retries=0))
    assert "***" in str(info.value)
    assert KEY not in str(info.value) and KEY not in repr(info.value)
    no_key(info.value)


def test_transport_error_keeps_no_raw_exception_in_its_chain() -> None:
    """requests' exception (URL with the key) is not left in __context__."""
    with pytest.raises(TransportError) as info:
        get(client(closed_port_url(), retries=1))
    assert [type(e) for e in chained(info.value)] == [TransportError]
    text = "".join(traceback.format_exception(info.value, chain=True))
    assert KEY not in text
