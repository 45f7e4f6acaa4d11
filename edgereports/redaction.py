"""Secrets out of text: :func:`redact`, and every form a secret takes when it is echoed.

A server, a proxy or a library may echo a credential in a status line, a body, a URL or an
exception, and not always as it was given. The pattern of a secret is derived from the raw
secret, before anything normalises the text it is looked for in, and matches it:

- as is, in any case (a lower- or upper-cased CSV header), with each run of whitespace as any
  run of whitespace (collapsed, doubled, a no-break space for a space);
- percent-encoded (either hex case, once or more, UTF-8 or Latin-1 bytes, ``+`` for a space),
  and its UTF-8 bytes read as Latin-1;
- HTML-escaped (``&amp;``, ``&#43;``, ``&#x2B;``, ``&plus;``, escaped once or more), and
  escaped as ``repr`` or JSON write it (``\\'``, ``\\xa0``, ``\\u00e9``, ``\\/``, the bytes'
  ``\\xc3\\xa9``, escaped once or more);
- inside base64 (``Authorization: Basic`` of ``user:key``, a token that embeds it, a body
  line-wrapped every 76 characters), in the standard and the URL-safe alphabets.

Besides the secrets it is given, :func:`redact` removes credentials it can tell by their place:
the userinfo of a URL (``https://***@host``), ``apikey=``-style query parameters and
``api_key:``/``Authorization:`` headers or JSON members.
Every pattern takes time linear in the length of the text, whatever the text (no nested
repetition that could be tried in many ways).
"""

from __future__ import annotations

import base64
import functools
import html.entities
import re
from collections.abc import Callable, Iterable
from urllib.parse import SplitResult, unquote, urlsplit

__all__ = ["REDACTED", "redact", "redacted_excerpt", "shown_url", "url_secrets"]

#: What stands in for a secret.
REDACTED = "***"
#: Secrets shorter than this are not looked for (they would match ordinary words).
_SHORTEST = 4

# Query parameters, headers and JSON members that carry a credential.
_SECRET_NAMES = r"api[_-]?key|apikey|app[_-]?key|x-api-key|token|signature|sig|authorization"
_PARAM = re.compile(rf"(?i)(?P<name>\b(?:{_SECRET_NAMES}))(?P<sep>=)(?P<value>[^&\s#'\"]+)")
_HEADER = re.compile(
    rf"(?i)(?P<name>['\"]?\b(?:{_SECRET_NAMES})['\"]?)"
    rf"(?P<sep>\s*:\s*['\"]?(?:Bearer\s+|Basic\s+)?)(?P<value>[^'\",\s}}]+)"
)
# The userinfo of a URL (``scheme://user:password@``; a JSON-escaped ``:\/\/`` too). It ends
# at the last ``@`` before the host's end, as a URL parser reads it. Bounded, so that no text
# takes more than linear time.
_USERINFO = re.compile(
    r"(?i)(?P<scheme>\b[a-z][a-z0-9+.\-]{0,31}:(?:\\{0,8}/){2})[^\s/?#'\"<>\\]{0,4096}@"
)

# The prefixes of an escaped form, escaped once or more. Bounded, so that no text takes more
# than linear time; the backslashes possessive too (``{0,32}+``: a run is taken whole, never
# tried again shorter), as no backslash follows them in a form.
_ESCAPED = r"\\{0,32}+"  # a character after backslashes (``\'``, ``\/`` in repr or JSON)
_BACKSLASHES = r"\\{1,32}+"  # the backslash of an escape sequence (``\xa0``, ``\\u00e9``)
_PERCENT = r"%(?:25){0,8}"  # a percent-encoded byte (``%2B``, ``%252B``)
_AMPERSAND = r"&(?:amp;){0,8}"  # an HTML character reference (``&#43;``, ``&amp;#43;``)
#: What may break a base64 text between two of its characters (a wrapped body, escaped).
_WRAP = r"(?:\s|\\{1,8}[rn]){0,4}+"
_BASE64 = r"\-A-Za-z0-9+/_"
#: Stands in for a base64 core until its edges are taken with it (see :func:`redact`).
_CORE = "\ue000"
#: A base64 core's stand-in and the characters its edges share with its neighbours.
_CORE_EDGES = re.compile(rf"[{_BASE64}]{{0,3}}{_CORE}[{_BASE64}=]{{0,4}}")
#: The longest form of a secret looked for past the end of an excerpt (see
#: :func:`redacted_excerpt`).
_LONGEST_FORM = 4096
#: The whitespace whose encoded forms a run of whitespace in a secret matches (any whitespace
#: matches as is).
_WHITESPACE = " \t\n\r\xa0"


def _html_names() -> dict[str, list[str]]:
    """The HTML named character references of each character that has one, longest first
    (``amp;`` before ``amp``, its legacy form without the semicolon)."""
    names: dict[str, list[str]] = {}
    for name, text in sorted(html.entities.html5.items(), key=lambda item: -len(item[0])):
        if len(text) == 1:
            names.setdefault(text, []).append(name)
    return names


_HTML_NAMES = _html_names()


@functools.cache
def _char_forms(char: str) -> list[str]:
    """The patterns of one character of a secret, in every form it takes in text."""
    code = ord(char)
    forms = [  # HTML references: all their digits, then a semicolon (optional)
        f"{_AMPERSAND}#0{{0,8}}{code}(?:;|(?![0-9]))",
        f"{_AMPERSAND}#x0{{0,8}}{code:x}(?:;|(?![0-9a-f]))",
    ]
    forms += [_AMPERSAND + re.escape(name) for name in _HTML_NAMES.get(char, ())]
    units = char.encode("utf-16-be")  # JSON (a surrogate pair beyond the BMP), then repr
    forms.append(
        "".join(f"{_BACKSLASHES}u{units[i : i + 2].hex()}" for i in range(0, len(units), 2))
    )
    forms.append(f"{_BACKSLASHES}U{code:08x}")
    for encoding in ("utf-8", "latin-1"):
        try:
            raw = char.encode(encoding)
        except UnicodeEncodeError:
            continue
        forms.append("".join(f"{_BACKSLASHES}x{b:02x}" for b in raw))  # repr of str or bytes
        forms.append("".join(f"{_PERCENT}{b:02x}" for b in raw))  # percent-encoded
    if code > 0x7F:  # UTF-8 bytes read as Latin-1 (a status line, a mis-declared body)
        forms.append(re.escape(char.encode("utf-8").decode("latin-1")))
    if char == "\\":  # one backslash of a run (see _run)
        forms.append(r"\\")
    else:  # as is (in any case), after as many backslashes as escaping put before it
        forms += [
            _ESCAPED + re.escape(v) for v in (char, char.upper(), char.lower(), char.casefold())
        ]
    return list(dict.fromkeys(f.lower() for f in forms))  # the pattern ignores case


def _one(forms: list[str]) -> str:
    """A group of ``forms``: the pattern of one character of a secret."""
    return f"(?:{'|'.join(forms)})"


def _run(chars: str) -> str:
    """The pattern of a run of whitespace or backslashes in a secret: any such run, in any form.

    Whitespace collapses, doubles or changes (a no-break space for a space); backslashes double
    with each escaping. Either is matched as a run of any length of any of its forms. Each item
    of the run is atomic (the first form that matches it is kept): several forms match one
    space, and trying each of them for each item of a long run that then fails would take time
    exponential in its length. The run still gives back whole items, one by one.
    """
    forms = [f for c in chars for f in _char_forms(c)]
    forms += [r"\s", r"\+"] if chars.isspace() else []
    return f"(?>{'|'.join(dict.fromkeys(forms))})+"


def _text_pattern(secret: str) -> str:
    """The pattern of ``secret`` written as text (in any case, escaped or encoded)."""
    parts: list[str] = []
    for run in re.split(r"(\s+|\\+)", secret):
        if run.isspace():
            parts.append(_run(_WHITESPACE))
        elif run.startswith("\\"):
            parts.append(_run("\\"))
        elif run:
            parts += [_one(_char_forms(c)) for c in run]
    return "".join(parts)


def _base64_cores(secret: str) -> list[str]:
    """The base64 text that only ``secret`` determines, at each of the three byte offsets.

    A secret inside a base64 value (``Authorization: Basic``, a token that embeds it) starts
    at any offset of a 3-byte group; the characters of the groups it fills alone are the same
    whatever surrounds it, in the standard and the URL-safe alphabets.
    """
    cores: list[str] = []
    for encoding in ("utf-8", "latin-1"):  # requests sends Basic credentials as Latin-1
        try:
            data = secret.encode(encoding)
        except UnicodeEncodeError:
            continue
        for offset in range(3):
            encoded = base64.b64encode(b"\0" * offset + data).decode("ascii")
            start = {0: 0, 1: 2, 2: 3}[offset]
            end = (offset + len(data)) // 3 * 4
            core = encoded[start:end]
            if len(core) >= 6:
                cores += [core, core.replace("+", "-").replace("/", "_")]
    return list(dict.fromkeys(cores))


def _base64_pattern(core: str) -> str:
    """The pattern of a base64 core, wrapped or not."""
    chars = [re.escape(c) if c.isalnum() else _one(_char_forms(c)) for c in core]
    return _WRAP.join(chars)


@functools.lru_cache(maxsize=256)
def _secret_pattern(secret: str) -> re.Pattern[str]:
    """One pattern for every form of ``secret`` (see the module's docstring): the group
    ``text`` for its forms as text, ``base64`` for its base64 cores."""
    cores = "|".join(_base64_pattern(c) for c in _base64_cores(secret)) or "(?!)"
    return re.compile(f"(?P<text>{_text_pattern(secret)})|(?P<base64>{cores})", re.IGNORECASE)


def _stand_in(match: re.Match[str]) -> str:
    """``***`` for a secret, or the stand-in of a base64 core (whose edges go with it later:
    the few characters they share with their neighbours, which only the whole text shows)."""
    return REDACTED if match.lastgroup == "text" else _CORE


def redact(text: object, secrets: Iterable[str | None] = ()) -> str:
    """Return ``text`` as a string with every credential replaced by ``***``.

    Removes every occurrence of ``secrets`` in any form it takes in text (as is, in another
    case, with its whitespace changed, percent-encoded, HTML-, repr- or JSON-escaped, or inside
    base64: see :mod:`edgereports.redaction`), the userinfo of URLs, the value of
    ``apikey=``/``api_key=``/``app_key=``/``Authorization=`` query parameters, and of
    ``api_key: ...`` and ``Authorization: Bearer ...`` headers or JSON members.

    Args:
        text: anything; it is converted with ``str()``.
        secrets: values to remove wherever they appear (e.g. the configured key); those
            shorter than four characters are not looked for.

    Returns:
        The redacted text.

    Example:
        >>> redact("https://h/report?apikey=s3cret&x=1")
        'https://h/report?apikey=***&x=1'
        >>> redact("POST https://ana:pa55w0rd@h.example/report")
        'POST https://***@h.example/report'
        >>> redact("answered 401: &quot;SK-LIVE&#x2B;7F3A&quot;", ["sk-live+7f3a"])
        'answered 401: &quot;***&quot;'
    """
    out = str(text)
    wanted = {s.strip() for s in secrets if s and len(s.strip()) >= _SHORTEST}
    for secret in sorted(wanted, key=len, reverse=True):
        out = _secret_pattern(secret).sub(_stand_in, out)
    if _CORE in out:
        out = _CORE_EDGES.sub(REDACTED, out)
    if "@" in out:
        out = _USERINFO.sub(lambda m: f"{m['scheme']}{REDACTED}@", out)
    out = _PARAM.sub(lambda m: f"{m['name']}{m['sep']}{REDACTED}", out)
    out = _HEADER.sub(lambda m: f"{m['name']}{m['sep']}{REDACTED}", out)
    return out


def redacted_excerpt(text: str, limit: int, redactor: Callable[[str], str] = redact) -> str:
    """The first ``limit`` characters of ``text`` once redacted (never a cut-off secret).

    Cutting first would leave the head of a secret that straddles the cut; redacting all of a
    large body would be slow: this redacts a head long enough for any form of a secret that
    starts before the cut, then cuts (it redacts the whole text when the head's end, where a
    form may be cut in two, comes near the cut once redacted).

    Args:
        text: the text, e.g. a body.
        limit: the most characters returned.
        redactor: what redacts (e.g. a client's ``redact``, which knows its secrets).

    Example:
        >>> from functools import partial
        >>> key = "sk-live-7f3a9c1e"
        >>> redacted_excerpt(f"invalid key {key}", 16, partial(redact, secrets=[key]))
        'invalid key ***'
    """
    head = text[: limit + 4 * _LONGEST_FORM]
    out = redactor(head)
    if len(head) < len(text) and len(out) < limit + _LONGEST_FORM:
        out = redactor(text)
    return out[:limit]


def _split(url: str) -> SplitResult | None:
    """The parts of ``url``, one without a scheme read as starting with its host; None when
    it cannot be read (a malformed address)."""
    try:
        parts = urlsplit(url if "//" in url else f"//{url}")
        parts.password  # noqa: B018 - reading the userinfo validates it
    except ValueError:
        return None
    return parts


def url_secrets(url: str | None) -> list[str]:
    """The credential in a URL's userinfo: its password, or its user when it has none.

    A URL without a scheme is read as starting with its host (``user:password@host/path``).

    Example:
        >>> url_secrets("https://ana:pa55%40rd@h.example"), url_secrets("https://h.example")
        (['pa55@rd'], [])
    """
    parts = _split(url) if url else None
    if parts is None:
        return []
    secret = parts.password if parts.password is not None else parts.username
    return [unquote(secret)] if secret else []


def shown_url(url: str) -> str:
    """The repr of a service address as a message shows it: its userinfo as ``***`` (also
    when it lacks its scheme, which :func:`redact` cannot tell from ``mailto:name@host``), its
    password in no form.

    Example:
        >>> print(shown_url("ana:pa55w0rd@h.example/report"))
        '***@h.example/report'
    """
    parts = _split(url)
    userinfo = parts.netloc.rpartition("@")[0] if parts is not None else ""
    shown = url.replace(f"{userinfo}@", f"{REDACTED}@", 1) if userinfo else url
    return redact(repr(shown), url_secrets(url))
