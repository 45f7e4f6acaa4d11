"""The finality-aware chunk cache of :class:`~edgereports.ReportingClient`.

``grid`` cuts ranges into chunks of a fixed UTC grid and says which are final; ``keys`` says
what a chunk is keyed by and which parts may be cached; ``trust`` which present and which key
the cache believes; ``store`` keeps the rows on disk: ``segments`` (the Arrow files and their
checks) and ``index`` (SQLite); ``cache`` is the directory a client is given; ``pull`` serves
one pull's parts from it, and ``writer`` stores what the pull fetched.
"""

from __future__ import annotations

from .cache import Cache, default_directory, open_cache
from .grid import DEFAULT_HORIZONS, check_data_lag, check_horizon
from .pull import CachedPull, CacheStats

__all__ = [
    "DEFAULT_HORIZONS",
    "Cache",
    "CacheStats",
    "CachedPull",
    "check_data_lag",
    "check_horizon",
    "default_directory",
    "open_cache",
]
