"""The shared HTTP layer: one ``requests`` session with retries, timeouts and redaction.

:func:`make_session` builds a session whose adapters retry connection errors, 429, 500, 502,
503 and 504 through urllib3's ``Retry`` (POST included: a report is a read), with exponential
backoff plus jitter, honouring ``Retry-After`` up to a cap and never looping without a wait.
:class:`HttpClient` adds a second retry layer (its own loop) for what urllib3 cannot see (a
connection dropped while the body is read), sharing one budget of attempts with urllib3, and maps
every failure to the error tree of :mod:`edgereports.errors` with redacted URLs and bodies.
Creating a client installs a logging filter that redacts keys from the records of the
``urllib3``, ``requests`` and ``edgereports`` loggers (urllib3 logs request URLs at DEBUG).
A :class:`Pacer` is a request budget shared by threads whose pace follows the service's 429s; a
:class:`SharedPacer` shares it with other processes through a file (:func:`budget_file`: one per
API key and service host).
"""

from __future__ import annotations

from .budgets import budget_file
from .client import HttpClient
from .pacing import Pacer
from .redaction import REDACTED_LOGGERS, install_log_redaction
from .session import RETRY_STATUSES, make_session
from .shared_pacing import SharedPacer

__all__ = [
    "REDACTED_LOGGERS",
    "RETRY_STATUSES",
    "HttpClient",
    "Pacer",
    "SharedPacer",
    "budget_file",
    "install_log_redaction",
    "make_session",
]
