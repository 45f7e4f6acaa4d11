"""``er.fetch``: one call from a preset name or a report to a frame.

The client comes from ``client=``, from an embedded sandbox (``sandbox=True``) or from
:meth:`Settings.from_env`. One client per :class:`~edgereports.config.Settings` is kept for the
life of the process, so its connections (and what it learned) serve the next call; they are
closed at exit, as is the embedded sandbox.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import presets
from ._dependencies import lazy_import
from .config import ENV_VARS, Settings
from .errors import ConfigError, InputError, QueryError
from .query import Report
from .query.times import TimeLike

if TYPE_CHECKING:
    from .normalize.output import Output
    from .reporting import ReportingClient

__all__ = ["fetch"]

# the client and the readers load on the first pull, so `import edgereports` stays light
_reporting = lazy_import("edgereports.reporting")
_rules = lazy_import("edgereports.reporting.rules")
_output = lazy_import("edgereports.normalize.output")

_SANDBOX_HINT = "or pass sandbox=True to try it against the local sandbox"


class _Clients:
    """The clients of :func:`fetch`, one per ``Settings``, and the embedded sandbox."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clients: dict[Settings, ReportingClient] = {}
        self._sandbox: Settings | None = None
        self._stack = contextlib.ExitStack()
        # The embedded sandbox serves from a non-daemon thread, and the interpreter joins
        # those before it runs atexit handlers: close it first, as concurrent.futures does.
        before_join = getattr(threading, "_register_atexit", None)
        if before_join is not None:
            before_join(self.close)
        else:  # pragma: no cover - every CPython since 3.9 has it
            atexit.register(self.close)

    def client(self, settings: Settings) -> ReportingClient:
        with self._lock:
            found = self._clients.get(settings)
            if found is None:
                found = _reporting.ReportingClient.from_settings(settings)
                self._clients[settings] = found
            return found

    def sandbox(self) -> Settings:
        """The settings of the embedded sandbox (started on first use, on loopback)."""
        with self._lock:
            if self._sandbox is None:
                from .sandbox import serve

                sb = self._stack.enter_context(serve(seed=0))
                self._sandbox = Settings(
                    api_key=sb.api_key,
                    reporting_url=sb.reporting_url,
                    base_url=sb.base_url,
                    partner_name=sb.partner_name,
                    account_id=sb.account_id,
                )
            return self._sandbox

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()
            self._sandbox = None
            self._stack.close()


_CLIENTS = _Clients()


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
    compare: str | tuple[TimeLike, TimeLike] | None = None,
    partial: str = "keep",
    **params: Any,
) -> Any:
    """Fetch a preset or a report as a frame in one call.

    Args:
        report: a preset name (see ``er.presets.names()``), a :class:`Report` or its request.
        start: the range start; a datetime, date, ISO-8601 text, a relative date (``"30d"``,
            ``"yesterday"``, resolved against the service's present) or a service keyword
            (``"LAST DAY"``).
        end: the range end (``"today"``, ``"tomorrow"`` for today so far, ``"NOW"``...).
        sandbox: run against an embedded sandbox on loopback (needs ``edgereports[sandbox]``).
        client: the client to use (its settings win over ``settings`` and ``sandbox``).
        settings: the settings; by default ``Settings.from_env()``.
        output: ``"pandas"``, ``"arrow"`` or ``"polars"``.
        compare: ``"previous_period"``, ``"previous_year"`` or ``(start, end)``: also pull
            that period and add ``compare_time_stamp``, ``compare_value``, ``change`` and
            ``change_pct`` (see :meth:`ReportingClient.fetch`; pandas output only).
        partial: ``"keep"`` the buckets the range covers only in part (named, with a
            warning) or ``"drop"`` them.
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
    _output.check_output(output)
    _rules.check_partial(partial)
    if client is None:
        if sandbox:
            settings = _CLIENTS.sandbox()
        elif settings is None:
            settings = Settings.from_env()
        if not isinstance(settings, Settings):
            raise InputError(f"settings must be an er.Settings, got {type(settings).__name__}")
    built = _build(report, start, end, settings, params)
    if client is None:
        assert settings is not None
        _require(settings, "api_key", "reporting_url")
        client = _CLIENTS.client(settings)
    return client.fetch(built, output=output, partial=partial, compare=compare)


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


def _require(settings: Settings, *names: str) -> None:
    try:
        settings.require(*names)
    except ConfigError as exc:
        raise ConfigError(f"er.fetch: {exc}, {_SANDBOX_HINT}") from None
