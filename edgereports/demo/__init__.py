"""The ``edgereports demo`` main job: every preset, end to end, into Parquet, PNG charts and HTML.

Without settings the demo starts the local sandbox in-process (fixed seed and clock, so the
output is the same on every run); with ``EDGEREPORTS_API_KEY`` and
``EDGEREPORTS_REPORTING_URL`` set it reports on the live service instead (give the account and
subscribers on the command line).

Example:
    >>> from edgereports.demo import run_demo
    >>> result = run_demo("demo-output", sandbox=True, echo=lambda line: None)
    >>> result.index, result.ok
    (PosixPath('demo-output/index.html'), True)
"""

from __future__ import annotations

from ..page.summary import summary_table
from ._plan import DEMO_CLOCK, PlannedReport, Subjects, plan_reports, range_end
from ._result import DemoResult, ReportOutcome
from ._run import run_demo

__all__ = [
    "DEMO_CLOCK",
    "DemoResult",
    "PlannedReport",
    "ReportOutcome",
    "Subjects",
    "plan_reports",
    "range_end",
    "run_demo",
    "summary_table",
]
