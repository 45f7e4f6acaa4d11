"""The reporting client: one report in, one tidy frame out.

A pull is planned (``plan``), run (``runner``) and assembled (``assemble``), as docs/design.md
("Pulls") says; ``cache`` keeps final chunks of answers on disk.

Example:
    >>> import edgereports as er
    >>> client = er.ReportingClient(key, sandbox_url)
    >>> df = client.fetch(er.presets.byte_usage_subscriber(
    ...     account_id=acct, msisdn=numbers, start="2022-07-01", end="2022-07-08"))
    >>> sorted(df["msisdn"].unique()) == sorted(numbers)
    True
"""

from __future__ import annotations

from .cache import Cache
from .client import CSV, JSON, ReportingClient
from .reporting_service import ReportingServiceClient
from .results import Failure, FetchResult

__all__ = [
    "CSV",
    "JSON",
    "Cache",
    "Failure",
    "FetchResult",
    "ReportingClient",
    "ReportingServiceClient",
]
