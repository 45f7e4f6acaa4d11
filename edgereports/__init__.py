"""edgereports: connectivity reports of the edge-network service as tidy pandas DataFrames.

Example:
    >>> import edgereports as er
    >>> er.presets.time_usage_enterprise(
    ...     account_id="A", start="2022-07-07T09:50:00+05:30", end="2022-07-08T09:50:00+05:30"
    ... ).to_request()["granularity"]
    'DAY'

Names that need pandas or the HTTP stack are loaded on first use, so ``import edgereports``
stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import presets
from ._dependencies import lazy_names
from ._version import __version__
from .availability import availability  # light; eager, so it is never the submodule
from .config import Settings
from .errors import (
    ApiError,
    AuthError,
    ConfigError,
    EdgeReportsError,
    EdgeReportsWarning,
    EmptyResultWarning,
    ExportLocked,
    InputError,
    NotFoundError,
    PartialBucketWarning,
    PartialFailure,
    QueryError,
    RateLimitError,
    SchemaError,
    SyncTimeout,
    TopTalkerWarning,
    TransportError,
    VocabularyWarning,
)
from .health import health  # light too; eager, so `health` is never the submodule
from .query import Metric, Report, ServiceReport

if TYPE_CHECKING:  # the lazily loaded names, typed for checkers and IDEs
    from ._fetch import fetch, fetch_clients
    from .campaigns import Campaign, CampaignClient
    from .content import ContentClient
    from .export import read_export, run_export
    from .inventory import Inventory
    from .normalize import read_csv, to_frame
    from .normalize.buckets import bucket_start
    from .normalize.output import provenance
    from .normalize.wide import long, wide
    from .plotting import plot
    from .reporting import Failure, FetchResult, ReportingClient, ReportingServiceClient
    from .widgets import Explorer

# Public names loaded on first access: name -> module.
_LAZY: dict[str, str] = {
    "Campaign": ".campaigns",
    "CampaignClient": ".campaigns",
    "ContentClient": ".content",
    "Explorer": ".widgets",
    "Failure": ".reporting",
    "Inventory": ".inventory",
    "FetchResult": ".reporting",
    "ReportingClient": ".reporting",
    "ReportingServiceClient": ".reporting",
    "bucket_start": ".normalize.buckets",
    "fetch": "._fetch",
    "fetch_clients": "._fetch",
    "long": ".normalize.wide",
    "plot": ".plotting",
    "provenance": ".normalize.output",
    "read_csv": ".normalize",
    "read_export": ".export",
    "run_export": ".export",
    "to_frame": ".normalize",
    "wide": ".normalize.wide",
}

__all__ = [
    "ApiError",
    "AuthError",
    "Campaign",
    "CampaignClient",
    "ConfigError",
    "ContentClient",
    "EdgeReportsError",
    "EdgeReportsWarning",
    "EmptyResultWarning",
    "Explorer",
    "ExportLocked",
    "Failure",
    "FetchResult",
    "InputError",
    "Inventory",
    "Metric",
    "NotFoundError",
    "PartialBucketWarning",
    "PartialFailure",
    "QueryError",
    "RateLimitError",
    "Report",
    "ReportingClient",
    "ReportingServiceClient",
    "SchemaError",
    "ServiceReport",
    "Settings",
    "SyncTimeout",
    "TopTalkerWarning",
    "TransportError",
    "VocabularyWarning",
    "__version__",
    "availability",
    "bucket_start",
    "fetch",
    "fetch_clients",
    "health",
    "long",
    "plot",
    "presets",
    "provenance",
    "read_csv",
    "read_export",
    "run_export",
    "to_frame",
    "wide",
]


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals(), __all__)
