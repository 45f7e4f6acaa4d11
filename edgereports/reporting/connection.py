"""What both reporting clients share: checked options and one retrying, redacting HTTP client.

:class:`~edgereports.reporting.ReportingClient` and
:class:`~edgereports.reporting.ReportingServiceClient` build their HTTP layer here, so they
retry, time out, map errors and redact their credential alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from ..config import check_count, check_seconds, check_timeout, check_url
from ..http import HttpClient, Pacer, make_session

if TYPE_CHECKING:
    import requests

__all__ = ["Connection", "UsesConnection", "open_connection"]


class Connection:
    """An HTTP client to one address, and whether it owns its session.

    Attributes:
        http: the retrying, redacting HTTP client.
        owns_session: the session was created here (and is closed by :meth:`close`).
    """

    def __init__(self, http: HttpClient, owns_session: bool) -> None:
        self.http = http
        self.owns_session = owns_session

    def close(self) -> None:
        """Close the HTTP session if it was created here."""
        if self.owns_session:
            self.http.session.close()


class UsesConnection:
    """A client over one :class:`Connection`: a context manager that closes it."""

    _connection: Connection

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP session if the client created it."""
        self._connection.close()


def open_connection(
    name: str,
    url: str,
    secret: str,
    *,
    timeout: float | tuple[float, float],
    retries: int,
    max_workers: int,
    session: requests.Session | None,
    backoff: float,
    retry_after_cap: float,
    rate_limit: float | str | None = None,
) -> Connection:
    """Check the options and build the HTTP client of a reporting client.

    The options are the clients' own (see :class:`~edgereports.reporting.ReportingClient`);
    ``name`` names the address in messages and ``secret`` is redacted from every message.

    Raises:
        ConfigError: a URL that is not http(s), or a bad number (a timeout that is not
            positive, negative ``retries``/``backoff``, a rate that is not positive, ...).

    Example:
        >>> c = open_connection("base_url", "https://h.example", "s3cret-token", timeout=5.0,
        ...     retries=1, max_workers=1, session=None, backoff=0.5, retry_after_cap=60.0)
        >>> c.http
        HttpClient(base_url='https://h.example')
    """
    checked = check_url(name, url)
    check_count("max_workers", max_workers, 1)
    check_count("retries", retries, 0)
    check_timeout(timeout)
    check_seconds("backoff", backoff, zero=True)
    check_seconds("retry_after_cap", retry_after_cap, zero=True)
    pacer = Pacer(rate_limit)  # None: no budget until a 429, then the service's pace
    owns = session is None
    if session is None:
        session = make_session(
            retries=retries,
            backoff=backoff,
            retry_after_cap=retry_after_cap,
            pool_maxsize=max(16, max_workers),
        )
    http = HttpClient(
        checked,
        secrets=[secret],
        timeout=timeout,
        retries=retries,
        session=session,
        retry_after_cap=retry_after_cap,
        pacer=pacer,
    )
    return Connection(http, owns)
