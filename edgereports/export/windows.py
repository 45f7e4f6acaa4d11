"""What the Parquet and the Delta run do alike: plan a report, fetch and label a window."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from .client import Fetcher
from .estimate import priced
from .fanout import Churn, Values, backfill_windows, churn, window_report
from .plan import ExportWindow, ReportPlan, RunScope
from .reports import ReportJob

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["contiguous_end", "fetch_window", "plan_report", "window_metadata"]


def plan_report(
    report: ReportJob,
    scope: RunScope,
    watermark: datetime | None,
    held: Values | None,
    retired: Values,
    damaged: Sequence[date] = (),
) -> tuple[ReportPlan, Churn, ReportJob]:
    """The priced plan of ``report`` in this run, how its fan-out values changed since the
    ``held`` ones were written, and the report narrowed to the added values.

    An incremental run backfills the added values alone, from the report's start to where its
    own windows begin; a first run, a full refresh and a unit fetch every value anyway.
    """
    plan = scope.plan(report, watermark, damaged)
    change = churn(report, held, retired)
    narrowed = report
    if change.added and watermark is not None and scope.unit is None and not scope.full_refresh:
        narrowed, windows = backfill_windows(report, change.added, plan.begin, scope.now)
        added = sum(len(v) for v in change.added.values())
        plan = dataclasses.replace(plan, backfill=windows, added=added)
    return priced(report, plan, narrowed), change, narrowed


def fetch_window(client: Fetcher, report: ReportJob, window: ExportWindow) -> pd.DataFrame:
    """Fetch one window: its shard's values only, through a client of the report's API version.

    Raises:
        EdgeReportsError: the fetch failed.
    """
    sent = window_report(report, window)
    version = sent.report.api_version
    if getattr(client, "api_version", version) != version:  # a v2 report of a v1 job's client
        client = client.for_version(version)  # type: ignore[attr-defined]
    return client.fetch(
        sent.for_window(window.start, window.end), window=timedelta(days=sent.window_days)
    )


def window_metadata(report: ReportJob, window: ExportWindow) -> dict[str, Any]:
    """The facts stored with a window's data: the report, the request sent (no secret), the
    window."""
    sent = window_report(report, window)
    return {
        "report": report.name,
        "request": sent.for_window(window.start, window.end).to_request(),
        "window": [window.start.isoformat(), window.end.isoformat()],
    }


def contiguous_end(mark: datetime, ranges: Iterable[tuple[datetime, datetime]]) -> datetime:
    """``mark`` moved over the ``(start, end)`` ranges written whole, as far as they chain."""
    whole, moved = list(ranges), True
    while moved:
        moved = False
        for start, end in whole:
            if start <= mark < end:
                mark, moved = end, True
    return mark
