"""``serve()``: run a sandbox in a background thread and hand back its addresses and controls."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..clock import Clock
from ..extras import require_extras
from ..model.network import Network, build_network
from .faults import FaultConfig, FaultInjector
from .state import Limits, SandboxState
from .throttle import Throttle
from .wsgi_server import redact_path, start_server

__all__ = [
    "DEFAULT_API_KEY",
    "DEFAULT_CORE_ID",
    "DEFAULT_PARTNER",
    "DEFAULT_SERVICE_TOKEN",
    "SandboxHandle",
    "redact_path",
    "serve",
]

DEFAULT_API_KEY = "sandbox-demo-key"
DEFAULT_PARTNER = "sandbox-partner"
#: The reporting service's bearer token and mobile core id (shaped like a JWT and a core id).
DEFAULT_SERVICE_TOKEN = "eyJhbGciOiJIUzI1NiJ9.c2FuZGJveA.sandbox-service-token"
DEFAULT_CORE_ID = "sandbox-core-1"


@dataclass(frozen=True)
class SandboxHandle:
    """A running sandbox: addresses, credentials, inventory, clock and counters.

    Attributes:
        base_url: address of the content and campaign APIs (``http://127.0.0.1:PORT``).
        reporting_url: address of the reporting API (the same server).
        api_key: the accepted API key (never shown in the repr).
        partner_name: the accepted ``partner_name``.
        account_id: the primary account (24 hex digits).
        network: the synthetic network (accounts, sites, eNodeBs, SIMs, devices).
        clock: the sandbox clock; ``handle.clock.set(...)``/``advance(...)`` move it.
        seed: the seed.
        service_token: the accepted bearer token of the v2 reporting service (never shown).
        core_id: the mobile core id of the v2 reporting service.
    """

    base_url: str
    reporting_url: str
    api_key: str = field(repr=False)
    partner_name: str
    account_id: str
    network: Network = field(repr=False)
    clock: Clock
    seed: int
    state: SandboxState = field(repr=False, compare=False)
    service_token: str = field(default=DEFAULT_SERVICE_TOKEN, repr=False)
    core_id: str = DEFAULT_CORE_ID

    @property
    def report_endpoint(self) -> str:
        """The full URL of endpoint 13 (without the ``apikey`` parameter)."""
        return f"{self.reporting_url}/connectivity/v1/report"

    @property
    def report_v2_endpoint(self) -> str:
        """The full URL of the v2 report (without the ``Authorization`` parameter)."""
        return f"{self.reporting_url}/connectivity/v2/report"

    @property
    def service_endpoint(self) -> str:
        """The full URL of the v2 reporting service for this sandbox's core id."""
        return f"{self.base_url}/reporting/v2/reporting-service/{self.core_id}"

    @property
    def content_url(self) -> str:
        """The prefix of the content endpoints."""
        return f"{self.base_url}/api/v1/stream-tech"

    @property
    def campaigns_url(self) -> str:
        """The prefix of the campaign endpoints."""
        return f"{self.base_url}/rmn-api/api/v1/rmn/agencies"

    def inventory(self, account_id: str | None = None) -> list[dict[str, Any]]:
        """The inventory of an account (default: the primary one), one row per SIM: msisdn,
        imsi, device_id, customer_site_id, enodeb_ip, activation_date, deactivation_date (ISO
        dates; None: still active) and account_id; ``er.Inventory.from_sandbox`` reads it.

        Raises:
            ValueError: no account has that id.
        """
        return self.network.inventory_rows(account_id)

    @property
    def incidents(self) -> list[dict[str, Any]]:
        """The injected incidents (ground truth): kind, subject, start, end (UTC), hours."""
        return [i.to_dict() for i in self.network.incidents]

    def fault_counts(self) -> dict[str, int]:
        """Return the faults injected so far by kind (``latency``, ``"503"``, ``drop``...)."""
        return self.state.faults.counts()

    def enqueue_faults(self, *specs: str) -> None:
        """Queue faults for the next API requests, one each (``X-Sandbox-Fault`` syntax).

        Raises:
            ValueError: a spec does not parse.
        """
        self.state.faults.enqueue(*specs)

    def request_count(self, area: str = "reporting") -> int:
        """Return how many requests reached ``area`` (reporting, content, campaigns, playback).

        Every request counts, including those answered with an error or an injected fault.
        """
        return self.state.request_counts().get(area, 0)

    def request_counts(self) -> dict[str, int]:
        """Return requests per area."""
        return self.state.request_counts()

    def report_requests(self) -> list[Any]:
        """Return the JSON bodies of the report requests received (oldest first)."""
        return self.state.reports()

    def rate_limited(self) -> int:
        """Return how many API requests the rate-limit mode answered 429 so far."""
        return self.state.throttle.refused

    def set_rate_limit(self, requests_per_second: int | None) -> None:
        """Turn the rate-limit mode on at ``requests_per_second`` per key, or off (None).

        Raises:
            ValueError: not a whole number >= 1.
        """
        self.state.throttle.set(requests_per_second)

    def reset_counters(self) -> None:
        """Forget request counts, report bodies, fault counts and rate-limited requests."""
        self.state.reset_counters()


def _as_faults(faults: FaultConfig | Mapping[str, Any] | None) -> FaultConfig:
    if faults is None:
        return FaultConfig()
    if isinstance(faults, FaultConfig):
        return faults
    return FaultConfig(**dict(faults))


def serve(
    *,
    seed: int = 0,
    devices: int = 64,
    extra_accounts: int = 1,
    host: str = "127.0.0.1",
    port: int = 0,
    clock: Clock | datetime | str | None = None,
    faults: FaultConfig | Mapping[str, Any] | None = None,
    sync_delay: float = 3.0,
    api_key: str = DEFAULT_API_KEY,
    partner_name: str = DEFAULT_PARTNER,
    limits: Limits | None = None,
    quiet: bool = True,
    service_token: str = DEFAULT_SERVICE_TOKEN,
    core_id: str = DEFAULT_CORE_ID,
    incidents: Sequence[Mapping[str, Any] | str] | None = None,
    data_lag: timedelta | float = 0.0,
    account_keys: Mapping[str, Sequence[str]] | None = None,
) -> AbstractContextManager[SandboxHandle]:
    """Run a sandbox in a background thread for the duration of a ``with`` block.

    Args:
        seed: seed of the network, its activity, ids and keys.
        devices: devices (and SIMs) on the primary account.
        extra_accounts: further, smaller accounts.
        host: interface to bind (loopback unless told otherwise).
        port: TCP port; 0 picks a free one.
        clock: a :class:`Clock`, a fixed instant (datetime or ISO string), or ``None`` for the
            real time.
        faults: a :class:`FaultConfig` or its fields as a mapping.
        sync_delay: seconds until onboarded content is synced (by the sandbox clock).
        api_key: the accepted API key.
        partner_name: the accepted ``partner_name``.
        limits: size limits, and the rate-limit mode (``Limits(requests_per_second=N)``: 429
            with ``Retry-After`` above N API requests per key in any sliding second).
        quiet: do not log requests (logged lines never show keys).
        service_token: the accepted bearer token of the v2 reporting service.
        core_id: the mobile core id of the v2 reporting service.
        incidents: ground truth to inject, each ``{"kind", "subject", "start", "hours"}``
            (and an optional ``"factor"``) or ``"KIND:SUBJECT:START:HOURS"``: ``site_dark``
            (a customer site id), ``device_offline``, ``usage_drop``, ``usage_spike``,
            ``sim_idle`` (an MSISDN); ``start`` on a whole UTC hour (see
            ``model/incidents.py``). Every report is computed with them;
            :attr:`SandboxHandle.incidents` lists them.
        data_lag: how far (seconds or a timedelta) the reported data trails the clock, as on
            a service whose data lags: reports are answered as of the clock less the lag
            (the bucket holding that instant partly filled, none after it), while every
            answer's ``Date`` states the clock.
        account_keys: further API keys of the report endpoints, each accepted only for the
            account ids listed (``{"key": ["account id", ...]}``; 403 for any other account).

    Returns:
        A context manager: entering it starts the server and gives its :class:`SandboxHandle`,
        leaving it stops the server.

    Raises:
        SandboxExtrasMissing: (an ``ImportError``) Flask, cheroot or numba is not installed; the
            message names the pip command.
        ValueError: an option is out of range or an incident is malformed.
        OSError: the address cannot be bound (on entering).

    Example:
        >>> import json, urllib.request
        >>> with serve(seed=1, clock="2022-07-08T10:00:00+05:30") as sb:
        ...     with urllib.request.urlopen(f"{sb.base_url}/sandbox/clock") as answer:
        ...         print(json.load(answer))
        {'now': '2022-07-08T04:30:00+00:00', 'fixed': True}
    """
    require_extras()
    if sync_delay < 0:
        raise ValueError("sync_delay must be >= 0")
    lag = data_lag.total_seconds() if isinstance(data_lag, timedelta) else float(data_lag)
    if lag < 0:
        raise ValueError("data_lag must be >= 0")
    if not api_key or not partner_name or not service_token or not core_id:
        raise ValueError("api_key, partner_name, service_token and core_id must not be empty")
    network = build_network(seed, devices, extra_accounts=extra_accounts)
    state = SandboxState(
        network=network.with_incidents(incidents),
        clock=clock if isinstance(clock, Clock) else Clock(clock),
        faults=FaultInjector(_as_faults(faults)),
        api_key=api_key,
        partner_name=partner_name,
        seed=seed,
        sync_delay=sync_delay,
        limits=limits or Limits(),
        service_token=service_token,
        core_id=core_id,
        throttle=Throttle((limits or Limits()).requests_per_second),
        data_lag=lag,
        account_keys={k: frozenset(map(str, v)) for k, v in (account_keys or {}).items()},
    )
    return _serving(state, host, port, quiet)


@contextmanager
def _serving(state: SandboxState, host: str, port: int, quiet: bool) -> Iterator[SandboxHandle]:
    """Start the server, yield the handle and stop the server at the end."""
    holder: dict[str, Any] = {}

    def dispatch(environ: dict[str, Any], start_response: Any) -> Any:
        return holder["app"](environ, start_response)

    # the web shell imports Flask (the [sandbox] extra): loaded once require_extras() passed,
    # so importing the sandbox never needs it (this package cannot use edgereports' proxies)
    from .app import DROP_FLAG, RAW_HEADERS, create_app

    server = start_server(
        host, port, dispatch, raw_headers=RAW_HEADERS, drop_flag=DROP_FLAG, quiet=quiet
    )
    shown = f"[{host}]" if ":" in host else host
    state.base_url = f"http://{shown}:{server.port}"
    try:
        holder["app"] = create_app(state)
        yield SandboxHandle(
            base_url=state.base_url,
            reporting_url=state.base_url,
            api_key=state.api_key,
            partner_name=state.partner_name,
            account_id=state.network.primary_account_id,
            network=state.network,
            clock=state.clock,
            seed=state.seed,
            state=state,
            service_token=state.service_token,
            core_id=state.core_id,
        )
    finally:
        server.stop()
