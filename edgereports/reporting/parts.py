"""The parts of a pull (one request each: a branch in a window) and their assembly."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..errors import EdgeReportsError
from ..query import Report
from .assemble import combine
from .fanout import Branch, branches
from .results import Failure
from .windows import Window, plan_report

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Part", "assemble", "plan_parts"]


@dataclass(frozen=True)
class Part:
    """One request of a pull: a report's branch (fan-out value) in one window."""

    report: int
    branch: int
    fan: Branch
    window: Window | None
    sent: Report

    def __str__(self) -> str:
        items = [str(self.window)] if self.window is not None else []
        if self.fan.values or self.fan.metrics is not None:
            items.append(str(self.fan))
        return "; ".join(items) or "report"


def _windowed(report: Report, window: Window | None) -> Report:
    """The report restricted to ``window``; the first and last keep the user's own bounds."""
    if window is None or window.count == 1:
        return report
    start = report.start if window.index == 0 else window.start
    end = report.end if window.index == window.count - 1 else window.end
    assert start is not None and end is not None
    return report.between(start, end)


def plan_parts(index: int, report: Report, window: timedelta | None) -> list[list[Part]]:
    """The requests of report number ``index``: per fan-out branch, one per window.

    Raises:
        InputError: ``window`` is not a whole number of the report's buckets.
    """
    plan = []
    for b, fan in enumerate(branches(report)):
        windows = plan_report(fan.report, window)
        if windows is None:
            plan.append([Part(index, b, fan, None, fan.report)])
        else:
            plan.append([Part(index, b, fan, w, _windowed(fan.report, w)) for w in windows])
    return plan


def assemble(
    plan: list[list[Part]], outcomes: list[Any], request: dict[str, Any]
) -> tuple[pd.DataFrame | None, list[Failure]]:
    """Concatenate the owned rows of every part (branch by branch, windows in order), sorted
    as one answer would be; a failed part contributes no row and one failure.

    ``outcomes`` (per part its frame or its error) is emptied once read: the parts' frames
    are released as soon as they are concatenated.
    """
    failures: list[Failure] = []
    frames = []
    parts = [p for branch in plan for p in branch]
    for part, result in zip(parts, outcomes, strict=True):
        if isinstance(result, BaseException):
            failures.append(_failure(part, result))
        else:
            frames.append(result)
    outcomes.clear()
    if not frames:
        return None, failures
    frame = combine(frames, request, ordered=len(parts) == 1)
    frame.attrs["request"] = copy.deepcopy(request)
    return frame, failures


def _failure(part: Part, error: BaseException) -> Failure:
    try:
        sent = part.sent.to_request()
    except EdgeReportsError:  # pragma: no cover - validated before sending
        sent = {}
    return Failure(
        report=part.report,
        request=sent,
        window=part.window,
        values=dict(part.fan.values),
        metrics=part.fan.metrics,
        error=error,
    )
