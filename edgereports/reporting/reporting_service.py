"""``ReportingServiceClient``: the v2 reporting service (access points and UEs per mobile core).

``POST {base_url}/reporting/v2/reporting-service/{core_id}`` with ``Authorization: Bearer
<token>`` (see docs/service.md). The reporting service aligns its steps to the request time,
so a service report is sent whole: never windowed, fanned out or cached.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import orjson

from ..config import Settings, check_secret
from ..errors import ConfigError, InputError
from ..normalize.reporting_service import service_frame
from ..progress import open_progress
from ..query import ServiceReport
from .assemble import parse_json
from .connection import UsesConnection, open_connection

if TYPE_CHECKING:
    import pandas as pd
    import requests

__all__ = ["SERVICE_PATH", "ReportingServiceClient"]

#: The reporting service's path, relative to ``base_url`` (``{core_id}`` filled in).
SERVICE_PATH = "reporting/v2/reporting-service/{core_id}"
_JSON = "application/json"


def _required(value: object, name: str, env: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(
            f"{name} is empty; pass {name}= or set {env} and use "
            "ReportingServiceClient.from_settings(Settings.from_env())"
        )
    return check_secret(name, value)


class ReportingServiceClient(UsesConnection):
    """Runs and fetches requests of the v2 reporting service.

    Thread-safe. The token is sent only in the ``Authorization`` header and shown nowhere
    (errors, log lines, reprs). How to obtain a token is not documented by the service.

    Args:
        token: the bearer token (a JWT).
        base_url: the service's address.
        core_id: the mobile core id (the last path segment).
        timeout: seconds, or ``(connect, read)`` seconds, per attempt.
        retries: retries after the first attempt (5xx, 429, connection errors, dropped
            bodies), as in :class:`~edgereports.reporting.ReportingClient`.
        progress: show a progress bar (True), never (False), or where someone watches (None).
        session: a ``requests.Session`` to use as is.
        backoff: first retry wait in seconds; ignored with ``session``.
        retry_after_cap: the longest ``Retry-After`` honoured; ignored with ``session``.
        rate_limit: a request budget, as in :class:`~edgereports.reporting.ReportingClient`.

    Raises:
        ConfigError: an empty token or core id, a URL that is not http(s), bad numbers
            (before any request).

    Example:
        >>> ReportingServiceClient("eyJ-token", "https://edge.example", "core-1")
        ReportingServiceClient(base_url='https://edge.example', core_id='core-1')
    """

    def __init__(
        self,
        token: str,
        base_url: str,
        core_id: str,
        *,
        timeout: float | tuple[float, float] = (5.0, 30.0),
        retries: int = 4,
        progress: bool | None = None,
        session: requests.Session | None = None,
        backoff: float = 0.5,
        retry_after_cap: float = 60.0,
        rate_limit: float | str | None = None,
    ) -> None:
        self._token = _required(token, "token", "EDGEREPORTS_SERVICE_TOKEN")
        self.core_id = _required(core_id, "core_id", "EDGEREPORTS_CORE_ID")
        self.progress = progress
        self._connection = open_connection(
            "base_url",
            base_url,
            self._token,
            timeout=timeout,
            retries=retries,
            max_workers=1,
            session=session,
            backoff=backoff,
            retry_after_cap=retry_after_cap,
            rate_limit=rate_limit,
        )
        self._http = self._connection.http
        self.base_url = self._http.base_url

    @classmethod
    def from_settings(cls, settings: Settings, **options: Any) -> ReportingServiceClient:
        """A client from settings: ``service_token``, ``base_url`` and ``core_id``.

        Raises:
            ConfigError: one of them is not set (``EDGEREPORTS_SERVICE_TOKEN``,
                ``EDGEREPORTS_BASE_URL``, ``EDGEREPORTS_CORE_ID``).
        """
        settings.require("service_token", "base_url", "core_id")
        assert settings.service_token and settings.base_url and settings.core_id
        options.setdefault("timeout", (min(5.0, settings.timeout), settings.timeout))
        options.setdefault("rate_limit", settings.rate_limit)
        return cls(settings.service_token, settings.base_url, settings.core_id, **options)

    def __repr__(self) -> str:
        return (
            f"ReportingServiceClient(base_url={self._http.redact(self.base_url)!r}, "
            f"core_id={self.core_id!r})"
        )

    def run(self, report: ServiceReport | Mapping[str, Any]) -> Any:
        """Send ``report`` and return the parsed JSON answer, untouched.

        Raises:
            QueryError: the report is invalid (before any request).
            SchemaError: an answer that is not JSON.
            AuthError, NotFoundError, RateLimitError, ApiError, TransportError: as for
                :meth:`edgereports.reporting.ReportingClient.run`.
        """
        request = _as_service_report(report).to_request()
        bar = open_progress(self.progress, 1, "edgereports")
        try:
            response = self._http.request(
                "POST",
                SERVICE_PATH.format(core_id=quote(self.core_id, safe="")),
                headers={
                    "Authorization": f"Bearer {self._token}",
                    "Content-Type": _JSON,
                    "Accept": _JSON,
                },
                data=orjson.dumps(request),
                what="reporting service",
            )
            bar.update(1)
        finally:
            bar.close()
        return parse_json(response.content, "reporting service", self._http.redact)

    def fetch(self, report: ServiceReport | Mapping[str, Any]) -> pd.DataFrame:
        """Send ``report`` and return the answer as a time-series frame.

        The frame has the timeseries schema with the echoed ``mobile_core_id`` and
        ``edgepoint`` as dimension columns; ``df.attrs["request"]`` is the request.

        Raises:
            QueryError, SchemaError, AuthError, ApiError, TransportError: see :meth:`run`.
        """
        request = _as_service_report(report).to_request()
        frame: pd.DataFrame = service_frame(self.run(request), request)
        return frame


def _as_service_report(report: object) -> ServiceReport:
    if isinstance(report, ServiceReport):
        return report
    if isinstance(report, Mapping):
        return ServiceReport.from_request(report)
    raise InputError(f"expected a ServiceReport or its request dict, got {type(report).__name__}")
