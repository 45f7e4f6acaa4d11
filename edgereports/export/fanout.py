"""What a report's identity is, and which of its values are rows (the fleet that changes).

A report's identity (what an export table holds) is its metrics, dimensions, granularity and
the filters it does not fan out over; the EXACT filter values of a dimension it groups by are
rows, which a job may add or remove (docs/export.md, "Fleets that change").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from .plan import ExportWindow, plan_export
from .reports import MAX_WINDOW_DAYS, ReportJob, default_window_days
from .values import Values, fanout_values, read_values, split_definition

__all__ = [
    "Churn",
    "Values",
    "backfill_windows",
    "churn",
    "fanout_values",
    "read_values",
    "shard_values",
    "split_definition",
    "values_minus",
    "values_plus",
    "window_report",
    "with_values",
]


def with_values(report: ReportJob, values: Mapping[str, Sequence[str]]) -> ReportJob:
    """``report`` restricted to ``values`` (by dimension), with windows as long as its rows
    allow (fewer values: longer windows, fewer requests)."""
    narrowed = report.report.where(**{dim: list(vals) for dim, vals in values.items()})
    days = min(MAX_WINDOW_DAYS, max(report.window_days, default_window_days(narrowed)))
    return dataclasses.replace(report, report=narrowed, window_days=days)


@dataclass(frozen=True)
class Churn:
    """How the job's fan-out values differ from those a table holds.

    Attributes:
        held: the values the table holds whole from the report's start (as recorded).
        retired: values whose rows the table keeps though no run fetches them any more.
        added: values of the job the table does not hold whole yet (to backfill).
        removed: values the table held that the job no longer asks for (their rows stay).
    """

    held: Values
    retired: Values
    added: Values
    removed: Values

    @property
    def keeps_others(self) -> bool:
        """True when writes must keep the rows of values they did not fetch."""
        return any(self.retired.values()) or any(self.removed.values())

    def after(self, backfilled: bool) -> tuple[Values, Values]:
        """The values held whole and retired once this run is written (with its backfill,
        when ``backfilled``)."""
        gone = {d: set(v) for d, v in self.removed.items()}
        new = {d: set(v) for d, v in self.added.items()} if backfilled else {}
        held = values_plus(values_minus(self.held, gone), self.added if backfilled else {})
        retired = values_minus(values_plus(self.retired, self.removed), new)
        return held, retired


def values_minus(values: Mapping[str, Sequence[str]], drop: Mapping[str, set[str]]) -> Values:
    out = {d: tuple(v for v in vals if v not in drop.get(d, set())) for d, vals in values.items()}
    return {d: v for d, v in out.items() if v}


def values_plus(values: Mapping[str, Sequence[str]], more: Mapping[str, Sequence[str]]) -> Values:
    out: dict[str, tuple[str, ...]] = {}
    for d in dict.fromkeys([*values, *more]):
        out[d] = tuple(dict.fromkeys([*values.get(d, ()), *more.get(d, ())]))
    return {d: v for d, v in out.items() if v}


def churn(
    report: ReportJob,
    held: Mapping[str, Sequence[str]] | None,
    retired: Mapping[str, Sequence[str]] | None = None,
) -> Churn:
    """Compare the report's fan-out values with those a table holds (``None``: a new table)
    and those it keeps the rows of (``retired``).

    Example:
        >>> from edgereports.export import load_job
        >>> report = load_job("nightly.toml").report("usage")  # three subscribers
        >>> c = churn(report, {"msisdn": ("91",)})  # a table that holds another one
        >>> len(c.added["msisdn"]), c.removed
        (3, {'msisdn': ('91',)})
    """
    now = fanout_values(report)
    if held is None:
        return Churn(held=now, retired={}, added={}, removed={})
    return Churn(
        held={d: tuple(v) for d, v in held.items()},
        retired={d: tuple(v) for d, v in (retired or {}).items() if v},
        added=values_minus(now, {d: set(v) for d, v in held.items()}),
        removed=values_minus(held, {d: set(v) for d, v in now.items()}),
    )


def backfill_windows(
    report: ReportJob, added: Values, begin: datetime, now: datetime
) -> tuple[ReportJob, tuple[ExportWindow, ...]]:
    """The report narrowed to the ``added`` values, and its windows from its start to
    ``begin`` (where the run's own windows, which fetch every value, start)."""
    narrowed = with_values(report, added)
    plan = plan_export(narrowed, None, now=now, until=begin)
    return narrowed, plan.windows


def shard_values(report: ReportJob, window: ExportWindow) -> Values | None:
    """The fan-out values the window's shard holds (``None`` for an unsharded window): a
    slice of the sorted values of the dimension with the most of them."""
    if window.shards <= 1:
        return None
    values = fanout_values(report)
    dim = max(values, key=lambda d: len(values[d]))
    vals = tuple(sorted(values[dim]))  # sorted: each shard's files cover a range of values
    size = -(-len(vals) // window.shards)
    return {dim: vals[window.shard * size : (window.shard + 1) * size]}


def window_report(report: ReportJob, window: ExportWindow) -> ReportJob:
    """The report a window fetches: narrowed to its shard's values when it has a shard."""
    values = shard_values(report, window)
    return report if values is None else with_values(report, values)
