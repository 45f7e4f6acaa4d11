"""``er.fetch``: one call from a preset name or a report to a frame, and the clients it keeps.

The client comes from ``client=``, from an embedded sandbox (``sandbox=True``) or from
:meth:`Settings.from_env`; :data:`fetch_clients` (a :class:`ClientCache`) keeps the clients and
the embedded sandbox between calls.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any, Self

from . import presets
from .config import ENV_VARS, Settings
from .errors import ConfigError, InputError, QueryError
from .normalize.output import check_output
from .query import Report
from .query.times import TimeLike
from .reporting import ReportingClient
from .reporting.rules import check_partial
from .sandbox import serve

if TYPE_CHECKING:
    from .normalize.output import Output

__all__ = ["ClientCache", "fetch", "fetch_clients"]

_SANDBOX_HINT = "or pass sandbox=True to try it against the local sandbox"


class ClientCache:
    """The clients :func:`fetch` reuses: one per settings (and options), and a local sandbox.

    A client keeps its HTTP connections, its request budget and what it learned of the service
    (its clock, a smaller budget it was told to keep), so the next call with equal settings
    reuses it. ``er.fetch_clients`` is the cache :func:`fetch` uses. Clients live until
    :meth:`close` (``with er.fetch_clients:`` closes them at the end of the block; the process's
    end closes what is left), after which the cache makes new ones as needed. Safe to share
    between threads.

    Example:
        >>> import edgereports as er
        >>> settings = er.fetch_clients.sandbox()  # a sandbox on loopback, started on first use
        >>> client = er.fetch_clients.get(settings)
        >>> client is er.fetch_clients.get(settings)
        True
        >>> er.fetch_clients.close()  # closes the clients and stops the sandbox
        >>> len(er.fetch_clients)
        0
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clients: dict[tuple[Settings, Hashable], ReportingClient] = {}
        self._sandbox: Settings | None = None
        self._stack = contextlib.ExitStack()
        self._at_exit = False

    def get(self, settings: Settings, **options: Any) -> ReportingClient:
        """The client of ``settings`` (and ``options``): the kept one, or a new one kept.

        Args:
            settings: the key, address and options of the client.
            **options: keyword arguments of :meth:`ReportingClient.from_settings`
                (``max_workers=8``, ``progress=False``...); other options, another client.

        Raises:
            ConfigError: the key or the reporting URL is not set.
            InputError: an option's value cannot be a key (a list, a dict).
        """
        key = (settings, _options_key(options))
        with self._lock:
            found = self._clients.get(key)
            if found is None:
                found = ReportingClient.from_settings(settings, **options)
                self._clients[key] = found
                self._close_at_exit()
            return found

    def sandbox(self) -> Settings:
        """The settings of a sandbox on loopback, started on first use (seed 0).

        Raises:
            ModuleNotFoundError: the ``[sandbox]`` extra is not installed (the message names
                the ``pip install``).
        """
        with self._lock:
            if self._sandbox is None:
                sb = self._stack.enter_context(serve(seed=0))
                self._close_at_exit()
                self._sandbox = Settings(
                    api_key=sb.api_key,
                    reporting_url=sb.reporting_url,
                    base_url=sb.base_url,
                    partner_name=sb.partner_name,
                    account_id=sb.account_id,
                )
            return self._sandbox

    def close(self) -> None:
        """Close every kept client and stop the sandbox; the cache stays usable."""
        with self._lock:
            clients = list(self._clients.values())
            self._clients.clear()
            self._sandbox = None
            stack, self._stack = self._stack, contextlib.ExitStack()
            if self._at_exit:
                atexit.unregister(self.close)
                self._at_exit = False
        for client in clients:
            client.close()
        stack.close()

    def __len__(self) -> int:
        """The number of clients kept."""
        with self._lock:
            return len(self._clients)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        with self._lock:
            running = "running" if self._sandbox is not None else "none"
            return f"<ClientCache: {len(self._clients)} clients, sandbox {running}>"

    def _close_at_exit(self) -> None:
        # Called with the lock held: once the cache holds something, close it at exit (the
        # sandbox's threads are daemons, so the interpreter reaches its exit handlers).
        if not self._at_exit:
            atexit.register(self.close)
            self._at_exit = True


def _options_key(options: Mapping[str, Any]) -> Hashable:
    for name, value in options.items():
        try:
            hash(value)
        except TypeError:
            raise InputError(
                f"option {name}= of a kept client must be hashable (it keys the client), got "
                f"{type(value).__name__}"
            ) from None
    return tuple(sorted(options.items()))


fetch_clients = ClientCache()
"""The clients :func:`fetch` keeps, and its sandbox (``er.fetch_clients``)."""


def fetch(
    report: str | Report | Mapping[str, Any],
    /,
    *,
    start: TimeLike | None = None,
    end: TimeLike | None = None,
    sandbox: bool = False,
    client: ReportingClient | None = None,
    settings: Settings | None = None,
    output: Output = "pandas",
    compare: str | tuple[TimeLike, TimeLike] | list[Any] | None = None,
    partial: str = "keep",
    compare_by: Mapping[str, Any] | None = None,
    **params: Any,
) -> Any:
    """Fetch a preset or a report as a frame in one call.

    Args:
        report: a preset name (see ``er.presets.names()``), a :class:`Report` or its request.
        start: the range start; a datetime, date, ISO-8601 text, a relative date (``"30d"``,
            ``"yesterday"``, resolved against the service's present) or a service keyword
            (``"LAST DAY"``).
        end: the range end (``"today"``, ``"tomorrow"`` for today so far, ``"NOW"``...).
        sandbox: run against an embedded sandbox on loopback (needs ``edgereports[sandbox]``;
            started once, kept in :data:`fetch_clients`).
        client: the client to use (its settings win over ``settings`` and ``sandbox``).
        settings: the settings; by default ``Settings.from_env()``. The client made for them
            is kept in :data:`fetch_clients` and serves the next call with equal settings.
        output: ``"pandas"``, ``"arrow"`` or ``"polars"``.
        compare: ``"previous_period"``, ``"previous_week"``, ``"previous_year"``,
            ``"previous_year_dow"``, ``(start, end)`` or a list of up to 4 of them: also pull
            those periods and add ``compare_time_stamp``, ``compare_value``, ``change``,
            ``change_pct`` and ``compare_partial`` (a list: one block of rows per period,
            named in ``period``; see :meth:`ReportingClient.fetch`).
        partial: ``"keep"`` the buckets the range covers only in part (named, with a
            warning), ``"drop"`` them, or ``"prorate"`` a comparison's other value where
            the two rows hold different shares of their buckets' time.
        compare_by: ``{dimension: [base, other, ...]}``: compare cohorts over the same range
            (one block of rows per other value, named in ``cohort``).
        **params: the preset's parameters (``msisdn=[...]``, ``account_id=...``; the account
            defaults to ``EDGEREPORTS_ACCOUNT_ID`` or the sandbox's).

    Returns:
        The frame (or table); :func:`edgereports.provenance` reads what the pull recorded.

    Raises:
        ConfigError: a setting is missing (the message names it and mentions the sandbox).
        QueryError, InputError: a bad preset, parameter or value (before any request).
        EdgeReportsError: see :meth:`ReportingClient.fetch`.

    Example:
        >>> import edgereports as er
        >>> df = er.fetch("time_usage_enterprise", start="7d", end="today", sandbox=True)
        >>> list(df.columns)[:3]
        ['time_stamp', 'account_id', 'metric']
    """
    check_output(output)
    check_partial(partial)
    if client is None:
        if sandbox:
            settings = fetch_clients.sandbox()
        elif settings is None:
            settings = Settings.from_env()
        if not isinstance(settings, Settings):
            raise InputError(f"settings must be an er.Settings, got {type(settings).__name__}")
    built = _build(report, start, end, settings, params)
    if client is None:
        assert settings is not None
        try:
            settings.require("api_key", "reporting_url")
        except ConfigError as exc:
            raise ConfigError(f"er.fetch: {exc}, {_SANDBOX_HINT}") from None
        client = fetch_clients.get(settings)
    return client.fetch(
        built, output=output, partial=partial, compare=compare, compare_by=compare_by
    )


def _build(
    report: object,
    start: TimeLike | None,
    end: TimeLike | None,
    settings: Settings | None,
    params: dict[str, Any],
) -> Report:
    if isinstance(report, Mapping):
        report = Report.from_request(report)
    if isinstance(report, Report):
        if params:
            raise QueryError(
                f"er.fetch takes preset parameters only with a preset name, got "
                f"{', '.join(sorted(params))} with a Report",
                field=sorted(params)[0],
            )
        if start is not None or end is not None:
            if start is None or end is None:
                raise QueryError("give both start and end, or neither", field="start_date_time")
            report = report.between(start, end)
        return report
    if not isinstance(report, str):
        raise InputError(
            f"er.fetch takes a preset name, a Report or a request dict, got {type(report).__name__}"
        )
    info = presets.get(report)
    names = {p.name for p in info.params}
    if "account_id" in names and params.get("account_id") is None:
        if settings is None or settings.account_id is None:
            raise ConfigError(
                f"preset {report!r} needs an account: pass account_id=..., or set "
                f"{ENV_VARS['account_id']}, {_SANDBOX_HINT}"
            )
        params["account_id"] = settings.account_id
    if "start" in names:
        params.update(start=start, end=end)
    elif start is not None or end is not None:
        raise QueryError(f"preset {report!r} reports the current value: it takes no start/end")
    return presets.build(report, **params)
