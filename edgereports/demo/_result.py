"""What the demo made: one outcome per preset, and the whole run."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from ._plan import PlannedReport

__all__ = ["DemoResult", "ReportOutcome"]


@dataclass
class ReportOutcome:
    """What the demo made of one preset.

    Attributes:
        plan: the planned preset.
        frame: the fetched frame (None when skipped or failed).
        parquet: the frame's Parquet file.
        chart: the chart's PNG file.
        seconds: time spent fetching.
        error: the error's text when the fetch failed (or part of it).
    """

    plan: PlannedReport
    frame: pd.DataFrame | None = None
    parquet: Path | None = None
    chart: Path | None = None
    seconds: float = 0.0
    error: str | None = None


@dataclass
class DemoResult:
    """The demo's output.

    Attributes:
        out: the output directory.
        index: the HTML page.
        source: where the data came from (sandbox or live service, no key).
        outcomes: one per preset, in the catalogue's order.
        seconds: the whole run's duration.
        clock: the service's clock as its last answer stated it (None before any answer).
        health: the health flags of the account's devices over the daily presets' range
            (None when they could not be judged: ``health_error`` says why).
        health_error: why there are no health flags, or None.
    """

    out: Path
    index: Path
    source: str
    outcomes: list[ReportOutcome] = field(default_factory=list)
    seconds: float = 0.0
    clock: datetime | None = None
    health: pd.DataFrame | None = None
    health_error: str | None = None

    @property
    def ok(self) -> bool:
        """True when no preset failed (skipped ones do not count)."""
        return all(o.error is None for o in self.outcomes)
