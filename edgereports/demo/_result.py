"""What the demo made: one outcome per preset, and the whole run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from ._plan import PlannedReport

__all__ = ["DemoResult", "ReportOutcome", "incident_text"]


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
        incidents: what the demo injected into its sandbox (the ground truth of the health
            flags; empty on the live service).
    """

    out: Path
    index: Path
    source: str
    outcomes: list[ReportOutcome] = field(default_factory=list)
    seconds: float = 0.0
    clock: datetime | None = None
    health: pd.DataFrame | None = None
    health_error: str | None = None
    incidents: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no preset failed (skipped ones do not count)."""
        return all(o.error is None for o in self.outcomes)


def incident_text(incident: Mapping[str, Any]) -> str:
    """One line for an injected incident.

    Example:
        >>> incident_text({"kind": "sim_idle", "subject": "91987", "hours": 48,
        ...                "start": "2024-03-11T18:00:00+00:00"})
        'sim_idle of 91987 from 2024-03-11 18:00Z for 48 h'
    """
    start = str(incident["start"]).replace("T", " ").replace(":00+00:00", "Z")
    return f"{incident['kind']} of {incident['subject']} from {start} for {incident['hours']} h"
