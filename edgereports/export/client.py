"""The export's reporting client: what a run needs of one, and the one a job makes.

A run fetches through any object with :meth:`~edgereports.ReportingClient.fetch` (tests and
orchestrators pass their own); by default it builds a :class:`~edgereports.ReportingClient`
from the job's ``[connection]`` and the environment (:func:`make_client`).
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import TYPE_CHECKING, Protocol

from ..config import ENV_VARS, Settings
from ..errors import ConfigError
from ..reporting import ReportingClient
from ..reporting.plan import branches
from .job import Job
from .reports import ReportJob

if TYPE_CHECKING:
    import pandas as pd

    from ..query import Report

__all__ = ["Fetcher", "make_client", "window_weight"]


class Fetcher(Protocol):
    """What the run needs of a client: :meth:`ReportingClient.fetch`."""

    def fetch(self, report: Report, *, window: timedelta | None = None) -> pd.DataFrame: ...


def make_client(job: Job) -> ReportingClient:
    """Build the reporting client of a job from its connection and the environment.

    With a ``rate_limit`` (the job's, else ``EDGEREPORTS_RATE_LIMIT``) the client paces its
    requests with the shared budget of its API key at the service's host
    (:meth:`~edgereports.ReportingClient.share_budget`, in the job's ``budget_dir``, else
    ``EDGEREPORTS_BUDGET_DIR``, else the per-user cache directory): every process using the key
    there shares it, whatever its job file.

    Raises:
        ConfigError: no API key or no reporting URL is configured.
    """
    settings = Settings.from_env()
    conn = job.connection
    where = str(job.source or job.name)
    key = conn.api_key or os.environ.get(conn.api_key_env, "").strip() or None
    if not key:
        raise ConfigError(
            f"{where}: no API key; set the environment variable {conn.api_key_env} "
            "(or name another one with [connection] api_key_env)"
        )
    url = conn.reporting_url or settings.reporting_url
    if not url:
        raise ConfigError(
            f"{where}: no reporting URL; set {ENV_VARS['reporting_url']} or "
            "[connection] reporting_url"
        )
    timeout = conn.timeout if conn.timeout is not None else settings.timeout
    client = ReportingClient(
        api_key=key,
        reporting_url=url,
        max_workers=job.max_workers,
        progress=False,
        timeout=(min(5.0, timeout), timeout),
    )
    rate = job.rate_limit if job.rate_limit is not None else settings.rate_limit
    if rate is not None:  # one budget for every process using the key
        client.share_budget(rate, directory=job.budget_dir or settings.budget_dir)
    return client


def window_weight(report: ReportJob, workers: int) -> int:
    """The requests one window of ``report`` sends at once (its fan-out, capped)."""
    return max(1, min(workers, len(branches(report.report))))
