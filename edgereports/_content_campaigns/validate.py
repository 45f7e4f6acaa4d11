"""Input checks shared by the content and campaign clients, run before any request.

Every check raises :class:`~edgereports.errors.InputError` with a message that names the
argument, shows the offending value and says what is allowed. Values that may carry a secret
(URLs with an ``api_key`` in them) are shown redacted.
"""

from __future__ import annotations

import math
import mimetypes
import os
import warnings
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import InputError, redact

__all__ = [
    "check_http_url",
    "check_int",
    "check_media_file",
    "check_origin",
    "check_text",
    "expiry_seconds",
]


def _shown(value: object) -> str:
    return redact(repr(value))


def check_http_url(value: object, what: str) -> str:
    """Return ``value`` stripped of surrounding blanks if it is an absolute http(s) URL;
    ``what`` names the argument in messages (e.g. ``"urls[0]"``).

    Raises:
        InputError: not a string, not http or https, no host, or blanks inside.
    """
    if not isinstance(value, str):
        raise InputError(f"{what} must be an http(s) URL string, got {type(value).__name__}")
    url = value.strip()
    hint = "give an absolute URL such as https://host.example/path"
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise InputError(f"{what} {_shown(url)} is not an http(s) URL; {hint}")
    if not parts.hostname:
        raise InputError(f"{what} {_shown(url)} has no host; {hint}")
    if any(c.isspace() for c in url):
        raise InputError(f"{what} {_shown(url)} contains blanks; encode them as %20")
    try:
        parts.port  # noqa: B018 - parsing the port validates it
    except ValueError:
        raise InputError(f"{what} {_shown(url)} has an invalid port; {hint}") from None
    return url


def check_origin(value: object, what: str = "origin") -> str:
    """Return a CORS origin (``scheme://host[:port]``) with any trailing slash removed.

    The service stores whitelist domains without a trailing slash: one slash at
    the end is removed with a :class:`UserWarning` saying so; anything else after the host is an
    error.

    Raises:
        InputError: not a string, no scheme, a scheme other than http(s), no host, or a path,
            query, fragment or user name.
    """
    if not isinstance(value, str):
        raise InputError(f"{what} must be a string such as 'https://player.example'")
    origin = value.strip()
    if "://" not in origin:
        raise InputError(
            f"{what} {origin!r} has no scheme; write it as 'https://{origin.rstrip('/')}'"
        )
    parts = urlsplit(origin)
    host = parts.netloc.rpartition("@")[2]  # never the userinfo, even in an example
    example = f"'{parts.scheme}://{host}'" if host else "'https://host.example'"
    if parts.scheme.lower() not in ("http", "https"):
        raise InputError(f"{what} {origin!r} must use http or https, e.g. {example}")
    if not parts.hostname:
        raise InputError(f"{what} {origin!r} has no host, e.g. 'https://player.example'")
    if parts.username is not None or parts.password is not None:
        raise InputError(f"{what} {_shown(origin)} contains a user name; use {example}")
    if parts.query or origin.endswith("?"):
        raise InputError(
            f"{what} {origin!r} has a query; an origin is scheme://host[:port] only, e.g. {example}"
        )
    if parts.fragment or origin.endswith("#"):
        raise InputError(
            f"{what} {origin!r} has a fragment; an origin is scheme://host[:port] only, "
            f"e.g. {example}"
        )
    if parts.path not in ("", "/"):
        raise InputError(
            f"{what} {origin!r} has a path ({parts.path!r}); an origin is scheme://host[:port] "
            f"only, e.g. {example}"
        )
    try:
        parts.port  # noqa: B018 - parsing the port validates it
    except ValueError:
        raise InputError(f"{what} {origin!r} has an invalid port") from None
    if parts.path == "/":
        origin = origin[:-1]
        warnings.warn(
            f"removed the trailing slash of {what} {value.strip()!r}: the service stores "
            f"origins without one, so {origin!r} is used",
            UserWarning,
            stacklevel=3,
        )
    return origin


def expiry_seconds(value: object, what: str = "expires_in") -> int:
    """Return a validity period, seconds (an int, or a float with no fraction) or a
    :class:`~datetime.timedelta`, as a positive whole number of seconds.

    Raises:
        InputError: zero, negative, fractional, not finite or not a number.
    """
    if isinstance(value, timedelta):
        seconds: float = value.total_seconds()
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise InputError(
            f"{what} must be a number of seconds or a timedelta, got {type(value).__name__}"
        )
    if not math.isfinite(seconds) or seconds <= 0:
        raise InputError(f"{what} must be a positive number of seconds, got {seconds:g}")
    if not seconds.is_integer():
        raise InputError(f"{what} must be a whole number of seconds, got {seconds:g}")
    return int(seconds)


def check_int(value: object, what: str, *, minimum: int) -> int:
    """Return ``value`` if it is an int (not a bool) of at least ``minimum``.

    Raises:
        InputError: not an int, a bool, or below ``minimum``.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{what} must be an integer, got {value!r}")
    if value < minimum:
        raise InputError(f"{what} must be at least {minimum}, got {value}")
    return value


def check_text(
    value: object, what: str, *, required: bool = True, max_length: int | None = None
) -> str:
    """Return ``value`` if it is a string, non-blank when ``required``, within ``max_length``.

    Raises:
        InputError: not a string, blank while required, or too long.
    """
    if not isinstance(value, str):
        raise InputError(f"{what} must be a string, got {type(value).__name__}")
    if required and not value.strip():
        raise InputError(f"{what} is required and must not be blank")
    if max_length is not None and len(value) > max_length:
        raise InputError(f"{what} has {len(value)} characters; at most {max_length} are allowed")
    return value


def check_media_file(value: object, what: str, kind: str) -> tuple[Path, str]:
    """Return an existing file and its media type, which must be ``kind/*`` (``video`` or
    ``image``); the media type comes from the file name's extension.

    Raises:
        InputError: not a path, no such file, or a media type that is not ``kind/*``.
    """
    if not isinstance(value, str | os.PathLike):
        raise InputError(f"{what} must be a path to a {kind} file, got {type(value).__name__}")
    path = Path(value)
    if not path.is_file():
        problem = "is a directory" if path.is_dir() else "does not exist"
        raise InputError(f"{what} file '{path}' {problem}")
    media_type, _ = mimetypes.guess_type(path.name)
    if media_type is None:
        raise InputError(
            f"{what} file '{path}' has no known media type (from its extension); "
            f"a {kind}/* file such as {_EXAMPLES[kind]} is needed"
        )
    if not media_type.startswith(f"{kind}/"):
        raise InputError(
            f"{what} file '{path}' has media type {media_type}, not {kind}/*; "
            f"use a {kind} file such as {_EXAMPLES[kind]}"
        )
    return path, media_type


_EXAMPLES = {"video": ".mp4, .mov or .webm", "image": ".png, .jpg or .webp"}
