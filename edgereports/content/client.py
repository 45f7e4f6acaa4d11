"""``ContentClient``: the eight video-content endpoints (area A), checked and safe.

Decisions where the service's documentation is silent (the methods say the rest):

- A collection read from the service is a DataFrame; the result of a write or a single object
  is a small frozen dataclass (:class:`OnboardingItem`, :class:`WhitelistChange`) or text.
- App keys and playback URLs are secrets: :class:`AppKey` and :class:`PlaybackUrl` have redacted
  reprs, and an app key the service echoes in an error is redacted from it, like the API key.
- ``content/add`` is sent once, never retried: after a lost answer a retry could onboard the
  same content twice. Reads and whitelist changes (idempotent) are retried. No limit on the
  URLs per call (the service states none).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Final, Literal
from urllib.parse import quote, urlsplit, urlunsplit

from .._content_campaigns.base import BaseClient
from .._content_campaigns.records import check_object, check_records, frame
from .._content_campaigns.validate import check_http_url, check_origin, expiry_seconds
from ..errors import ApiError, EdgeReportsError, InputError, SchemaError, redact
from ._items import (
    CONTENT_COLUMNS,
    AppKey,
    OnboardingItem,
    PlaybackUrl,
    WhitelistChange,
    check_content_id,
    check_content_ids,
    redact_from,
)
from ._sync import wait_until_synced

if TYPE_CHECKING:
    import pandas as pd
    import requests

__all__ = ["ContentClient"]

PublishAccess = Literal["public", "private"]

_PREFIX: Final = "api/v1/stream-tech"


class ContentClient(BaseClient):
    """Client of the content endpoints: onboarding, URLs, app keys, whitelist.

    The API key travels in the ``api_key`` header and ``partner_name`` as a query parameter
    of every call. Every argument is checked before any request.

    Args:
        api_key: the developer's API key.
        partner_name: the subscription's Service ID.
        base_url: the address of the content and campaign APIs.
        timeout: read timeout in seconds (or a ``(connect, read)`` pair).
        retries: retries of failed calls (connection errors, 429, 5xx).
        session: a ``requests.Session`` to use instead of a new one.

    Raises:
        ConfigError: a missing key or partner name, or a base_url that is not http(s).

    Example:
        >>> client = ContentClient("k" * 8, "partner-1", "https://api.example")
        >>> client
        ContentClient(partner_name='partner-1', base_url='https://api.example')
    """

    def _path(self, tail: str) -> str:
        return f"{_PREFIX}/{tail}"

    def add(
        self, urls: str | Iterable[str], publish_access: PublishAccess = "private"
    ) -> builtins.list[OnboardingItem]:
        """Onboard content from one URL or many.

        Each URL becomes a ``urlList`` item with ``content_access`` ``"public"``,
        ``publish_access`` as given and ``partner_cloud_url`` equal to the URL.

        Args:
            urls: one http(s) URL or several, from which the service downloads the content.
            publish_access: ``"public"`` (plays with the API key) or ``"private"`` (plays
                through a signed URL).

        Returns:
            One :class:`OnboardingItem` per submitted URL, in the service's order.

        Raises:
            InputError: no URL, a URL that is not http(s), a URL given twice, or a bad
                publish_access.
            ApiError: the service refused (AuthError for a wrong key).
        """
        items = [urls] if isinstance(urls, str) else list(urls)
        if not items:
            raise InputError("urls is empty; give at least one http(s) URL")
        checked = [check_http_url(u, f"urls[{i}]") for i, u in enumerate(items)]
        first: dict[str, int] = {}
        for i, url in enumerate(checked):
            if url in first:
                raise InputError(f"urls[{i}] repeats urls[{first[url]}] ({redact(url)!r})")
            first[url] = i
        if publish_access not in ("public", "private"):
            raise InputError(
                f"publish_access must be 'public' or 'private', got {publish_access!r}"
            )
        body = {
            "urlList": [
                {
                    "url": url,
                    "content_access": "public",
                    "publish_access": publish_access,
                    "partner_cloud_url": url,
                }
                for url in checked
            ]
        }
        what = "content/add"
        records = check_records(
            self._json("POST", self._path("content/add"), what, json=body, once=True), what
        )
        return [
            OnboardingItem(
                content_id=str(r.get("content_id", "")),
                url=str(r.get("url", "")),
                status=str(r.get("status", "")),
                message=str(r.get("message", "")),
            )
            for r in records
        ]

    def list(self) -> pd.DataFrame:
        """Read every content record of the subscription.

        Returns:
            A frame with the documented fields as columns (:data:`CONTENT_COLUMNS`):
            ``createdAt``/``updatedAt`` as ``datetime64[us, UTC]``, ``id`` and ``content_size``
            as ``Int64``, the rest as ``string``; extra fields follow.

        Raises:
            ApiError: the service refused.
            SchemaError: the answer is not an array of records.
        """
        what = "content/get-all"
        records = check_records(self._json("GET", self._path("content/get-all"), what), what)
        return frame(records, CONTENT_COLUMNS, what)

    def get_url(self, content_id: str) -> str:
        """Return the edge playback URL of a content.

        Args:
            content_id: the ``content_id`` field of a record, not its row ``id``.

        Returns:
            The edge URL (without the API key; see :meth:`playback_url`).

        Raises:
            InputError: an int or a purely numeric string (what a row id looks like).
            NotFoundError: no such content.
        """
        cid = check_content_id(content_id)
        what = "content/get-url"
        payload = self._json("GET", self._path(f"content/get-url/{quote(cid, safe='')}"), what)
        return str(check_object(payload, what, "url")["url"])

    def app_keys(self) -> builtins.list[AppKey]:
        """Return the subscription's app keys, with redacted reprs.

        Raises:
            ApiError: the service refused.
            SchemaError: the answer has no ``app_keys`` array.
        """
        what = "get-app-key"
        payload = check_object(self._json("GET", self._path("get-app-key"), what), what, "app_keys")
        keys = payload["app_keys"]
        if not isinstance(keys, builtins.list):
            raise SchemaError(f"{what}: app_keys is {type(keys).__name__}, expected an array")
        return [AppKey(str(k)) for k in keys]

    def signed_url(
        self,
        content: str,
        *,
        app_key: str | AppKey | None = None,
        expires_in: float | timedelta = 3600,
        allow_signed_cookie: bool = False,
    ) -> str:
        """Sign an edge content URL so that private content plays.

        Args:
            content: the edge content URL (``content_url`` of :meth:`list`, or :meth:`get_url`).
            app_key: an app key; the first of :meth:`app_keys` when omitted.
            expires_in: validity, in whole seconds or as a timedelta (no maximum).
            allow_signed_cookie: sent as ``'true'``/``'false'``.

        Returns:
            The signed URL (append the API key with :meth:`playback_url` to play it).

        Raises:
            InputError: a content that is not an http(s) URL, a zero, negative or fractional
                expiry, a non-bool allow_signed_cookie or a blank app key.
            ApiError: the service refused, or listed no app key.
        """
        url = check_http_url(content, "content")
        seconds = expiry_seconds(expires_in)
        if not isinstance(allow_signed_cookie, bool):
            raise InputError(
                f"allow_signed_cookie must be True or False, got {allow_signed_cookie!r}"
            )
        key = self._app_key(app_key)
        params = {
            "app_key": key,
            "expiry_time": str(seconds),
            "content": url,
            "allow_signed_cookie": "true" if allow_signed_cookie else "false",
        }
        what = "signed-url"
        try:
            payload = self._json("GET", self._path("signed-url"), what, params=params)
        except EdgeReportsError as exc:
            raise redact_from(exc, key) from None
        return str(check_object(payload, what, "url")["url"])

    def _app_key(self, app_key: str | AppKey | None) -> str:
        if isinstance(app_key, AppKey):
            return app_key.value
        if isinstance(app_key, str):
            if not app_key.strip():
                raise InputError("app_key is blank; omit it to use the first app key")
            return app_key.strip()
        if app_key is not None:
            raise InputError(f"app_key must be a string or an AppKey, got {type(app_key).__name__}")
        keys = self.app_keys()
        if not keys:
            raise ApiError(
                "the service lists no app key for this subscription (get-app-key was empty)",
                status_code=200,
            )
        return keys[0].value

    def playback_url(self, url: str) -> PlaybackUrl:
        """Append the API key to the end of a content or signed URL for playback.

        The key is added as ``api_key=<KEY>`` after ``?`` when the URL has no query yet and
        after ``&`` otherwise (an ``api_key`` already present is replaced). The result
        necessarily holds the key: it is returned, never logged, and its repr is redacted.

        Args:
            url: an edge ``content_url`` (public content) or a signed URL (private content).

        Returns:
            The playback URL, a ``str`` whose repr hides the key.

        Raises:
            InputError: not an http(s) URL.
        """
        checked = check_http_url(url, "url")
        parts = urlsplit(checked)
        kept = [p for p in parts.query.split("&") if p and p.split("=", 1)[0] != "api_key"]
        kept.append(f"api_key={quote(self._api_key, safe='')}")
        return PlaybackUrl(urlunsplit(parts._replace(query="&".join(kept))))

    def fetch_playback(self, url: str, *, origin: str | None = None) -> requests.Response:
        """Fetch a playback URL (e.g. the HLS playlist) to check that it plays.

        Playback works only from inside an edge environment; the sandbox serves it
        locally. The request carries no ``api_key`` header: the key must be in the URL, as a
        player would send it (:meth:`playback_url`).

        Args:
            url: a playback URL, usually from :meth:`playback_url`.
            origin: sent as the ``Origin`` header, as a browser player would (checked against
                the whitelist by the service).

        Returns:
            The 2xx response, body read.

        Raises:
            InputError: not an http(s) URL, or a malformed origin.
            AuthError: the key, signature or origin was refused (messages show no key).
            ApiError: any other refusal.
        """
        checked = check_http_url(url, "url")
        headers = {} if origin is None else {"Origin": check_origin(origin)}
        return self._http.request("GET", checked, headers=headers, what="playback")

    def domains(self) -> builtins.list[str]:
        """Return the CORS whitelist domains of the subscription.

        Raises:
            ApiError: the service refused.
            SchemaError: the answer has no ``cors_whitelist_domain`` array.
        """
        what = "get-whitelist-domain"
        payload = check_object(
            self._json("GET", self._path("get-whitelist-domain"), what),
            what,
            "cors_whitelist_domain",
        )
        domains = payload["cors_whitelist_domain"]
        if isinstance(domains, str):
            return [domains]
        if not isinstance(domains, builtins.list):
            raise SchemaError(
                f"{what}: cors_whitelist_domain is {type(domains).__name__}, expected an array"
            )
        return [str(d) for d in domains]

    def allow_domain(self, origin: str) -> WhitelistChange:
        """Add an origin to the CORS whitelist.

        Args:
            origin: ``scheme://host[:port]``; one trailing slash is removed with a warning.

        Returns:
            The service's confirmation.

        Raises:
            InputError: no scheme, not http(s), or a path, query or fragment.
            ApiError: the service refused or did not answer ``SUCCESS``.
        """
        return self._whitelist("POST", "add-whitelist-domain", check_origin(origin))

    def remove_domain(self, origin: str) -> WhitelistChange:
        """Remove an origin from the CORS whitelist (content stays).

        The origin it takes, the confirmation it returns and the errors it raises are those of
        :meth:`allow_domain`.
        """
        return self._whitelist("DELETE", "delete-whitelist-domain", check_origin(origin))

    def _whitelist(self, method: str, tail: str, origin: str) -> WhitelistChange:
        body = {"cors_whitelist_domain": origin}
        payload = check_object(self._json(method, self._path(tail), tail, json=body), tail)
        status = str(payload.get("status", ""))
        message = str(payload.get("message", ""))
        if status.upper() != "SUCCESS":
            raise ApiError(
                f"{tail} of {origin!r} answered status {status!r}: {self._http.redact(message)}",
                status_code=200,
                body_excerpt=self._http.redact(message)[:200],
            )
        return WhitelistChange(domain=origin, status=status, message=message)

    def wait_until_synced(
        self,
        content_ids: str | OnboardingItem | Iterable[str | OnboardingItem],
        *,
        timeout: float | timedelta = 600.0,
        poll: float = 5.0,
        progress: bool | None = None,
    ) -> pd.DataFrame:
        """Poll get-all until every content is synced to the edge.

        ``success`` (any case) in ``content_upload_status`` means synced; any other value, or
        a content_id not listed yet, is still in progress.

        Args:
            content_ids: one content_id or several (or the items :meth:`add` returned).
            timeout: how long to wait at most, in seconds or as a timedelta (default 10
                minutes, twice the documented "up to about 5 minutes").
            poll: seconds between two polls.
            progress: show a tqdm progress bar; ``None`` shows it in a terminal or notebook.

        Returns:
            The final records of those contents (columns of :meth:`list`), in the order given.

        Raises:
            InputError: no id, a row id instead of a content_id, or a non-positive timeout/poll.
            SyncTimeout: some content is still in progress; ``.pending`` lists it.
        """
        return wait_until_synced(
            self.list,
            check_content_ids(content_ids),
            timeout=timeout,
            poll=poll,
            progress=progress,
        )
