"""Secrets in every form they take in text are redacted; unsendable ones are refused.

A key travels as it is, percent-encoded (``+`` for a space, upper- or lower-case hex, once or
twice), JSON-escaped, and inside base64 (``Authorization: Basic``). A server, a proxy or a page
may echo it in other forms still: in another case (a CSV header), with its whitespace collapsed
or changed, HTML-escaped, escaped as ``repr`` writes it, or base64-encoded inside a body wrapped
every 76 characters. :data:`ENCODINGS` writes a secret in each of these forms.

Whether a text still holds a secret is judged by :func:`recoverable`, which decodes the text
the ways a reader could (HTML entities, percent-encoding, backslash escapes, mis-decoded UTF-8,
base64 at any alignment, case and whitespace ignored) and looks for the whole secret: it knows
nothing of how :func:`redact` works. The property test generates keys and tokens, writes them
in every form, and checks :func:`redact` leaves none recoverable; the loopback tests drive the
reporting clients against servers echoing each form and scan messages, reprs, chained causes
and log lines. A credential with a control character or one outside Latin-1 is refused as a
``ConfigError`` before any request, naming the setting and not the value.
"""

from __future__ import annotations

import base64
import codecs
import dataclasses
import html
import html.entities
import json
import logging
import pickle
import re
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from urllib.parse import quote, quote_plus, unquote, unquote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import edgereports as er
from edgereports import Report, ServiceReport
from edgereports.errors import ConfigError, EdgeReportsError, redact
from edgereports.redaction import redacted_excerpt, url_secrets
from edgereports.reporting import ReportingClient, ReportingServiceClient
from tests.conftest import Step, chained, every_logger_at_debug, raw_server, scripted

FIGURES: Counter[str] = Counter()


def _lower_hex(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), text)


#: An HTML5 named reference of each character that has one (``&plus;``, ``&sol;``, ``&nbsp;``).
_HTML_NAMES = {
    text: name
    for name, text in sorted(html.entities.html5.items(), reverse=True)
    if len(text) == 1 and name.endswith(";")
}


def _wrapped_base64(before: int) -> Callable[[str], str]:
    """The secret base64-encoded inside a body, wrapped every 76 characters (MIME), starting
    ``before`` bytes in: 55 to 57 put the first line's end inside it at each byte offset."""
    return lambda s: base64.encodebytes(b"x" * before + s.encode() + b"y" * 9).decode()


#: Every form a secret takes in text, by name.
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
    "upper-cased (a CSV header)": str.upper,
    "lower-cased (a CSV header)": str.lower,
    "whitespace collapsed": lambda s: " ".join(s.split()),
    "whitespace doubled": lambda s: re.sub(r"\s", lambda m: m[0] * 2, s),
    "no-break space for space": lambda s: s.replace(" ", "\xa0"),
    "space for no-break space": lambda s: s.replace("\xa0", " "),
    "HTML-escaped": html.escape,
    "HTML-escaped twice": lambda s: html.escape(html.escape(s)),
    "HTML hex references": lambda s: "".join(f"&#x{ord(c):X};" for c in s),
    "HTML decimal references": lambda s: "".join(f"&#{ord(c)};" for c in s),
    "HTML named references": lambda s: "".join(
        f"&{_HTML_NAMES[c]}" if c in _HTML_NAMES else c for c in s
    ),
    "repr": lambda s: repr(s)[1:-1],
    "repr of its UTF-8 bytes": lambda s: repr(s.encode())[2:-1],
    "repr of a repr": lambda s: repr(repr(s))[1:-1],
    "JSON inside JSON": lambda s: json.dumps(json.dumps(s))[1:-1],
    "base64, wrapped at 76 (offset 0)": _wrapped_base64(57),
    "base64, wrapped at 76 (offset 1)": _wrapped_base64(55),
    "base64, wrapped at 76 (offset 2)": _wrapped_base64(56),
    "base64, wrapped, in a JSON string": lambda s: json.dumps(_wrapped_base64(55)(s))[1:-1],
    "URL userinfo": lambda s: f"https://user:{quote(s, safe='')}@h.example/r",
}

#: The forms that fit in a status line (one line of Latin-1).
ONE_LINE = [
    name
    for name, encode in ENCODINGS.items()
    if "\n" not in encode("ab c") and all(ord(c) < 256 for c in encode("ab c\xa0é"))
]


def _normal(text: str) -> str:
    """``text`` with its case folded and every run of whitespace one space."""
    return " ".join(text.split()).casefold()


def _backslash_unescaped(text: str) -> str:
    """``text`` with the escapes of ``repr`` and JSON (``\\xa0``, ``\\u00e9``, ``\\'``) read."""
    with warnings.catch_warnings():  # an escape Python does not know is kept, with a warning
        warnings.simplefilter("ignore", DeprecationWarning)
        text = text.replace("\\/", "/")  # JSON's escaped slash, which Python does not know
        return codecs.decode(text.encode("latin-1", "backslashreplace"), "unicode_escape", "ignore")


def _utf8_repaired(text: str) -> str:
    """``text`` read back as UTF-8 where it is UTF-8 bytes read as Latin-1."""
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text


#: The ways a reader can decode a text, applied one after another up to twice.
DECODINGS: dict[str, Callable[[str], str]] = {
    "HTML-unescaped": html.unescape,
    "percent-decoded": unquote,
    "percent-decoded (+ for space)": unquote_plus,
    "backslash-unescaped": _backslash_unescaped,
    "UTF-8 repaired": _utf8_repaired,
}
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_\-\s]{8,}")


def _base64_decoded(text: str) -> list[bytes]:
    """What every run of base64 characters in ``text`` decodes to, at each alignment."""
    out: list[bytes] = []
    for run in _BASE64_RUN.findall(text):
        chars = "".join(run.split()).translate(str.maketrans("-_", "+/"))
        for shift in range(4):
            chunk = chars[shift:]
            chunk = chunk[: len(chunk) - 1] if len(chunk) % 4 == 1 else chunk  # a lone character
            out.append(base64.b64decode(chunk + "=" * (-len(chunk) % 4)))
    return out


def recoverable(secret: str, text: str) -> str | None:
    """How ``secret`` can be read back from ``text`` (the decodings), or None if it cannot.

    Looks for the whole secret, case and whitespace ignored, in ``text`` decoded every way of
    :data:`DECODINGS` (and any two of them in a row), and for its UTF-8 or Latin-1 bytes in
    every base64 run of those texts.
    """
    wanted = _normal(secret)
    raw = [secret.encode("utf-8"), secret.encode("latin-1", "ignore")]
    variants: dict[str, str] = {"as is": text}
    for name, decode in DECODINGS.items():
        once = decode(text)
        if once == text:  # nothing to decode this way (then the second ways are the first's)
            continue
        variants[name] = once
        for second, again in DECODINGS.items():
            variants[f"{name}, then {second}"] = again(once)
    for how, variant in variants.items():
        if wanted in _normal(variant):
            return how
    for how in ("as is", "backslash-unescaped"):
        if how not in variants:
            continue
        if any(r in data for data in _base64_decoded(variants[how]) for r in raw if len(r) >= 4):
            return f"{how}, then base64-decoded"
    return None


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


@settings(max_examples=100, deadline=None)
@given(secret=SECRETS, before=st.sampled_from(["", "x", "key ", "?apikey=", "Bearer "]))
def test_redact_removes_every_encoding_of_a_secret(secret: str, before: str) -> None:
    FIGURES["secrets"] += 1
    for name, encode in ENCODINGS.items():
        shown = encode(secret)
        text = f'answered 401 {before}{shown} for "{shown}".'
        clean = redact(text, [secret])
        FIGURES["texts"] += 1
        leaked = shown in clean or recoverable(secret, clean)
        FIGURES["leaks"] += bool(leaked)
        assert not leaked, f"{name}: {leaked}: {clean!r}"
        assert clean.startswith("answered 401 ") and clean.endswith('".'), clean


#: A key with what each form changes: letters in both cases, an inner double space and a
#: no-break space, URL and HTML specials, quotes and a backslash, a letter outside ASCII.
TRICKY = "sK-live+7f3a/9c1E  b2&d<4\xa0Éq\\'z\"y%7e"


@pytest.mark.parametrize("form", list(ENCODINGS))
def test_each_form_of_a_key_is_redacted_and_the_text_around_it_kept(form: str) -> None:
    shown = ENCODINGS[form](TRICKY)
    assert recoverable(TRICKY, shown), "the oracle reads the key back from its form"
    text = f"gateway said: <{shown}> (status 401)"
    clean = redact(text, [TRICKY])
    assert recoverable(TRICKY, clean) is None, clean
    assert clean.startswith("gateway said: <") and clean.endswith("> (status 401)"), clean
    assert "***" in clean


@pytest.mark.parametrize(
    "text",
    [
        "the key sk-live-7f3a9c1e-0000 was refused",  # another key sharing a prefix
        "sk live 7f3a9c1e",  # the key's characters split by spaces it does not have
        "c2stbGl2ZS03ZjNhOWMxZQ",  # base64 of a prefix of the key only
        "user@example.com wrote to http://host.example/path?to=a@b",  # no userinfo
        "\\" * 300 + "%25" * 300 + "&amp;" * 300,  # escape prefixes, nothing escaped
    ],
)
def test_text_without_the_key_is_left_as_it_is(text: str) -> None:
    assert redact(text, ["sk-live-7f3a9c1e5b2d"]) == text


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("GET http://ana:pa55w0rd@h.example/r", "GET http://***@h.example/r"),
        ("url='https://ana:p@ss:w0rd@h.example:8443/'", "url='https://***@h.example:8443/'"),
        ("https://only-a-token@h.example", "https://***@h.example"),
        (
            '{"url": "http:\\/\\/ana:pa55w0rd@h.example\\/r"}',
            '{"url": "http:\\/\\/***@h.example\\/r"}',
        ),
        ("see http://h.example/a@b and mail ana@h.example", None),
    ],
)
def test_the_userinfo_of_any_url_is_redacted(text: str, shown: str | None) -> None:
    assert redact(text) == (shown if shown is not None else text)


def test_a_url_password_is_a_secret_in_all_its_forms() -> None:
    url = "https://ana:pa%2055%40w0rd@h.example"
    (password,) = url_secrets(url)
    assert password == "pa 55@w0rd"
    for form in ("pa+55%40w0rd", "cGEgNTVAdzByZA==", "PA 55@W0RD", "pa&#x20;55&#64;w0rd"):
        assert redact(f"echo: {form}.", url_secrets(url)) == "echo: ***."


def test_an_excerpt_never_ends_in_the_head_of_a_secret() -> None:
    key = "sk-live-7f3a9c1e5b2d"
    redactor = partial(redact, secrets=[key])
    for cut in range(len("invalid key "), len("invalid key ") + len(key)):
        out = redacted_excerpt(f"invalid key {key} and more", cut, redactor)
        assert key[:4] not in out and len(out) <= cut
    # a body dense with the key: its head shrinks once redacted, so the whole body is read
    dense = f"{key} " * 10_000 + key
    out = redacted_excerpt(dense, 60_000, redactor)
    assert recoverable(key, out) is None and key[:4] not in out and out.startswith("*** ***")


def _texts(error: BaseException | None, logs: list[str]) -> list[str]:
    out = list(logs)
    for item in chained(error):
        out += [str(item), repr(item), *map(repr, item.args)]
        out += [repr(v) for v in vars(item).values()]
    if error is not None:
        out.append("".join(traceback.format_exception(error, chain=True)))
        out.append(repr(vars(pickle.loads(pickle.dumps(error)))))  # as a process pool passes it
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
    texts = _texts(error, keep.lines)
    leaks = [(form, text[:200]) for text in texts for form in forms if form in text]
    leaks += [(how, text[:200]) for text in texts if (how := recoverable(secret, text))]
    FIGURES["texts"] += len(texts)
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


@pytest.mark.parametrize("form", list(ENCODINGS))
def test_a_server_echoing_the_key_in_any_form_leaks_nothing(form: str) -> None:
    shown = ENCODINGS[form](TRICKY)
    reason = f"key {shown} refused" if form in ONE_LINE else "key refused"
    body = b"bad key " + shown.encode() + b" (see the docs)"
    with raw_server(f"HTTP/1.1 401 {reason}", body) as url:
        client = ReportingClient(TRICKY, url, retries=0, **FAST)
        (message,) = _scan(TRICKY, lambda: client.fetch(REPORT))
    assert "401" in message and "bad key" in message and "***" in message  # the echo is there


@pytest.mark.parametrize("encoding", ["percent (lower hex)", "percent, + for space",
                                      "query as requests sends it", "percent twice"])  # fmt: skip
def test_a_server_echoing_the_encoded_v2_key_leaks_nothing(encoding: str) -> None:
    shown = ENCODINGS[encoding](KEY)
    body = json.dumps({"message": f"bad key {shown}", "url": f"/r?k={shown}"}).encode()
    with raw_server(f"HTTP/1.1 401 key {shown} refused", body) as url:
        client = ReportingClient(KEY, url, api_version="v2", retries=0, **FAST)
        report = dataclasses.replace(REPORT, api_version="v2")
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
