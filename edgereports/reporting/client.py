"""``ReportingClient``: one call for a long range and many subscribers, as one tidy frame."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, overload

import orjson

from ..config import (
    API_VERSIONS,
    DEFAULT_MAX_WORKERS,
    Settings,
    Timeout,
    check_api_key,
    check_rate_limit,
)
from ..errors import ConfigError, InputError
from ..normalize.output import check_output, convert
from ..query import Report
from .assemble import assemble_pull, parse_json
from .cache import CachedPull, check_data_lag, check_horizon, open_cache
from .compare import align
from .connection import UsesConnection, open_connection
from .plan import DEFAULT_POINTS, plan_pull
from .points import PointsBudget
from .results import FetchResult, settle, settle_periods, warn_about
from .rules import check_partial
from .runner import CSV, JSON, PartRunner

if TYPE_CHECKING:
    import pandas as pd
    import requests

    from ..normalize.output import Output
    from .cache import Cache
    from .periods import Comparison

__all__ = ["CSV", "JSON", "REPORT_PATH", "REPORT_PATHS", "ReportingClient"]

#: The reporting endpoint, relative to ``reporting_url``.
REPORT_PATH = "connectivity/v1/report"
#: Per API version: the report path and the query parameter that carries the key.
REPORT_PATHS = {"v1": (REPORT_PATH, "apikey"), "v2": ("connectivity/v2/report", "Authorization")}
_ACCEPTS = (JSON, CSV)
#: The longest range a pull covers unless ``max_range=`` says otherwise.
DEFAULT_MAX_RANGE = timedelta(days=5 * 365 + 2)

OnError = Literal["raise", "collect"]
#: What ``compare=`` takes: a named period (``"previous_period"``, ``"previous_week"``,
#: ``"previous_year"``, ``"previous_year_dow"``), ``(start, end)``, or a list of up to 4.
Compare = str | tuple[Any, Any] | list[Any]


class ReportingClient(UsesConnection):
    """Fetches connectivity reports: windows, fan-out, retries, concurrency and progress.

    Thread-safe: one client may be used from several threads at once.

    Args:
        api_key: the API key; sent only as the ``apikey`` query parameter, shown nowhere.
        reporting_url: the reporting API's address (``{reporting_url}/connectivity/v1/report``).
        timeout: seconds, or ``(connect, read)`` seconds, per attempt.
        retries: retries per request after the first attempt (5xx, 429, connection errors,
            dropped bodies), one budget shared by both retry layers.
        max_workers: the most requests in flight at once (16 by default), the same on every
            pull: a pull waits mostly on round trips, and 16 make 50 subscribers four rounds;
            lower it (or set ``rate_limit``) for a service that answers 429.
        progress: show a progress bar (True), never (False), or when there is more than one
            request and stderr is a terminal or the code runs in a notebook (None).
        session: a ``requests.Session`` to use as is (proxies, certificates).
        backoff: first retry wait in seconds (doubles per retry, plus jitter); ignored with
            ``session``.
        retry_after_cap: the longest ``Retry-After`` honoured, in seconds; ignored with
            ``session``.
        api_version: ``"v1"`` (``/connectivity/v1/report``, key in ``apikey``) or ``"v2"``
            (``/connectivity/v2/report``, key in ``Authorization``); the client accepts only
            reports written for its version.
        points_per_request: the budget of one request in points (buckets x metrics) that
            sizes the windows of a pull; an answer saying a request is too large splits it and
            lowers the budget for the rest of the client's life.
        rate_limit: a request budget: at most this many requests per second, evenly spaced
            (no burst), shared by every thread, fan-out part, window and retry of the client;
            a number of requests per second (``10``, ``0.5``) or a text ``"10/s"``,
            ``"600/min"``. A 429 slows the budget, accepted answers bring it back (docs
            "Fetching"). None (default): no budget until the service answers 429.
        cache: keep answers on disk (docs "Caching"): a directory, True (the per-user cache
            directory), a :class:`~edgereports.reporting.Cache` (e.g. with ``max_bytes``), or
            None/False (no cache).
        horizon: how far back from the service's now data is still revised: chunks reaching
            into it are fetched again, never stored; by default 3 hours for HOUR buckets and
            2 days for DAY buckets and SIM counts.
        data_lag: how far the service's data trails its clock (its ``Date``): the cache
            counts its horizon back from the clock less this lag. None (default): no lag, the
            horizon covering a shorter one; set it for a service whose data lags further.
        max_range: the longest range a pull may cover (five years by default): a longer one
            (``start="99999w"``) is an ``InputError`` before any request, not thousands of
            requests the service refuses one by one. None: no bound.

    Raises:
        ConfigError: an empty key, a reporting URL that is not http(s), an unknown API
            version, or a bad number (a timeout that is not positive, negative
            ``retries``/``backoff``, a ``rate_limit`` that is not a positive rate, ...), a
            cache path that is not a writable directory, a negative ``horizon`` or
            ``data_lag``, all when the client is built.

    Example:
        >>> client = ReportingClient("my-key", "https://reports.example")
        >>> client
        ReportingClient(reporting_url='https://reports.example', max_workers=16)
    """

    def __init__(
        self,
        api_key: str,
        reporting_url: str,
        *,
        timeout: Timeout = (5.0, 30.0),
        retries: int = 4,
        max_workers: int = DEFAULT_MAX_WORKERS,
        progress: bool | None = None,
        session: requests.Session | None = None,
        backoff: float = 0.5,
        retry_after_cap: float = 60.0,
        api_version: str = "v1",
        points_per_request: int = DEFAULT_POINTS,
        rate_limit: float | str | None = None,
        cache: str | os.PathLike[str] | bool | Cache | None = None,
        horizon: timedelta | None = None,
        data_lag: timedelta | None = None,
        max_range: timedelta | None = DEFAULT_MAX_RANGE,
    ) -> None:
        key = check_api_key(api_key)
        self.max_range = _check_max_range(max_range)
        self._horizon = check_horizon(horizon)
        self._data_lag = check_data_lag(data_lag)
        self._cache = _open_cache(cache)
        self._fingerprint: str | None = None
        self._budget = PointsBudget(points_per_request)
        if api_version not in API_VERSIONS:
            raise ConfigError(
                f"api_version must be one of {', '.join(API_VERSIONS)}, got {api_version!r}"
            )
        self._api_key = key
        self.api_version = api_version
        self._options: dict[str, Any] = dict(
            timeout=timeout, retries=retries, backoff=backoff, retry_after_cap=retry_after_cap
        )
        self.max_workers = max_workers
        self.progress = progress
        self._connection = open_connection(
            "reporting_url",
            reporting_url,
            key,
            timeout=timeout,
            retries=retries,
            max_workers=max_workers,
            session=session,
            backoff=backoff,
            retry_after_cap=retry_after_cap,
            rate_limit=rate_limit,
        )
        self._http = self._connection.http
        self.reporting_url = self._http.base_url
        self._runner = PartRunner(self._post, self._budget, self._http.redact)

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
        options.setdefault("api_version", settings.api_version)
        options.setdefault("rate_limit", settings.rate_limit)
        options.setdefault("cache", settings.cache)
        return cls(settings.api_key, settings.reporting_url, **options)

    def for_version(self, api_version: str) -> ReportingClient:
        """A client of the same key, address and options for another API version.

        The new client shares this client's HTTP session (closing it leaves the session open)
        and its request budget (``rate_limit``).

        Raises:
            ConfigError: an unknown API version.

        Example:
            >>> ReportingClient("my-key", "https://r.example").for_version("v2").api_version
            'v2'
        """
        if api_version == self.api_version:
            return self
        other = ReportingClient(
            self._api_key,
            self.reporting_url,
            max_workers=self.max_workers,
            progress=self.progress,
            session=self._http.session,
            api_version=api_version,
            points_per_request=self._budget.points,
            cache=self._cache,
            horizon=self._horizon,
            max_range=self.max_range,
            data_lag=self._data_lag,
            **self._options,
        )
        other._http.pacer = self._http.pacer  # one budget for both
        return other

    @property
    def rate_limit(self) -> float | None:
        """The request budget in requests per second, or None.

        Example:
            >>> ReportingClient("my-key", "https://r.example", rate_limit="600/min").rate_limit
            10.0
        """
        pacer = self._http.pacer
        return pacer.ceiling if pacer is not None else None

    def share_budget(
        self, rate_limit: float | str, *, directory: str | os.PathLike[str] | None = None
    ) -> None:
        """Pace this client's requests with the budget of its API key at its service's host,
        kept in a file that every process using the key shares (see
        :func:`~edgereports.http.budget_file`); ``rate_limit`` is the budget of them all.

        Args:
            rate_limit: requests per second for every process of the key together.
            directory: where the budget files live (a directory every process and container
                sharing the key sees); None for the per-user cache directory.

        Raises:
            ConfigError: ``rate_limit`` is not a positive rate, or ``directory`` cannot be
                created or written.

        Example:
            >>> client = ReportingClient("my-key", "https://r.example")
            >>> client.share_budget("10/s", directory="budgets")  # seen by every process
            >>> client.rate_limit
            10.0
        """
        from ..http import SharedPacer, budget_file

        rate = check_rate_limit(rate_limit, "rate_limit")
        if rate is None:
            raise ConfigError("rate_limit must be a rate to share a budget, got None")
        path = budget_file(self._api_key, self.reporting_url, directory)
        self._http.pacer = SharedPacer(rate, path)

    def service_now(self, *, probe: bool = True) -> datetime:
        """Now, as the service's clock says.

        The ``Date`` header of the service's latest answer (plus the time since); with no
        answer yet and ``probe``, one cheap request learns it; else the local clock.

        Example:
            >>> ReportingClient("k3y-secret", "http://127.0.0.1:9").service_now(probe=False).tzinfo
            datetime.timezone.utc
        """
        now = self._http.service_now()
        if now is None and probe:
            now = self._http.probe_clock()
        return now if now is not None else datetime.now(UTC)

    @property
    def last_answer_date(self) -> datetime | None:
        """The service's clock as its latest answer stated it (the HTTP ``Date``, UTC), or
        None before any answer: what a report of a run says it was made against.

        Example:
            >>> ReportingClient("k3y-secret", "http://127.0.0.1:9").last_answer_date is None
            True
        """
        return self._http.last_date

    @property
    def cache(self) -> Cache | None:
        """The client's cache (``info()``, ``clear()``), or None."""
        return self._cache

    def __repr__(self) -> str:
        version = f", api_version={self.api_version!r}" if self.api_version != "v1" else ""
        return (
            f"ReportingClient(reporting_url={self._http.redact(self.reporting_url)!r}, "
            f"max_workers={self.max_workers}{version})"
        )

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
        request = self._as_report(report).to_request()
        response = self._post(request, accept, "report")
        if accept == CSV:
            return response.content.decode(response.encoding or "utf-8", errors="replace")
        return parse_json(response.content, "report", self._http.redact)

    # -- tidy frames ----------------------------------------------------------------------

    @overload
    def fetch(
        self,
        report: Report | Mapping[str, Any],
        *,
        window: timedelta | None = ...,
        accept: str = ...,
        on_error: OnError = ...,
        output: Literal["pandas"] = ...,
        refresh: bool = ...,
        partial: str = ...,
        compare: Compare | None = ...,
        compare_by: Mapping[str, Any] | None = ...,
    ) -> pd.DataFrame: ...
    @overload
    def fetch(
        self,
        report: Report | Mapping[str, Any],
        *,
        window: timedelta | None = ...,
        accept: str = ...,
        on_error: OnError = ...,
        output: Output,
        refresh: bool = ...,
        partial: str = ...,
        compare: Compare | None = ...,
        compare_by: Mapping[str, Any] | None = ...,
    ) -> Any: ...
    def fetch(
        self,
        report: Report | Mapping[str, Any],
        *,
        window: timedelta | None = None,
        accept: str = JSON,
        on_error: OnError = "raise",
        output: Output = "pandas",
        refresh: bool = False,
        partial: str = "keep",
        compare: Compare | None = None,
        compare_by: Mapping[str, Any] | None = None,
    ) -> Any:
        """Fetch ``report`` as one tidy frame, split into windows and fan-out requests.

        A report with a granularity (or SIM counts) is split into windows on UTC bucket
        boundaries and stitched by ownership, so the frame equals the range fetched whole; a
        report grouped by a dimension whose filter lists several values is sent once per
        value. All requests run concurrently (``max_workers``).

        Args:
            report: the report (or its request dict, read with ``Report.from_request``).
            window: the window length (a whole number of buckets); by default as many
                buckets as the points budget allows (``points_per_request``: 100,000 points,
                at most a year per window), so most pulls are one request per fan-out value.
            accept: fetch JSON (default) or CSV; both give the same frame.
            on_error: ``"raise"``: a failed part raises :class:`PartialFailure`;
                ``"collect"``: return the frame of the parts that succeeded, with the
                failures in ``df.attrs["failures"]`` (JSON-ready dicts, see
                :meth:`Failure.to_dict`).
            output: ``"pandas"`` (a DataFrame), ``"arrow"`` (a ``pyarrow.Table`` with the
                pinned Arrow schema) or ``"polars"`` (needs ``edgereports[polars]``).
            refresh: with a cache, fetch every part again and rewrite its entries.
            partial: ``"keep"`` (default) keeps the buckets the range covers only in part
                (named in ``df.attrs["partial_buckets"]``, with a
                :class:`PartialBucketWarning`); ``"drop"`` keeps whole buckets only;
                ``"prorate"`` (with ``compare=``) keeps them and compares a COUNT row with an
                other period's row that holds a different share of its bucket's time (today so
                far against a whole day) by scaling the other value to the same share.
            compare: also pull other periods through this client and align them with the
                report's (see "Comparing periods" in the docs): ``"previous_period"`` (the
                range moved back by its own length on its zone's calendar),
                ``"previous_week"`` (7 days back), ``"previous_year"`` (the same dates a year
                earlier), ``"previous_year_dow"`` (364 days back: the same weekdays), a
                ``(start, end)`` pair, or a list of up to 4 of them. The frame gains
                ``compare_time_stamp``, ``compare_value``, ``change``, ``change_pct`` and
                ``compare_partial``; each row meets the other period's row at the same offset
                from its range's start with the same dimensions, metric, aggregation and
                percentile; rows without one keep nulls and are counted in
                ``df.attrs["compare"]``, which names the rule and both ranges. A list gives one
                block of rows per period, named in a ``period`` column. The change is null
                where the two rows are not like for like (a partial or provisional bucket
                holding a different share of its time; ``compare_partial`` marks every row
                with such a bucket on either side). With ``on_error="collect"`` an other
                period's failed parts are in its ``failures`` in ``df.attrs["compare"]``.
            compare_by: compare cohorts over the same range instead:
                ``{"customer_site_id": ["A", "B"]}`` pulls the report pinned to ``A`` and
                to ``B`` (2 to 5 values: the first against each other one), one block of
                rows per other value named in a ``cohort`` column.

        Returns:
            The frame; ``df.attrs["request"]`` is the report's request (no key in it), with
            relative dates (``"7d"``, ``"today"``) resolved against the service's present
            (``df.attrs["clock"]`` says which clock and when). A report
            with buckets keeps those that overlap ``[start, end)``; a bucket the service adds
            at or after the end is dropped and counted in ``df.attrs["dropped_after_end"]``.
            ``df.attrs["provisional_from"]`` is the start of the bucket holding the service's
            present when the range reaches it: that bucket and later ones may still change.
            ``df.attrs["top_talker"]`` lists the grouped-by dimensions no filter pins (a
            COUNT row is then a total labelled with its top talker, a MAX, MIN or AVG row the
            top talker's own value only; a :class:`TopTalkerWarning` says which) and
            ``df.attrs["empty"]`` the filters that matched no row (with an
            :class:`EmptyResultWarning`); a current value for a device not on the account at
            that time gets no row and is named in ``df.attrs["not_on_account"]`` (with an
            :class:`EmptyResultWarning`). For every output, :func:`edgereports.provenance`
            reads what the pull recorded; with a cache, ``cache`` says what it served
            (chunks ``hits``, ``misses``, ``provisional``, and why parts were ``not_cached``).

        Raises:
            QueryError: the report or ``compare`` is invalid; InputError: a bad
                ``window``/``accept``/``on_error``/``output``/``partial`` (all before any
                request).
            AuthError: the key is refused (at once; the rest of the pull is cancelled).
            PartialFailure: some parts failed (``.failures``, ``.frame``).
            EdgeReportsError: every part failed: the first part's error.
        """
        if on_error not in ("raise", "collect"):
            raise InputError(f"on_error must be 'raise' or 'collect', got {on_error!r}")
        check_output(output)
        check_partial(partial)
        if partial == "prorate" and compare is None and compare_by is None:
            raise InputError(
                "partial='prorate' scales the other period of a comparison; pass compare= "
                "(or compare_by=), or partial='keep'"
            )
        reports = [self._as_report(report)]
        result, comparison = self._pull(
            reports, window, accept, refresh, partial, compare, compare_by
        )
        if comparison is None:
            return convert(settle(result, 0, on_error), output)
        names = [o.name for o in comparison.others]
        frame, others = settle_periods(result, names, on_error)
        return convert(align(frame, others, comparison, partial=partial), output)

    def fetch_many(
        self,
        reports: Iterable[Report | Mapping[str, Any]],
        *,
        window: timedelta | None = None,
        accept: str = JSON,
        refresh: bool = False,
        partial: str = "keep",
    ) -> FetchResult:
        """Fetch several reports in one pool of requests; failures are collected, not raised.

        Args:
            reports: the reports.
            window: as in :meth:`fetch`.
            accept: as in :meth:`fetch`.
            refresh: as in :meth:`fetch`.
            partial: as in :meth:`fetch`.

        Returns:
            One frame per report (None for a report every part of which failed) and every
            failed part (which report, window, fan-out value and error).

        Raises:
            QueryError, InputError: an invalid report or argument (before any request).
            AuthError: the key is refused (at once).
        """
        if check_partial(partial) == "prorate":
            raise InputError("partial='prorate' scales a comparison (fetch(..., compare=...))")
        result, _ = self._pull(
            [self._as_report(r) for r in reports], window, accept, refresh, partial
        )
        for frame in result.frames:
            if frame is not None:
                warn_about(frame)
        return result

    # -- internals ------------------------------------------------------------------------

    def _as_report(self, report: object) -> Report:
        """A :class:`Report` of this client's version (a request dict is read as one).

        Raises:
            InputError: not a report, or a report written for the other version.
        """
        if isinstance(report, Mapping):
            return Report.from_request(report, api_version=self.api_version)
        if not isinstance(report, Report):
            raise InputError(f"expected a Report or a request dict, got {type(report).__name__}")
        if report.api_version != self.api_version:
            raise InputError(
                f"this client speaks reporting {self.api_version} but the report is written "
                f"for {report.api_version}; build it with api_version={self.api_version!r} or "
                f"use ReportingClient(..., api_version={report.api_version!r})"
            )
        return report

    def _pull(
        self,
        reports: list[Report],
        window: timedelta | None,
        accept: str,
        refresh: bool,
        partial: str = "keep",
        compare: Compare | None = None,
        compare_by: Mapping[str, Any] | None = None,
    ) -> tuple[FetchResult, Comparison | None]:
        """One pull: plan the reports' parts (and the other periods'), run them, assemble a
        frame per report; and what the other periods are compared with."""
        accept = _check_accept(accept)
        if window is not None and not isinstance(window, timedelta):
            raise InputError(f"window must be a datetime.timedelta, got {window!r}")
        plans = plan_pull(
            reports,
            window,
            points=self._budget.points,
            compare=compare,
            compare_by=compare_by,
            present=self.service_now,
            max_range=self.max_range,
        )
        pull = self._cached_pull(len(plans), accept, refresh)
        outcomes = self._runner.run(
            [p for plan in plans for p in plan.parts],
            accept,
            max_workers=self.max_workers,
            progress=self.progress,
            pull=pull,
        )
        if pull is not None:
            pull.finish()
        result = assemble_pull(plans, outcomes, pull, self._present(), partial)
        return result, plans[-1].comparison

    def _present(self) -> tuple[datetime, str]:
        """The present a pull is judged by, and which clock told it (no request made)."""
        now = self._http.service_now()
        return (now, "service") if now is not None else (datetime.now(UTC), "local")

    def _cached_pull(self, reports: int, accept: str, refresh: bool) -> CachedPull | None:
        if self._cache is None:
            return None
        pull = CachedPull(
            self._cache,
            reports=reports,
            accept=accept,
            service=self.reporting_url,
            api_version=self.api_version,
            horizon=self._horizon,
            clock=self._http.stated_now,
            data_lag=self._data_lag,
            fingerprint=self._key_fingerprint,
            refresh=refresh,
        )
        return pull

    def _key_fingerprint(self) -> str:
        """The salted fingerprint of this client's key in its cache (computed once)."""
        assert self._cache is not None
        if self._fingerprint is None:
            self._fingerprint = self._cache.store.fingerprint(self._api_key)
        return self._fingerprint

    def close(self) -> None:
        """Stop the worker threads and close the HTTP session if the client created it."""
        self._runner.close()
        super().close()

    def _post(self, request: dict[str, Any], accept: str, what: str) -> requests.Response:
        path, key_param = REPORT_PATHS[self.api_version]
        return self._http.request(
            "POST",
            path,
            params={key_param: self._api_key},
            headers={"Content-Type": JSON, "Accept": accept},
            data=orjson.dumps(request),
            what=what,
        )


def _open_cache(option: object) -> Cache | None:
    """The cache of the ``cache=`` option: :func:`~.cache.open_cache`, or None for none."""
    if option is None or option is False:
        return None
    return open_cache(option)


def _check_max_range(value: object) -> timedelta | None:
    if value is None:
        return None
    if not isinstance(value, timedelta) or value <= timedelta(0):
        raise ConfigError(f"max_range must be a positive datetime.timedelta or None, got {value!r}")
    return value


def _check_accept(accept: str) -> str:
    if accept not in _ACCEPTS:
        raise InputError(f"accept must be {JSON!r} or {CSV!r}, got {accept!r}")
    return accept
