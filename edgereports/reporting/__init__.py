"""The reporting client: one report in, one tidy frame out.

``client`` is the public face (settings, ``run``, ``fetch``, errors); ``plan`` says which
requests a report becomes (fan-out, then windows); ``runner`` runs those parts in worker
threads (progress, the points budget, pieces); ``assemble`` decodes the answers and puts the
frame together; ``results`` holds what a pull returns when parts fail; ``cache`` keeps final
chunks of answers on disk; ``reporting_service`` is the client of the v2 reporting service.

Example:
    >>> import edgereports as er
    >>> client = er.ReportingClient(key, sandbox_url)
    >>> df = client.fetch(er.presets.byte_usage_subscriber(
    ...     account_id=acct, msisdn=numbers, start="2022-07-01", end="2022-07-08"))
    >>> sorted(df["msisdn"].unique()) == sorted(numbers)
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._dependencies import lazy_names
from .client import CSV, JSON, ReportingClient
from .reporting_service import ReportingServiceClient
from .results import Failure, FetchResult

if TYPE_CHECKING:
    from .cache import Cache

# read when asked for: the store is not every client's
_LAZY = {"Cache": ".cache"}

__all__ = [
    "CSV",
    "JSON",
    "Cache",
    "Failure",
    "FetchResult",
    "ReportingClient",
    "ReportingServiceClient",
]


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals(), __all__)
