"""``ReportingClient``: one call for a long range and many subscribers, as one tidy frame."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

import orjson

from ..config import (
    Settings,
    Timeout,
    check_api_key,
    check_count,
    check_seconds,
    check_timeout,
    check_url,
)
from ..errors import AuthError, EdgeReportsError, InputError, PartialFailure
from ..http import HttpClient, make_session
from ..progress import open_progress
from ..query import Report
from .assemble import answer_frame, assemble, owned, parse_json
from .plan import Part, plan_parts
from .results import FetchResult, describe_failures

if TYPE_CHECKING:
    import pandas as pd
    import requests

__all__ = ["CSV", "JSON", "REPORT_PATH", "ReportingClient"]

JSON = "application/json"
CSV = "text/csv"
#: The reporting endpoint (SPEC 4.3, #13), relative to ``reporting_url``.
REPORT_PATH = "connectivity/v1/report"
_ACCEPTS = (JSON, CSV)

OnError = Literal["raise", "collect"]


class ReportingClient:
    """Fetches connectivity reports: windows, fan-out, retries, concurrency and progress.

    Thread-safe: one client may be used from several threads at once.

    Args:
        api_key: the API key; sent only as the ``apikey`` query parameter, shown nowhere.
        reporting_url: the reporting API's address (``{reporting_url}/connectivity/v1/report``).
        timeout: seconds, or ``(connect, read)`` seconds, per attempt.
        retries: retries per request after the first attempt (5xx, 429, connection errors,
            dropped bodies), one budget shared by both retry layers.
        max_workers: requests in flight at once.
        progress: show a progress bar (True), never (False), or when there is more than one
            request and stderr is a terminal or the code runs in a notebook (None).
        session: a ``requests.Session`` to use as is (proxies, certificates).
        backoff: first retry wait in seconds (doubles per retry, plus jitter); ignored with
            ``session``.
        retry_after_cap: the longest ``Retry-After`` honoured, in seconds; ignored with
            ``session``.

    Raises:
        ConfigError: an empty key, a reporting URL that is not http(s), or a bad number
            (a timeout that is not positive, negative ``retries``/``backoff``, ...), all
            when the client is built.

    Example:
        >>> client = ReportingClient("my-key", "https://reports.example")
        >>> client
        ReportingClient(reporting_url='https://reports.example', max_workers=8)
    """

    def __init__(
        self,
        api_key: str,
        reporting_url: str,
        *,
        timeout: Timeout = (5.0, 30.0),
        retries: int = 4,
        max_workers: int = 8,
        progress: bool | None = None,
        session: requests.Session | None = None,
        backoff: float = 0.5,
        retry_after_cap: float = 60.0,
    ) -> None:
        key = check_api_key(api_key)
        url = check_url("reporting_url", reporting_url)
        check_count("max_workers", max_workers, 1)
        check_count("retries", retries, 0)
        check_timeout(timeout)
        check_seconds("backoff", backoff, zero=True)
        check_seconds("retry_after_cap", retry_after_cap, zero=True)
        self._api_key = key
        self.reporting_url = url
        self.max_workers = max_workers
        self.progress = progress
        self._owns_session = session is None
        if session is None:
            session = make_session(
                retries=retries,
                backoff=backoff,
                retry_after_cap=retry_after_cap,
                pool_maxsize=max(16, max_workers),
            )
        self._http = HttpClient(
            self.reporting_url,
            secrets=[self._api_key],
            timeout=timeout,
            retries=retries,
            session=session,
            retry_after_cap=retry_after_cap,
        )

    @classmethod
    def from_settings(cls, settings: Settings, **options: Any) -> ReportingClient:
        """A client from :class:`~edgereports.config.Settings` (key, reporting URL, timeout).

        Args:
            settings: e.g. ``Settings.from_env()``.
            **options: any keyword argument of the constructor.

        Raises:
            ConfigError: the key or the reporting URL is not set.
        """
        settings.require("api_key", "reporting_url")
        assert settings.api_key is not None and settings.reporting_url is not None
        options.setdefault("timeout", (min(5.0, settings.timeout), settings.timeout))
        return cls(settings.api_key, settings.reporting_url, **options)

    def __repr__(self) -> str:
        return (
            f"ReportingClient(reporting_url={self._http.redact(self.reporting_url)!r}, "
            f"max_workers={self.max_workers})"
        )

    def __enter__(self) -> ReportingClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP session if the client created it."""
        if self._owns_session:
            self._http.session.close()

    # -- one request ----------------------------------------------------------------------

    def run(self, report: Report | Mapping[str, Any], accept: str = JSON) -> Any:
        """Send ``report`` as one request and return the payload untouched.

        No windows, no fan-out, no normalization.

        Args:
            report: the report (or its request dict).
            accept: ``"application/json"`` or ``"text/csv"``.

        Returns:
            For JSON, the parsed body (a dict or a list, as the service sent it); for CSV,
            the body as text.

        Raises:
            QueryError: the report is invalid (before any request).
            SchemaError: a JSON answer that does not parse.
            AuthError, NotFoundError, RateLimitError, ApiError, TransportError: see
                :meth:`edgereports.http.HttpClient.request`.
        """
        _check_accept(accept)
        request = _as_report(report).to_request()
        response = self._post(request, accept, "report")
        if accept == CSV:
            return response.content.decode(response.encoding or "utf-8", errors="replace")
        return parse_json(response.content, "report", self._http.redact)

    # -- tidy frames ----------------------------------------------------------------------

    def fetch(
        self,
        report: Report | Mapping[str, Any],
        *,
        window: timedelta | None = None,
        accept: str = JSON,
        on_error: OnError = "raise",
    ) -> pd.DataFrame:
        """Fetch ``report`` as one tidy frame, split into windows and fan-out requests.

        A report with a granularity (or SIM counts) is split into windows on UTC bucket
        boundaries and stitched by ownership, so the frame equals the range fetched whole; a
        report grouped by a dimension whose filter lists several values is sent once per
        value. All requests run concurrently (``max_workers``).

        Args:
            report: the report (or its request dict, read with ``Report.from_request``).
            window: the window length (a whole number of buckets); by default 7 days for HOUR,
                90 days for DAY and for SIM counts.
            accept: fetch JSON (default) or CSV; both give the same frame.
            on_error: ``"raise"``: a failed part raises :class:`PartialFailure`;
                ``"collect"``: return the frame of the parts that succeeded, with the
                failures in ``df.attrs["failures"]`` (JSON-ready dicts, see
                :meth:`Failure.to_dict`).

        Returns:
            The frame; ``df.attrs["request"]`` is the report's request (no key in it).

        Raises:
            QueryError: the report is invalid; InputError: a bad ``window``/``accept``/
                ``on_error`` (all before any request).
            AuthError: the key is refused (at once; the rest of the pull is cancelled).
            PartialFailure: some parts failed (``.failures``, ``.frame``).
            EdgeReportsError: every part failed: the first part's error.
        """
        if on_error not in ("raise", "collect"):
            raise InputError(f"on_error must be 'raise' or 'collect', got {on_error!r}")
        result, counts = self._pull([_as_report(report)], window, accept)
        frame, failures = result.frames[0], result.failures
        if not failures:
            assert frame is not None
            return frame
        if frame is None:
            error = failures[0].error
            if counts[0] > 1:
                error.add_note(f"all {counts[0]} requests of this report failed; the first:")
                error.add_note(describe_failures(failures, counts[0]))
            raise error
        if on_error == "raise":
            raise PartialFailure(
                describe_failures(failures, counts[0]), failures=failures, frame=frame
            )
        frame.attrs["failures"] = [f.to_dict() for f in failures]
        return frame

    def fetch_many(
        self,
        reports: Iterable[Report | Mapping[str, Any]],
        *,
        window: timedelta | None = None,
        accept: str = JSON,
    ) -> FetchResult:
        """Fetch several reports in one pool of requests; failures are collected, not raised.

        Args:
            reports: the reports.
            window: as in :meth:`fetch`.
            accept: as in :meth:`fetch`.

        Returns:
            One frame per report (None for a report every part of which failed) and every
            failed part (which report, window, fan-out value and error).

        Raises:
            QueryError, InputError: an invalid report or argument (before any request).
            AuthError: the key is refused (at once).
        """
        result, _ = self._pull([_as_report(r) for r in reports], window, accept)
        return result

    # -- internals ------------------------------------------------------------------------

    def _pull(
        self, reports: Sequence[Report], window: timedelta | None, accept: str
    ) -> tuple[FetchResult, list[int]]:
        accept = _check_accept(accept)
        if window is not None and not isinstance(window, timedelta):
            raise InputError(f"window must be a datetime.timedelta, got {window!r}")
        requests_ = [r.to_request() for r in reports]  # validates every report first
        plans = [plan_parts(i, r, window) for i, r in enumerate(reports)]
        parts = [p for plan in plans for branch in plan for p in branch]
        outcomes = self._execute(parts, accept)
        result = FetchResult(frames=[])
        counts = []
        offset = 0
        for plan, request in zip(plans, requests_, strict=True):
            size = sum(len(b) for b in plan)
            mine = outcomes[offset : offset + size]
            outcomes[offset : offset + size] = [None] * size  # assemble releases the frames
            offset += size
            frame, failures = assemble(plan, mine, request)
            result.frames.append(frame)
            result.failures.extend(failures)
            counts.append(size)
        return result, counts

    def _execute(self, parts: Sequence[Part], accept: str) -> list[Any]:
        """Run every part; returns per part its frame or its error (AuthError aborts)."""
        outcomes: list[Any] = [None] * len(parts)
        bar = open_progress(self.progress, len(parts), "edgereports")
        try:
            if len(parts) == 1 or self.max_workers == 1:
                for i, part in enumerate(parts):
                    outcomes[i] = self._outcome(functools.partial(self._part, part, accept))
                    bar.update(1)
                return outcomes
            pool = ThreadPoolExecutor(
                max_workers=min(self.max_workers, len(parts)), thread_name_prefix="edgereports"
            )
            try:
                futures: dict[Future[Any], int] = {
                    pool.submit(self._part, part, accept): i for i, part in enumerate(parts)
                }
                for future in as_completed(futures):
                    # popped: the future would hold the part's frame after it is assembled
                    outcomes[futures.pop(future)] = self._outcome(future.result)
                    bar.update(1)
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
            return outcomes
        finally:
            bar.close()

    @staticmethod
    def _outcome(call: Callable[[], pd.DataFrame]) -> Any:
        try:
            return call()
        except AuthError:
            raise
        except EdgeReportsError as exc:
            return exc

    def _part(self, part: Part, accept: str) -> pd.DataFrame:
        request = part.sent.to_request()
        what = str(part)
        body = self._post(request, accept, what).content  # the response goes with its body
        frame = answer_frame(body, request, accept == CSV, what, self._http.redact)
        del body
        frame = owned(frame, part.window)
        # the pull's frame takes the report's request: a copy per part would only take room
        frame.attrs = {k: v for k, v in frame.attrs.items() if k != "request"}
        return frame

    def _post(self, request: dict[str, Any], accept: str, what: str) -> requests.Response:
        return self._http.request(
            "POST",
            REPORT_PATH,
            params={"apikey": self._api_key},
            headers={"Content-Type": JSON, "Accept": accept},
            data=orjson.dumps(request),
            what=what,
        )


def _as_report(report: object) -> Report:
    """A :class:`Report`, or a request dict of SPEC 2.8 read into one."""
    if isinstance(report, Report):
        return report
    if isinstance(report, Mapping):
        return Report.from_request(report)
    raise InputError(f"expected a Report or a request dict, got {type(report).__name__}")


def _check_accept(accept: str) -> str:
    if accept not in _ACCEPTS:
        raise InputError(f"accept must be {JSON!r} or {CSV!r}, got {accept!r}")
    return accept
