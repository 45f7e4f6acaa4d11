"""A local emulator of the whole service of SPEC.md, over a deterministic synthetic network.

Start one with :func:`serve` (a context manager running it in a background thread on a free
port) or from the shell with ``python -m edgereports.sandbox`` / ``edgereports sandbox``. It
implements all 13 endpoints (content, campaigns, reporting), a playback route, helper routes
under ``/sandbox/`` and ``/openapi.json``. It is a second, independent implementation of the
contract: it imports nothing from ``edgereports`` outside this package.

Where the semantics are documented: ``network`` (the inventory), ``activity`` (per-device
activity), ``quality`` (latency, jitter and packet loss), ``reportreq``/``reportfields`` (what a
report request may say), ``metrics`` (what every metric and aggregation means), ``engine``
(scope, dimensions, buckets, quirks), ``render`` (JSON and CSV layouts),
``reporting`` (errors and limits of endpoint 13), ``content`` and ``playback`` (area A),
``campaigns`` (area B, form fields and states), ``faults`` (fault injection), ``clock``,
``admin`` (``/sandbox/...`` routes), ``openapi``, ``app`` (auth and request flow), ``server``
(:func:`serve` and :class:`SandboxHandle`), ``wsgi_server`` (the HTTP server, keep-alive).

Example:
    >>> from edgereports.sandbox import serve
    >>> with serve(seed=0, clock="2022-07-08T10:00:00+05:30") as sb:  # doctest: +SKIP
    ...     print(sb.report_endpoint, sb.account_id)
"""

from __future__ import annotations

from .clock import Clock
from .faults import FaultConfig
from .network import Network, build_network
from .server import DEFAULT_API_KEY, DEFAULT_PARTNER, SandboxHandle, serve
from .state import Limits

__all__ = [
    "DEFAULT_API_KEY",
    "DEFAULT_PARTNER",
    "Clock",
    "FaultConfig",
    "Limits",
    "Network",
    "SandboxHandle",
    "build_network",
    "serve",
]
