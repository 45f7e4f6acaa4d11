"""The base of the content and campaign clients: connection, authentication, JSON calls.

Retries, timeouts and the mapping of failures to the error tree (with the key redacted) are
:class:`edgereports.http.HttpClient`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self

from ..config import Settings, Timeout, check_api_key, check_count, check_timeout, check_url
from ..errors import ConfigError, InputError, SchemaError
from ..http import HttpClient
from ..redaction import redacted_excerpt
from .validate import check_http_url

if TYPE_CHECKING:
    import requests

__all__ = ["BaseClient"]


class BaseClient:
    """Connection to the content and campaign APIs: the base of both clients, whose
    docstrings tell its arguments (the key goes in the ``api_key`` header, ``partner_name`` as
    a query parameter)."""

    def __init__(
        self,
        api_key: str,
        partner_name: str,
        base_url: str,
        *,
        timeout: Timeout = 30.0,
        retries: int = 4,
        session: requests.Session | None = None,
    ) -> None:
        key = check_api_key(api_key)
        if not isinstance(partner_name, str) or not partner_name.strip():
            raise ConfigError(
                "partner_name is empty; set EDGEREPORTS_PARTNER_NAME (the subscription's "
                "Service ID) or pass partner_name="
            )
        if isinstance(base_url, str):  # named without its userinfo when it is not a URL
            check_url("base_url", base_url)
        try:
            url = check_http_url(base_url, "base_url").rstrip("/")
        except InputError as exc:
            raise ConfigError(str(exc)) from None
        checked = check_timeout(timeout)
        pair = checked if isinstance(checked, tuple) else (min(5.0, checked), checked)
        check_count("retries", retries, 0)
        self._api_key = key
        self._partner_name = partner_name.strip()
        self._base_url = url
        self._http = HttpClient(
            url, secrets=(self._api_key,), timeout=pair, retries=retries, session=session
        )
        # Non-idempotent writes go out once, through the same session (see _request).
        self._once = HttpClient(
            url, secrets=(self._api_key,), timeout=pair, retries=0, session=self._http.session
        )

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> Self:
        """Build a client from :class:`~edgereports.config.Settings`.

        Args:
            settings: needs ``api_key``, ``partner_name`` and ``base_url``.
            **kwargs: ``retries`` or ``session``, passed on.

        Returns:
            The client, with ``settings.timeout`` as read timeout.

        Raises:
            ConfigError: a needed setting is missing (named with its environment variable).
        """
        settings.require("api_key", "partner_name", "base_url")
        assert settings.api_key and settings.partner_name and settings.base_url
        kwargs.setdefault("timeout", settings.timeout)
        return cls(settings.api_key, settings.partner_name, settings.base_url, **kwargs)

    @property
    def partner_name(self) -> str:
        """The subscription's Service ID sent with every call."""
        return self._partner_name

    @property
    def base_url(self) -> str:
        """The address of the content and campaign APIs."""
        return self._base_url

    def close(self) -> None:
        """Close the HTTP session if this client created it."""
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(partner_name={self._partner_name!r}, "
            f"base_url={self._http.redact(self._base_url)!r})"
        )

    def _request(
        self,
        method: str,
        path: str,
        what: str,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        once: bool = False,
        **kwargs: Any,
    ) -> requests.Response:
        """Send one authenticated call (``api_key`` header, ``partner_name`` parameter).

        Reads and idempotent writes are retried (connection errors, 429, 5xx). A write that
        would create something twice if repeated (``once=True``: content/add, campaign
        onboarding) is sent a single time, so a failure is reported instead of duplicated.
        """
        http = self._once if once else self._http
        return http.request(
            method,
            path,
            params={"partner_name": self._partner_name, **(params or {})},
            headers={"api_key": self._api_key, "accept": "application/json", **(headers or {})},
            what=what,
            **kwargs,
        )

    def _json(
        self,
        method: str,
        path: str,
        what: str,
        *,
        params: Mapping[str, str] | None = None,
        once: bool = False,
        **kwargs: Any,
    ) -> Any:
        """Send one call and return its JSON body.

        Raises:
            ApiError: a non-2xx answer (AuthError, NotFoundError, RateLimitError).
            TransportError: the connection failed.
            SchemaError: the body is not JSON.
        """
        response = self._request(method, path, what, params=params, once=once, **kwargs)
        try:
            return response.json()
        except ValueError:
            excerpt = redacted_excerpt(response.text, 200, self._http.redact)
            error = SchemaError(f"{what} answered with a body that is not JSON: {excerpt!r}")
        raise error  # outside the handler: the decode error (its .doc is the body) is not chained
