"""The results of a pull: failed parts and the per-report frames of :meth:`fetch_many`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..query.terms import Expression
from .plan import Window

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Failure", "FetchResult", "describe_failures"]


@dataclass(frozen=True)
class Failure:
    """One part of a pull that failed.

    Attributes:
        report: the position of the report in the call (0 for :meth:`fetch`).
        request: the failed part's request object (SPEC 2.8; no key in it).
        window: the part's window, or None when the report was sent whole.
        values: the fanned-out ``{dimension: value}`` of the part (empty when none).
        metrics: the part's metric names when the report was split by metric, else None.
        error: the error the part ended with.

    Example:
        >>> result = client.fetch_many([report_a, report_b])  # doctest: +SKIP
        >>> [(f.report, f.values, str(f.error)) for f in result.failures]  # doctest: +SKIP
    """

    report: int
    request: Mapping[str, Any]
    window: Window | None
    values: Mapping[str, Expression]
    metrics: tuple[str, ...] | None
    error: BaseException

    @property
    def part(self) -> str:
        """Which part failed, e.g. ``report 0, window 2/4 ..., msisdn=9198...``."""
        items = [f"report {self.report}"]
        if self.window is not None:
            items.append(str(self.window))
        items += [f"{dim}={value}" for dim, value in self.values.items()]
        if self.metrics is not None:
            items.append(f"metrics={','.join(self.metrics)}")
        return ", ".join(items)

    def __str__(self) -> str:
        return f"{self.part}: {type(self.error).__name__}: {self.error}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (what ``df.attrs["failures"]`` holds): no exception object.

        Example:
            >>> sorted(Failure(0, {}, None, {"msisdn": "91"}, None, OSError("x")).to_dict())
            ['error', 'message', 'metrics', 'part', 'report', 'request', 'values', 'window']
        """
        window = None
        if self.window is not None:
            window = [self.window.start.isoformat(), self.window.end.isoformat()]
        status = getattr(self.error, "status_code", None)
        return {
            "report": self.report,
            "part": self.part,
            "window": window,
            "values": dict(self.values),
            "metrics": list(self.metrics) if self.metrics is not None else None,
            "error": type(self.error).__name__,
            "message": str(self.error),
            "request": dict(self.request),
        } | ({"status_code": status} if isinstance(status, int) else {})


def describe_failures(failures: Sequence[Failure], parts: int) -> str:
    """The message of a :class:`~edgereports.errors.PartialFailure`: every failed part."""
    lines = [f"{len(failures)} of {parts} requests failed:"]
    lines += [f"  - {f}" for f in failures]
    return "\n".join(lines)


@dataclass
class FetchResult:
    """What :meth:`ReportingClient.fetch_many` returns.

    Attributes:
        frames: one frame per report, in order; None for a report none of whose parts
            succeeded (its failures say why).
        failures: every failed part, in plan order.

    Example:
        >>> result = client.fetch_many([report_a, report_b])  # doctest: +SKIP
        >>> frame_a, frame_b = result.frames                  # doctest: +SKIP
    """

    frames: list[pd.DataFrame | None]
    failures: list[Failure] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no part failed."""
        return not self.failures

    def failures_of(self, report: int) -> list[Failure]:
        """The failed parts of report number ``report``."""
        return [f for f in self.failures if f.report == report]
