"""Secrets in every form they take on the wire are redacted; unsendable ones are refused.

A key travels as it is, percent-encoded (``+`` for a space, upper- or lower-case hex, once or
twice), JSON-escaped, and inside base64 (``Authorization: Basic``). A server may echo any of
these in a status line or a body. The property test generates keys and tokens, writes them in
every encoding, and checks :func:`redact` leaves none; the loopback tests drive the reporting
clients against servers echoing the encoded forms and scan messages, reprs, chained causes and
log lines. A credential with a control character or one outside Latin-1 is refused as a
``ConfigError`` before any request, naming the setting and not the value.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import re
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import edgereports as er
from edgereports import Report, ServiceReport
from edgereports.errors import ConfigError, EdgeReportsError, redact
from edgereports.reporting import ReportingClient, ReportingServiceClient
from tests.conftest import Step, chained, every_logger_at_debug, raw_server, scripted

FIGURES: Counter[str] = Counter()


def _lower_hex(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), text)


#: Every form a secret takes on the wire, by name.
ENCODINGS: dict[str, Callable[[str], str]] = {
    "raw": lambda s: s,
    "percent (upper hex)": lambda s: quote(s, safe=""),
    "percent (lower hex)": lambda s: _lower_hex(quote(s, safe="")),
    "percent, + for space": quote_plus,
    "percent twice": lambda s: quote(quote(s, safe=""), safe=""),
    "query as requests sends it": lambda s: quote_plus(s, safe="/"),
    "JSON string": lambda s: json.dumps(s)[1:-1],
    "JSON string (ASCII)": lambda s: json.dumps(s, ensure_ascii=True).replace("/", "\\/")[1:-1],
    "UTF-8 read as Latin-1": lambda s: s.encode("utf-8").decode("latin-1"),
    "base64": lambda s: base64.b64encode(s.encode()).decode(),
    "base64 url-safe": lambda s: base64.urlsafe_b64encode(s.encode()).decode(),
    "Basic user:secret": lambda s: base64.b64encode(f"user:{s}".encode()).decode(),
    "Basic secret:": lambda s: base64.b64encode(f"{s}:".encode()).decode(),
    "Basic ab:secret": lambda s: base64.b64encode(f"ab:{s}".encode()).decode(),
}

#: Keys and tokens as a user may paste them: printable Latin-1, with the URL's reserved
#: characters and spaces inside.
SECRET_CHARS = st.characters(
    codec="latin-1", exclude_categories=("Cc",), exclude_characters="\x7f"
) | st.sampled_from("+/=%&?# .-_~:")
SECRETS = st.text(SECRET_CHARS, min_size=8, max_size=48).filter(lambda s: s.strip() == s)


@pytest.fixture(scope="module", autouse=True)
def figures() -> Iterator[None]:
    FIGURES.clear()
    yield
    print(
        f"\nredaction: {FIGURES['secrets']} keys and tokens x {len(ENCODINGS)} encodings, "
        f"{FIGURES['texts']} texts scanned; leaks found: {FIGURES['leaks']}"
    )


@settings(max_examples=300, deadline=None)
@given(secret=SECRETS, before=st.sampled_from(["", "x", "key ", "?apikey=", "Bearer "]))
def test_redact_removes_every_encoding_of_a_secret(secret: str, before: str) -> None:
    FIGURES["secrets"] += 1
    for name, encode in ENCODINGS.items():
        shown = encode(secret)
        text = f'answered 401 {before}{shown} for "{shown}".'
        clean = redact(text, [secret])
        FIGURES["texts"] += 1
        leaked = shown in clean or (secret in clean and len(secret) >= 4)
        FIGURES["leaks"] += leaked
        assert not leaked, f"{name}: {clean!r}"


def _texts(error: BaseException | None, logs: list[str]) -> list[str]:
    out = list(logs)
    for item in chained(error):
        out += [str(item), repr(item), *map(repr, item.args)]
        out += [repr(v) for v in vars(item).values()]
    if error is not None:
        out.append("".join(traceback.format_exception(error, chain=True)))
    return out


class Keep(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _scan(secret: str, drive: Callable[[], object]) -> list[str]:
    keep = Keep()
    root = logging.getLogger()
    root.addHandler(keep)
    error: BaseException | None = None
    try:
        with every_logger_at_debug(), pytest.raises(EdgeReportsError) as caught:
            drive()
        error = caught.value
    finally:
        root.removeHandler(keep)
    forms = {encode(secret) for encode in ENCODINGS.values()}
    leaks = [
        (form, text[:200]) for text in _texts(error, keep.lines) for form in forms if form in text
    ]
    FIGURES["texts"] += len(_texts(error, keep.lines))
    FIGURES["leaks"] += len(leaks)
    assert not leaks
    return [str(error)]


KEY = "sk+live/Tr4ce=ab c%7E9"
TOKEN = "eyJ0eXAi.Ym9keQ==+/tok en"
REPORT = (
    Report(account_id="A")
    .between("2022-06-01T00:00:00Z", "2022-06-02T00:00:00Z")
    .granularity("DAY")
    .metric("uplink_bytes", "COUNT")
)
FAST = {"progress": False, "backoff": 0.01, "retry_after_cap": 0.05, "max_workers": 1}


@pytest.mark.parametrize("encoding", ["percent (lower hex)", "percent, + for space",
                                      "query as requests sends it", "percent twice"])  # fmt: skip
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_a_server_echoing_the_encoded_key_leaks_nothing(encoding: str, version: str) -> None:
    shown = ENCODINGS[encoding](KEY)
    body = json.dumps({"message": f"bad key {shown}", "url": f"/r?k={shown}"}).encode()
    with raw_server(f"HTTP/1.1 401 key {shown} refused", body) as url:
        client = ReportingClient(KEY, url, api_version=version, retries=0, **FAST)
        report = dataclasses.replace(REPORT, api_version=version)
        (message,) = _scan(KEY, lambda: client.fetch(report))
    assert "401" in message


@pytest.mark.parametrize("encoding", ["raw", "base64", "Basic user:secret", "JSON string"])
def test_a_server_echoing_the_token_leaks_nothing(encoding: str) -> None:
    shown = ENCODINGS[encoding](TOKEN)
    body = json.dumps({"error": f"Authorization: Bearer {TOKEN} / {shown}"}).encode()
    report = ServiceReport().metric("ap_count", "COUNT").last("DAY").step("1h")
    with scripted([Step(401, body)]) as server:
        client = ReportingServiceClient(TOKEN, server.url, "core-1", retries=0, backoff=0.01)
        _scan(TOKEN, lambda: client.fetch(report))


@pytest.mark.parametrize(
    ("secret", "what"),
    [
        ("tok\nen-0123456789", "a control character"),
        ("tok\ten-0123456789", "a control character"),
        ("tok\x85en-0123456789", "a control character"),
        ("tokén€-0123456789", "a character outside Latin-1"),
        ("tok\u200ben-0123456789", "a character outside Latin-1"),
    ],
)
def test_an_unsendable_secret_is_refused_before_any_request(secret: str, what: str) -> None:
    with scripted([Step(200)]) as server:
        attempts: list[Callable[[], object]] = [
            lambda: ReportingServiceClient(secret, server.url, "core-1"),
            lambda: ReportingClient(secret, server.url, progress=False),
            lambda: er.Settings(service_token=secret),
            lambda: er.Settings(api_key=secret),
        ]
        for attempt in attempts:
            with pytest.raises(ConfigError, match=what) as caught:
                attempt()
            text = "".join(traceback.format_exception(caught.value))
            assert secret not in text and secret.strip()[:3] + secret[3:] not in text
            assert re.search(r"\b(token|api_key|service_token)\b", str(caught.value))
        assert server.seen == []
