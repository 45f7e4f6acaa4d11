"""The retrying session: urllib3 ``Retry`` with a Retry-After floor and cap, mounted on an
adapter that shares one budget of attempts with :class:`~edgereports.http.HttpClient`.
"""

from __future__ import annotations

import contextlib
import email.utils
import os
import random
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import requests
import requests.auth
import requests.utils
from requests.adapters import HTTPAdapter
from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

from ..config import check_count, check_seconds
from .pacing import Pacer

__all__ = ["RETRY_STATUSES", "BudgetAdapter", "EnvOnceSession", "make_session", "refused"]

#: The statuses retried by urllib3 (and, when retries run out, mapped to errors).
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


def refused(error: BaseException | None) -> bool:
    """Whether ``error`` (or an error it wraps) is a refused TCP connection: nothing listens.

    A refused connection is answered at once by the host, so retrying it only delays the
    message that the address is wrong or the service is down.
    """
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, ConnectionRefusedError):
            return True
        wrapped = [getattr(error, "reason", None), *getattr(error, "args", ())[:1]]
        inner = next((e for e in wrapped if isinstance(e, BaseException)), None)
        error = error.__cause__ or error.__context__ or inner
    return False


class _Retry(Retry):
    """urllib3 ``Retry`` with a Retry-After floor and cap, and backoff from the first retry.

    With a ``pacer`` (a client's request budget), a 429 is reported to it with its
    ``Retry-After`` (:meth:`Pacer.refused`) and each retry waits for its slot after its own
    sleep.
    """

    def __init__(
        self, *args: Any, retry_after_min: float = 0.0, pacer: Pacer | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.retry_after_min = retry_after_min
        self.pacer = pacer

    def new(self, **kw: Any) -> _Retry:
        kw.setdefault("retry_after_min", self.retry_after_min)
        kw.setdefault("pacer", self.pacer)
        return super().new(**kw)

    def sleep(self, response: Any = None) -> None:
        super().sleep(response)
        if self.pacer is not None:
            self.pacer.acquire()

    def parse_retry_after(self, retry_after: str) -> float:
        """Seconds to wait: a number (fractions allowed) or an HTTP date, clamped."""
        try:
            seconds = float(retry_after.strip())
        except ValueError:
            parsed = email.utils.parsedate_tz(retry_after)
            if parsed is None:
                raise
            seconds = email.utils.mktime_tz(parsed) - time.time()
        return float(min(max(seconds, self.retry_after_min), self.retry_after_max))

    def get_retry_after(self, response: Any) -> float | None:
        """The clamped Retry-After of ``response``; None when absent or unreadable."""
        value = response.headers.get("Retry-After")
        if value is None:
            return None
        try:
            return self.parse_retry_after(value)
        except ValueError:
            return None

    def sleep_for_retry(self, response: Any) -> bool:
        retry_after = self.get_retry_after(response)
        if retry_after is None:
            return False
        if retry_after > 0:
            time.sleep(retry_after)
        return True

    def get_backoff_time(self) -> float:
        """``backoff_factor * 2**(n-1)`` plus jitter after ``n`` consecutive errors (n >= 1)."""
        errors = 0
        for item in reversed(self.history):
            if item.redirect_location is not None:
                break
            errors += 1
        if errors == 0:
            return 0.0
        value = self.backoff_factor * (2 ** (errors - 1))
        if self.backoff_jitter:
            value += random.random() * self.backoff_jitter
        return float(max(0.0, min(self.backoff_max, value)))

    def increment(self, *args: Any, **kwargs: Any) -> _Retry:
        error = kwargs.get("error", args[3] if len(args) > 3 else None)
        if refused(error):  # nothing listens at the address: fail at once
            url = kwargs.get("url", args[1] if len(args) > 1 else None)
            exc = MaxRetryError(kwargs.get("_pool"), url, error)  # type: ignore[arg-type]
            exc.attempts = len(self.history) + 1  # type: ignore[attr-defined]
            raise exc from error
        response = kwargs.get("response", args[2] if len(args) > 2 else None)
        if self.pacer is not None and getattr(response, "status", None) == 429:
            wait = self.get_retry_after(response)
            self.pacer.refused(self.backoff_factor if wait is None else wait)
        try:
            return super().increment(*args, **kwargs)
        except MaxRetryError as exc:
            exc.attempts = len(self.history) + 1  # type: ignore[attr-defined]
            raise


class _NoNetrc(requests.auth.AuthBase):
    """No credentials: the host has no ``.netrc`` entry (so requests does not look again)."""

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        return r


_NO_NETRC = _NoNetrc()


class EnvOnceSession(requests.Session):
    """A session that reads the environment once per host, not on every request.

    With ``trust_env`` (the default) requests reads the proxy variables, the CA bundle
    variables and looks for a ``.netrc`` file (filesystem lookups) on every request. This
    session keeps what the environment says per scheme, host and port (and per request and
    session settings), so proxies, certificates and ``.netrc`` from the environment still
    apply, read when a host is first used. It keeps no credential: for a host with a
    ``.netrc`` entry requests reads the file each time; only "no entry" is remembered.

    Example:
        >>> EnvOnceSession().trust_env
        True
    """

    def _seen(self) -> dict[Any, Any]:
        seen: dict[Any, Any] | None = self.__dict__.get("_env_seen")
        if seen is None:  # also after unpickling (requests pickles only its own attributes)
            seen = self.__dict__.setdefault("_env_seen", {})
        return seen

    def prepare_request(self, request: requests.Request) -> requests.PreparedRequest:
        if self.trust_env and not request.auth and not self.auth:
            key = ("netrc", _origin(request.url))
            seen = self._seen()
            if key not in seen:
                seen[key] = not _netrc_file() or requests.utils.get_netrc_auth(request.url) is None
            if seen[key]:
                request.auth = _NO_NETRC
        return super().prepare_request(request)

    def merge_environment_settings(
        self, url: Any, proxies: Any, stream: Any, verify: Any, cert: Any
    ) -> Any:
        if not self.trust_env:
            return super().merge_environment_settings(url, proxies, stream, verify, cert)
        try:
            key = (
                "env",
                _origin(url),
                tuple(sorted((proxies or {}).items())),
                tuple(sorted(self.proxies.items())),
                stream,
                self.stream,
                verify,
                self.verify,
                cert,
                self.cert,
            )
            hash(key)
        except TypeError:  # a setting that cannot be a key: read the environment as usual
            return super().merge_environment_settings(url, proxies, stream, verify, cert)
        seen = self._seen()
        settings = seen.get(key)
        if settings is None:
            settings = super().merge_environment_settings(url, proxies, stream, verify, cert)
            seen[key] = settings
        return {**settings, "proxies": dict(settings["proxies"])}


def _netrc_file() -> bool:
    """Whether a ``.netrc`` file is where requests looks for one (``NETRC``, else the home
    folder): without one, requests' lookup (and its import of ``netrc``) is skipped."""
    path = os.environ.get("NETRC")
    places = (path,) if path is not None else [f"~/{name}" for name in requests.utils.NETRC_FILES]
    return any(os.path.exists(os.path.expanduser(place)) for place in places)


def _origin(url: Any) -> tuple[str, str | None, int | None]:
    """Scheme, host and port of ``url`` (never its user, password or query)."""
    parts = urlsplit(str(url))
    try:
        port = parts.port
    except ValueError:
        port = None
    return parts.scheme.lower(), parts.hostname, port


class BudgetAdapter(HTTPAdapter):
    """An adapter whose retry total can be lowered per thread, and that counts attempts."""

    def __init__(self, retry: _Retry, pool_maxsize: int) -> None:
        self._local = threading.local()
        self._default_retry: Retry = retry
        super().__init__(
            max_retries=retry, pool_connections=pool_maxsize, pool_maxsize=pool_maxsize
        )

    def __setstate__(self, state: dict[str, Any]) -> None:  # unpickling: no __init__ ran
        self._local = threading.local()
        super().__setstate__(state)  # type: ignore[misc]

    @property
    def max_retries(self) -> Retry:
        override: Retry | None = getattr(self._local, "retry", None)
        return override if override is not None else self._default_retry

    @max_retries.setter
    def max_retries(self, value: Retry) -> None:
        self._default_retry = value

    @property
    def backoff(self) -> float:
        """The backoff factor of the mounted retry policy."""
        return float(self._default_retry.backoff_factor)

    @contextlib.contextmanager
    def budget(self, attempts: int, pacer: Pacer | None = None) -> Iterator[None]:
        """Allow at most ``attempts`` attempts (first try included) in this thread; each
        retry waits for its slot in ``pacer`` (the client's request budget), if any."""
        base = self._default_retry
        total = attempts - 1 if base.total is None else min(int(base.total), attempts - 1)
        extra = {"pacer": pacer} if isinstance(base, _Retry) else {}
        self._local.retry = base.new(total=max(total, 0), **extra)
        self._local.attempts = 1
        try:
            yield
        finally:
            self._local.retry = None

    @property
    def attempts(self) -> int:
        """The number of attempts the last ``send`` of this thread made."""
        return int(getattr(self._local, "attempts", 1))

    def send(
        self, request: requests.PreparedRequest, *args: Any, **kwargs: Any
    ) -> requests.Response:
        self._local.attempts = 1
        try:
            response = super().send(request, *args, **kwargs)
        except requests.exceptions.RequestException as exc:
            cause = exc.args[0] if exc.args else None
            self._local.attempts = int(getattr(cause, "attempts", 1))
            raise
        retries = getattr(response.raw, "retries", None)
        if isinstance(retries, Retry):
            self._local.attempts = len(retries.history) + 1
        return response


def make_session(
    *,
    retries: int = 4,
    backoff: float = 0.5,
    retry_after_cap: float = 60.0,
    pool_maxsize: int = 16,
) -> requests.Session:
    """Build a session that retries connection errors and 429/5xx answers.

    Args:
        retries: retries after the first attempt (connect, read and status alike).
        backoff: the first wait in seconds; it doubles per consecutive error, plus up to
            ``backoff`` of random jitter. A tenth of it is the least wait for a
            ``Retry-After`` (the service's own wait is kept, but a retry never starts at
            once).
        retry_after_cap: the longest wait a ``Retry-After`` header can ask for, in seconds.
        pool_maxsize: connections kept per host (at least the number of worker threads).

    Returns:
        A ``requests.Session`` with the retrying adapter mounted on ``http://`` and ``https://``.

    Raises:
        ConfigError: a negative or non-integral count, or negative or non-finite seconds.

    Example:
        >>> make_session(retries=2).get_adapter("https://h.example").max_retries.total
        2
    """
    check_count("retries", retries, 0)
    check_count("pool_maxsize", pool_maxsize, 1)
    check_seconds("backoff", backoff, zero=True)
    check_seconds("retry_after_cap", retry_after_cap, zero=True)
    retry = _Retry(
        total=retries,
        connect=retries,
        read=retries,
        status=retries,
        status_forcelist=sorted(RETRY_STATUSES),
        allowed_methods=frozenset(Retry.DEFAULT_ALLOWED_METHODS | {"POST"}),
        backoff_factor=backoff,
        backoff_jitter=backoff,
        backoff_max=max(retry_after_cap, backoff),
        respect_retry_after_header=True,
        retry_after_max=retry_after_cap,
        retry_after_min=min(backoff / 10, retry_after_cap),
        raise_on_status=False,
        raise_on_redirect=False,
    )
    session = EnvOnceSession()
    adapter = BudgetAdapter(retry, pool_maxsize)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
