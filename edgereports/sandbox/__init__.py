"""A local emulator of the whole service (docs/service.md), over a deterministic synthetic network.

Start one with :func:`serve` (a context manager running it in a background thread on a free
port) or from the shell with ``python -m edgereports.sandbox`` / ``edgereports sandbox``. It
implements all 13 endpoints (content, campaigns, reporting), a playback route, helper routes
under ``/sandbox/`` and ``/openapi.json``. It is a second, independent implementation of the
contract: it imports nothing from ``edgereports`` outside this package.

Running it needs the ``[sandbox]`` extra (Flask, cheroot, numba): ``pip install
'edgereports[sandbox]'``. Importing this package does not; :func:`serve` and the command say in
one line what is missing (``extras.py``).

Three parts import downwards only: ``web`` (the HTTP shell) → ``engine`` (the report engine)
→ ``model`` (the synthetic network and its incidents); ``clock``, ``problems`` and ``extras``
are shared.

Example:
    >>> from edgereports.sandbox import serve
    >>> with serve(seed=0, clock="2022-07-08T10:00:00+05:30") as sb:
    ...     print(sb.report_endpoint, sb.account_id)
    http://127.0.0.1:.../connectivity/v1/report 62c40843c7a1909709112345
"""

from __future__ import annotations

from .clock import Clock
from .model.network import Network, build_network
from .web.faults import FaultConfig
from .web.server import DEFAULT_API_KEY, DEFAULT_PARTNER, SandboxHandle, serve
from .web.state import Limits

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
