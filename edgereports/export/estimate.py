"""What a plan costs before it runs: requests, rows and the time at the job's request budget.

A window sends one request per fan-out value (subscriber, site...) and metric group for each
piece the client cuts it into (the export forces its window length, so one piece when the
window is at most a year); its rows are values x buckets x metrics at most.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from datetime import timedelta

from ..reporting.plan import plan_parts
from .fanout import fanout_values, window_report
from .plan import ExportWindow, ReportPlan
from .reports import ReportJob

__all__ = ["Cost", "estimate", "format_duration", "priced"]


@dataclass(frozen=True)
class Cost:
    """The requests and rows (at most) of some windows."""

    requests: int = 0
    rows: int = 0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.requests + other.requests, self.rows + other.rows)


def estimate(report: ReportJob, windows: tuple[ExportWindow, ...] | list[ExportWindow]) -> Cost:
    """The requests and rows of ``report``'s ``windows``."""
    if report.ledger is not None:
        return Cost(*report.ledger.cost(windows))
    total = Cost()
    seen: dict[tuple[object, ...], Cost] = {}
    for window in windows:
        sent = window_report(report, window)
        values = fanout_values(sent)
        count = math.prod(len(v) for v in values.values()) if values else 1
        key = (window.end - window.start, window.start.time(), window.end.time(), count)
        if key not in seen:
            one = sent.report.where(**{d: [v[0]] for d, v in values.items() if v})
            parts = plan_parts(
                0, one.between(window.start, window.end), timedelta(days=sent.window_days)
            )
            per_value = sum(len(p) for p in parts)
            buckets = max(1, math.ceil((window.end - window.start) / report.bucket))
            metrics = 1 if report.shape == "sim_count" else len(one.metrics)
            seen[key] = Cost(per_value * count, count * buckets * metrics)
        total += seen[key]
    return total


def priced(report: ReportJob, plan: ReportPlan, backfilled: ReportJob | None = None) -> ReportPlan:
    """``plan`` with its requests and rows (its own windows, and the backfill's of the report
    narrowed to the added values, ``backfilled``)."""
    cost = estimate(report, plan.windows)
    if plan.backfill:
        cost += estimate(backfilled or report, plan.backfill)
    return dataclasses.replace(plan, requests=cost.requests, rows=cost.rows)


def format_duration(seconds: float) -> str:
    """Seconds as ``"2 h 05 min"``, ``"4 min 10 s"`` or ``"12 s"``.

    Example:
        >>> format_duration(7500), format_duration(250), format_duration(12.4)
        ('2 h 05 min', '4 min 10 s', '12 s')
    """
    whole = round(seconds)
    if whole >= 3600:
        return f"{whole // 3600} h {whole % 3600 // 60:02d} min"
    if whole >= 60:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole} s"
