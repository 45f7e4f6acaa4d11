"""Settings: keys, addresses and timeouts, read from the environment only on request."""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from .errors import ConfigError, redact
from .redaction import shown_url, url_secrets

__all__ = [
    "API_VERSIONS",
    "DEFAULT_MAX_WORKERS",
    "ENV_VARS",
    "Settings",
    "Timeout",
    "check_api_key",
    "check_count",
    "check_rate_limit",
    "check_seconds",
    "check_secret",
    "check_timeout",
    "check_url",
]

#: A timeout in seconds, or a ``(connect, read)`` pair of them.
Timeout = float | tuple[float, float]

#: The environment variables read by :meth:`Settings.from_env`, by field.
ENV_VARS: dict[str, str] = {
    "api_key": "EDGEREPORTS_API_KEY",
    "partner_name": "EDGEREPORTS_PARTNER_NAME",
    "base_url": "EDGEREPORTS_BASE_URL",
    "reporting_url": "EDGEREPORTS_REPORTING_URL",
    "timeout": "EDGEREPORTS_TIMEOUT",
    "api_version": "EDGEREPORTS_API_VERSION",
    "service_token": "EDGEREPORTS_SERVICE_TOKEN",
    "core_id": "EDGEREPORTS_CORE_ID",
    "account_id": "EDGEREPORTS_ACCOUNT_ID",
    "rate_limit": "EDGEREPORTS_RATE_LIMIT",
    "cache": "EDGEREPORTS_CACHE",
    "budget_dir": "EDGEREPORTS_BUDGET_DIR",
}
#: The reporting API versions (``ReportingClient(api_version=...)``).
API_VERSIONS = ("v1", "v2")
#: Requests a reporting client keeps in flight at once unless told otherwise (docs "Fetching"
#: say why 16).
DEFAULT_MAX_WORKERS = 16
_SECRETS = ("api_key", "service_token")
_URLS = ("base_url", "reporting_url")
#: The units of a rate written as text, in seconds per unit.
_RATE_UNITS = {"s": 1.0, "sec": 1.0, "second": 1.0, "min": 60.0, "minute": 60.0}
_RATE = re.compile(
    r"^\s*(?P<n>[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(?:/\s*(?P<unit>[a-z]+))?\s*$"
)
_RATE_FORMS = (
    'a positive number of requests per second (e.g. 10 or 0.5) or a text "10/s", "600/min"'
)
#: ``EDGEREPORTS_CACHE`` values that switch the per-user cache on or off (else a directory).
_CACHE_ON, _CACHE_OFF = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def check_url(name: str, value: str) -> str:
    """Return a service address without trailing slashes.

    A URL may carry a user name and password (``https://user:password@host``); messages show
    it without them.

    Raises:
        ConfigError: ``value`` is not an http(s) URL with a host.
    """
    value = value.strip().rstrip("/")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        shown = shown_url(value)
        raise ConfigError(
            f"{name} must be an http(s) URL such as https://host.example, got {shown}"
        )
    return value


def check_secret(name: str, value: str) -> str:
    """Return a credential that can be sent as it is, without surrounding spaces.

    A key travels in a header or a query parameter: a control character (a newline, a tab)
    or a character outside Latin-1 cannot travel there unchanged, so the request would fail
    (or be refused by the HTTP library with the value in its message). The message names the
    setting, never the value.

    Args:
        name: the setting's name, for the message (``api_key``, ``token``).
        value: the credential.

    Returns:
        ``value`` stripped of surrounding spaces.

    Raises:
        ConfigError: ``value`` holds a control character or one outside Latin-1.

    Example:
        >>> check_secret("token", "ab\\ncd")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        edgereports.errors.ConfigError: token holds a control character (position 3 of 5)...
    """
    value = value.strip()
    for index, char in enumerate(value, 1):
        code = ord(char)
        if code < 0x20 or 0x7F <= code < 0xA0:
            what = "a control character"
        elif code > 0xFF:
            what = "a character outside Latin-1"
        else:
            continue
        raise ConfigError(
            f"{name} holds {what} (position {index} of {len(value)}), so it cannot be sent in "
            "a header or query parameter as it is; check how it was copied (the value is not "
            "shown)"
        )
    return value


def check_api_key(value: object, name: str = "api_key") -> str:
    """Return the API key without surrounding spaces.

    Raises:
        ConfigError: the key is not a string, blank, or holds a character that cannot be sent
            (see :func:`check_secret`).
    """
    if not isinstance(value, str) or not value.strip():
        raise ConfigError("api_key is empty; set EDGEREPORTS_API_KEY or pass api_key=")
    return check_secret(name, value)


def check_seconds(name: str, value: object, *, zero: bool = False) -> float:
    """Return a finite number of seconds, positive (or, with ``zero``, zero or more).

    Raises:
        ConfigError: ``value`` is not a number (booleans are not), infinite, NaN or too small.
    """
    least = "0 or more" if zero else "a positive number of"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{name} must be {least} seconds, got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number < 0 or (number == 0 and not zero):
        raise ConfigError(f"{name} must be {least} seconds, got {value!r}")
    return number


def check_count(name: str, value: object, least: int) -> int:
    """Return a whole number of at least ``least``.

    Raises:
        ConfigError: ``value`` is not an int (booleans are not) or is below ``least``.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ConfigError(f"{name} must be a whole number >= {least}, got {value!r}")
    return value


def check_rate_limit(value: object, name: str = "rate_limit") -> float | None:
    """Return a request rate in requests per second, or None for no limit.

    Args:
        value: None (no limit), a positive number of requests per second, or a text
            ``"<number>/s"`` or ``"<number>/min"`` (a bare number is per second).
        name: the argument's name, for the message.

    Raises:
        ConfigError: not positive, not finite, or not one of those forms.

    Example:
        >>> check_rate_limit(10), check_rate_limit("600/min"), check_rate_limit("2.5/s")
        (10.0, 10.0, 2.5)
    """
    if value is None:
        return None
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str) and (m := _RATE.match(value.lower())):
        unit = m["unit"] or "s"
        if unit in _RATE_UNITS:
            number = float(m["n"]) / _RATE_UNITS[unit]
    if number is None or not math.isfinite(number) or number <= 0:
        raise ConfigError(f"{name} must be {_RATE_FORMS}, got {value!r}")
    return number


def check_timeout(value: object, name: str = "timeout") -> Timeout:
    """Return a timeout: positive, finite seconds, or a ``(connect, read)`` pair of them.

    Raises:
        ConfigError: neither a positive number nor a pair of them, e.g. ``0`` or ``(-1, 5)``.

    Example:
        >>> check_timeout(30), check_timeout((2, 10))
        (30.0, (2.0, 10.0))
    """
    if isinstance(value, tuple | list):
        if len(value) != 2:
            raise ConfigError(
                f"{name} must be seconds or a (connect, read) pair of seconds, got {value!r}"
            )
        return (
            check_seconds(f"{name} (connect)", value[0]),
            check_seconds(f"{name} (read)", value[1]),
        )
    return check_seconds(name, value)


@dataclass(frozen=True)
class Settings:
    """Connection settings for the service (frozen; its repr never shows a key).

    Args:
        api_key: the developer's API key.
        partner_name: the subscription's Service ID (areas A and B).
        base_url: address of the content and campaign APIs.
        reporting_url: address of the reporting API.
        timeout: read timeout in seconds for one request.
        api_version: the reporting API version, ``"v1"`` (default) or ``"v2"``.
        service_token: the bearer token of the v2 reporting service (never shown).
        core_id: the mobile core id of the v2 reporting service.
        account_id: the default account of :func:`edgereports.fetch` (optional).
        rate_limit: the request budget of a reporting client, in requests per second (a
            number, or a text such as ``"10/s"`` or ``"600/min"``, kept as per second); None
            for no limit.
        cache: the reporting client's cache: a directory, True (the per-user cache
            directory) or None (none). ``EDGEREPORTS_CACHE`` holds a directory, or ``1``/
            ``true`` for the per-user one (``0``/``false``/``off``: none).
        budget_dir: where shared request budgets live (one file per API key and service
            host): a directory every process and container sharing a key sees; None for the
            per-user cache directory.

    Example:
        >>> url = "https://ana:pa55@r.example"  # a password in the URL is not shown either
        >>> Settings(api_key="k" * 8, reporting_url=url)  # doctest: +ELLIPSIS
        Settings(api_key='***', partner_name=None, ..., reporting_url='https://***@r.example', ...)
    """

    api_key: str | None = field(default=None, repr=False)
    partner_name: str | None = None
    base_url: str | None = None
    reporting_url: str | None = None
    timeout: float = 30.0
    api_version: str = "v1"
    service_token: str | None = field(default=None, repr=False)
    core_id: str | None = None
    account_id: str | None = None
    rate_limit: float | str | None = None
    cache: str | bool | None = None
    budget_dir: str | None = None

    def __post_init__(self) -> None:
        if self.api_version not in API_VERSIONS:
            raise ConfigError(
                f"api_version ({ENV_VARS['api_version']}) must be one of "
                f"{', '.join(API_VERSIONS)}, got {self.api_version!r}"
            )
        for name in _URLS:
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, check_url(name, value))
        if self.api_key is not None:
            check_api_key(self.api_key, f"api_key ({ENV_VARS['api_key']})")
        if self.service_token:
            check_secret(f"service_token ({ENV_VARS['service_token']})", self.service_token)
        check_seconds("timeout", self.timeout)
        rate = check_rate_limit(self.rate_limit, f"rate_limit ({ENV_VARS['rate_limit']})")
        object.__setattr__(self, "rate_limit", rate)

    @property
    def secrets(self) -> list[str]:
        """The credentials these settings hold: the key, the token and the URLs' passwords.

        Example:
            >>> Settings(api_key="k3y-5ecret", base_url="https://ana:pa55word@h.example").secrets
            ['k3y-5ecret', 'pa55word']
        """
        values = [getattr(self, name) for name in _SECRETS]
        values += [s for name in _URLS for s in url_secrets(getattr(self, name))]
        return [v for v in values if v]

    def __repr__(self) -> str:
        secrets = self.secrets

        def shown(name: str) -> str:
            value = getattr(self, name)
            return "'***'" if name in _SECRETS and value else redact(repr(value), secrets)

        fields = ", ".join(f"{f.name}={shown(f.name)}" for f in dataclasses.fields(self))
        return f"Settings({fields})"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read settings from ``EDGEREPORTS_*`` environment variables.

        Args:
            environ: the mapping to read instead of ``os.environ`` (for tests).

        Returns:
            The settings; unset variables stay ``None`` (timeout 30 s).

        Raises:
            ConfigError: a variable is set but malformed (not a URL, not a number).
        """
        env = os.environ if environ is None else environ
        values: dict[str, str] = {
            name: env[var].strip() for name, var in ENV_VARS.items() if env.get(var, "").strip()
        }
        timeout = 30.0
        if "timeout" in values:
            try:
                timeout = float(values.pop("timeout"))
            except ValueError:
                raise ConfigError(f"{ENV_VARS['timeout']} must be a number of seconds") from None
        cache: str | bool | None = values.pop("cache", None)
        if isinstance(cache, str) and cache.lower() in _CACHE_ON + _CACHE_OFF:
            cache = True if cache.lower() in _CACHE_ON else None
        return cls(timeout=timeout, cache=cache, **values)

    def require(self, *names: str) -> None:
        """Raise :class:`ConfigError` naming every setting in ``names`` that is unset."""
        missing = [n for n in names if getattr(self, n) in (None, "")]
        if missing:
            hint = ", ".join(f"{n} ({ENV_VARS[n]})" for n in missing)
            raise ConfigError(
                f"missing settings: {hint}; set them (to try the local sandbox instead: run "
                "'edgereports sandbox' and paste the export lines it prints)"
            )
