"""``HttpClient``: requests against one base URL, retried, mapped to errors and redacted."""

from __future__ import annotations

import contextlib
import email.utils
import logging
import random
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import requests
from urllib3.exceptions import MaxRetryError

from ..config import Timeout, check_count, check_seconds, check_timeout
from ..errors import (
    ApiError,
    AuthError,
    EdgeReportsError,
    NotFoundError,
    RateLimitError,
    TransportError,
    redact,
)
from ..redaction import redacted_excerpt, url_secrets
from .pacing import Pacer
from .redaction import install_log_redaction
from .session import BudgetAdapter, make_session, refused

__all__ = ["HttpClient"]

logger = logging.getLogger("edgereports.http")

_EXCERPT = 200
_OUTER_RETRYABLE = (
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
    requests.exceptions.ConnectionError,
    requests.exceptions.Timeout,
)


class HttpClient:
    """Requests against one base URL, with retries, timeouts and errors mapped and redacted.

    Args:
        base_url: the service address; request paths are joined to it.
        secrets: values to redact from every message (e.g. the API key); the password of
            ``base_url``'s userinfo (``https://user:password@host``) is one too.
        timeout: seconds, or ``(connect, read)`` seconds.
        retries: retries after the first attempt, shared by urllib3 and the body-read layer.
        session: a session to use as is (proxies, certificates); ours retries when omitted.
        retry_after_cap: the longest ``Retry-After`` honoured, in seconds.
        pacer: a request budget shared with other clients and threads: every attempt
            (retries included) waits for its slot, and every answer tells it how the service
            takes the pace (see :class:`Pacer`).

    Raises:
        ConfigError: a timeout that is not positive seconds (or a pair of them), negative
            ``retries`` or ``retry_after_cap``.

    Example:
        >>> HttpClient("https://r.example", secrets=["k3y-secret"])
        HttpClient(base_url='https://r.example')
        >>> HttpClient("https://ana:pa55w0rd@r.example").redact("echo: PA55W0RD, cGE1NXcwcmQ=")
        'echo: ***, ***'
    """

    def __init__(
        self,
        base_url: str,
        *,
        secrets: Sequence[str | None] = (),
        timeout: Timeout = (5.0, 30.0),
        retries: int = 4,
        session: requests.Session | None = None,
        retry_after_cap: float = 60.0,
        pacer: Pacer | None = None,
    ) -> None:
        self.timeout = check_timeout(timeout)
        self.pacer = pacer
        self._retry_after_cap = retry_after_cap
        self.retries = check_count("retries", retries, 0)
        check_seconds("retry_after_cap", retry_after_cap, zero=True)
        self.base_url = base_url.rstrip("/")
        self._secrets = [s for s in secrets if s] + url_secrets(self.base_url)
        self._owns_session = session is None
        self.session = session or make_session(retries=retries, retry_after_cap=retry_after_cap)
        self._service_clock: tuple[datetime, float] | None = None
        self._answer_dated = False  # the latest answer carried a parseable Date
        install_log_redaction(self._secrets)

    def __repr__(self) -> str:
        return f"HttpClient(base_url={redact(self.base_url, self._secrets)!r})"

    def close(self) -> None:
        """Close the session if this client created it."""
        if self._owns_session:
            self.session.close()

    def redact(self, text: object) -> str:
        """``text`` with this client's secrets and any credential pattern replaced by ``***``."""
        return redact(text, self._secrets)

    def url(self, path: str) -> str:
        """The absolute URL of ``path`` (a full URL is returned as is)."""
        if path.startswith(("http://", "https://")):
            return path
        return f"{self.base_url}/{path.lstrip('/')}"

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        json: Any = None,
        data: Any = None,
        files: Any = None,
        what: str = "",
    ) -> requests.Response:
        """Send one request with retries; returns the response with its body read.

        Args:
            method: the HTTP method.
            path: a path joined to ``base_url``, or a full URL.
            params, headers, json, data, files: as in :meth:`requests.Session.request`.
            what: names the request in messages, e.g. ``"window 2022-07-07..2022-07-08"``.

        Returns:
            The 2xx response; ``response.content`` is already read.

        Raises:
            AuthError: 401 or 403.
            NotFoundError: 404.
            RateLimitError: 429 after the retries ran out.
            ApiError: any other non-2xx status.
            TransportError: connection failures, timeouts and broken bodies after the retries.
        """
        url = self.url(path)
        adapter = self.session.get_adapter(url)
        budgeted = adapter if isinstance(adapter, BudgetAdapter) else None
        allowed = self.retries + 1
        used = [0]  # attempts spent by urllib3 and by this layer together
        backoff = budgeted.backoff if budgeted is not None else 0.5

        def attempt() -> requests.Response:
            if self.pacer is not None:
                self.pacer.acquire()
            with (
                budgeted.budget(allowed - used[0], self.pacer)
                if budgeted
                else contextlib.nullcontext()
            ):
                try:
                    response = self.session.request(
                        method,
                        url,
                        params=params,
                        headers=headers,
                        json=json,
                        data=data,
                        files=files,
                        timeout=self.timeout,
                        stream=True,
                    )
                    _read_body(response)  # a body dropped half-way raises here, inside the retry
                    return response
                finally:
                    used[0] += budgeted.attempts if budgeted else 1

        def attempts() -> requests.Response:
            """``attempt`` until it succeeds, fails in a way no retry mends, or the attempts are
            spent; before the n-th retry it waits ``backoff * 2**(n-1)`` seconds (at most a
            minute) plus up to ``backoff`` more at random."""
            retry = 0
            while True:
                try:
                    return attempt()
                except _OUTER_RETRYABLE as exc:
                    if refused(exc) or used[0] >= allowed:
                        raise
                    self._debug(
                        "retrying %s %s after %r (%d of %d attempts used)",
                        method,
                        url,
                        exc,
                        used[0],
                        allowed,
                    )
                time.sleep(min(backoff * 2**retry, 60.0) + random.uniform(0, backoff))
                retry += 1

        started = time.perf_counter()
        failure: TransportError | None = None
        try:
            response = attempts()
        except requests.exceptions.RequestException as exc:  # retried ones and the rest
            failure = self._transport_error(exc, method, url, used[0], what)
        if failure is not None:
            # raised outside the handler: requests' exception (its message holds the URL with
            # the key) must not ride along as __context__, which `from None` only hides
            raise failure
        elapsed = time.perf_counter() - started
        self._note_clock(response)
        if self.pacer is not None:
            if response.status_code != 429:
                self.pacer.accepted()
            elif budgeted is None:  # a session of the caller's: its retries are not ours
                wait = _retry_after(response.headers.get("Retry-After"))
                wait = backoff if wait is None else wait
                self.pacer.refused(min(wait, self._retry_after_cap))
        self._debug(
            "%s %s -> %s in %.3fs, %d attempt(s)",
            method,
            url,
            response.status_code,
            elapsed,
            used[0],
        )
        if response.status_code >= 300:
            raise self._status_error(response, method, url, used[0], what)
        return response

    def service_now(self) -> datetime | None:
        """The service's clock: the ``Date`` of its latest answer plus the time since, or None.

        Example:
            >>> HttpClient("https://r.example").service_now() is None
            True
        """
        seen = self._service_clock
        if seen is None:
            return None
        stamp, at = seen
        return stamp + timedelta(seconds=time.monotonic() - at)

    def stated_now(self) -> datetime | None:
        """The service's clock as its latest answer stated it: None when that answer carried
        no ``Date`` header, or one that does not parse (unlike :meth:`service_now`, which
        keeps an earlier answer's clock).

        Example:
            >>> HttpClient("https://r.example").stated_now() is None
            True
        """
        return self.service_now() if self._answer_dated else None

    @property
    def last_date(self) -> datetime | None:
        """The ``Date`` header of the service's latest answer (UTC), as it stated it; None
        before any answer.

        Example:
            >>> HttpClient("https://r.example").last_date is None
            True
        """
        seen = self._service_clock
        return None if seen is None else seen[0]

    def probe_clock(self) -> datetime | None:
        """Learn the service's clock with one cheap request (a GET of the base URL, no key).

        Any answer carries a ``Date`` header, whatever its status; a failure leaves the clock
        unknown (None).
        """
        try:
            response = self.session.get(self.base_url, timeout=self.timeout, allow_redirects=False)
        except requests.exceptions.RequestException:
            return None
        with contextlib.closing(response):
            self._note_clock(response)
        return self.service_now()

    # -- internals ------------------------------------------------------------------------

    def _note_clock(self, response: requests.Response) -> None:
        """Keep the ``Date`` header of an answer as the service's clock."""
        # set once, not cleared first: a thread asking meanwhile (stated_now) must not see
        # a dated answer as undated
        header = response.headers.get("Date")
        if not header:
            self._answer_dated = False
            return
        try:
            stamp = email.utils.parsedate_to_datetime(header)
        except (TypeError, ValueError, IndexError, OverflowError):
            self._answer_dated = False
            return
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=UTC)
        self._service_clock = (stamp.astimezone(UTC), time.monotonic())
        self._answer_dated = True

    def _debug(self, message: str, *args: object) -> None:
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(self.redact(message % args))

    def _prefix(self, what: str) -> str:
        return f"{self.redact(what)}: " if what else ""

    def _transport_error(
        self, exc: BaseException, method: str, url: str, attempts: int, what: str
    ) -> TransportError:
        cause: BaseException = exc
        if exc.args and isinstance(exc.args[0], MaxRetryError) and exc.args[0].reason is not None:
            cause = exc.args[0].reason
        detail = self.redact(f"{type(cause).__name__}: {cause}")[:300]
        sent = getattr(exc, "request", None)
        url = getattr(sent, "url", None) or url
        return TransportError(
            f"{self._prefix(what)}{method} {self.redact(url)} failed after {attempts} "
            f"attempt(s): {type(exc).__name__} ({detail})",
            unreachable=refused(exc),
        )

    def _status_error(
        self, response: requests.Response, method: str, url: str, attempts: int, what: str
    ) -> EdgeReportsError:
        status = response.status_code
        shown_url = self.redact(response.url or url)
        try:
            text = response.content.decode(response.encoding or "utf-8", errors="replace")
        except Exception:  # pragma: no cover - content is bytes here
            text = ""
        # a secret's pattern takes any run of whitespace for its own: collapsing runs first
        # hides nothing from it
        excerpt = redacted_excerpt(" ".join(text.split()), _EXCERPT, self.redact)
        reason = redacted_excerpt(
            " ".join(str(response.reason or "").split()), _EXCERPT, self.redact
        )
        message = (
            f"{self._prefix(what)}{method} {shown_url} answered HTTP {status} {reason}".rstrip()
            + f" after {attempts} attempt(s)"
            + (f": {excerpt}" if excerpt else "")
        )
        kwargs: dict[str, Any] = {"status_code": status, "body_excerpt": excerpt, "url": shown_url}
        if status in (401, 403):
            return AuthError(message, **kwargs)
        if status == 404:
            return NotFoundError(message, **kwargs)
        if status == 429:
            retry_after = _retry_after(response.headers.get("Retry-After"))
            return RateLimitError(message, retry_after=retry_after, **kwargs)
        return ApiError(message, **kwargs)


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(float(value.strip()), 0.0)
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        return max(email.utils.mktime_tz(parsed) - time.time(), 0.0)


def _read_body(response: requests.Response) -> None:
    """Read the body in one piece (``response.content`` reads it in small chunks) and keep it
    as ``response.content``; errors are those of ``response.content`` (requests maps them in
    ``iter_content``)."""
    response._content = b"".join(response.iter_content(None))  # what .content would cache
