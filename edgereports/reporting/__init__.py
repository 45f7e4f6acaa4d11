"""The reporting client: run/fetch, window planning, fan-out, concurrency and progress.

Example:
    >>> import edgereports as er
    >>> client = er.ReportingClient("my-key", "https://reports.example")  # doctest: +SKIP
    >>> df = client.fetch(er.presets.byte_usage_subscriber(  # doctest: +SKIP
    ...     account_id="A", msisdn=subscribers, start="2024-01-01", end="2025-01-01"))
"""

from __future__ import annotations

from .client import CSV, JSON, REPORT_PATH, ReportingClient
from .fanout import Branch, branches, metric_groups
from .results import Failure, FetchResult
from .windows import (
    BUCKETS,
    DEFAULT_WINDOWS,
    SIM_COUNT_WINDOW,
    Window,
    bucket_of,
    plan_report,
    plan_windows,
)

__all__ = [
    "BUCKETS",
    "CSV",
    "DEFAULT_WINDOWS",
    "JSON",
    "REPORT_PATH",
    "SIM_COUNT_WINDOW",
    "Branch",
    "Failure",
    "FetchResult",
    "ReportingClient",
    "Window",
    "branches",
    "bucket_of",
    "metric_groups",
    "plan_report",
    "plan_windows",
]
