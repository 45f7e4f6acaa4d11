"""What a plan costs before it runs: requests, rows and the time at the job's request budget.

A window sends one request per fan-out value (subscriber, site...) and metric group for each
piece the client cuts it into (the export forces its window length, so one piece when the
window is at most a year); its rows are values x buckets x metrics at most.
"""

from __future__ import annotations

import dataclasses
import math
from datetime import timedelta

from .._dependencies import lazy_import
from .fanout import fanout_values, window_report
from .plan import ReportPlan
from .reports import ReportJob

_plan = lazy_import("edgereports.reporting.plan")


__all__ = ["format_duration", "priced"]


def priced(report: ReportJob, plan: ReportPlan, backfilled: ReportJob | None = None) -> ReportPlan:
    """``plan`` with its requests and rows (its own windows, and the backfill's of the report
    narrowed to the added values, ``backfilled``)."""
    requests = rows = 0
    for sender, windows in ((report, plan.windows), (backfilled or report, plan.backfill)):
        seen: dict[tuple[object, ...], tuple[int, int]] = {}
        for window in windows:
            sent = window_report(sender, window)
            values = fanout_values(sent)
            count = math.prod(len(v) for v in values.values()) if values else 1
            key = (window.end - window.start, window.start.time(), window.end.time(), count)
            if key not in seen:
                one = sent.report.where(**{d: [v[0]] for d, v in values.items() if v})
                parts = _plan.plan_parts(
                    0, one.between(window.start, window.end), timedelta(days=sent.window_days)
                )
                per_value = sum(len(p) for p in parts)
                buckets = max(1, math.ceil((window.end - window.start) / sender.bucket))
                metrics = 1 if sender.shape == "sim_count" else len(one.metrics)
                seen[key] = (per_value * count, count * buckets * metrics)
            requests += seen[key][0]
            rows += seen[key][1]
    return dataclasses.replace(plan, requests=requests, rows=rows)


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
