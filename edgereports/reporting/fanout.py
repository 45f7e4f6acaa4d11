"""Fan-out: split one report into the requests the service can answer unambiguously.

A report grouped by a dimension whose filter lists several values is sent once per value (the
service echoes one value per answer); a report whose answer would hold two indistinguishable
parts (the same metric twice with PERCENTILE filters, or twice in a ``NOW`` report) is split
into requests whose metrics the answer tells apart.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

from ..query import Report
from ..terms import Expression, Metric

__all__ = ["Branch", "branches", "metric_groups"]


@dataclass(frozen=True)
class Branch:
    """One fan-out branch of a report.

    Attributes:
        report: the report this branch sends (one value per fanned-out dimension).
        values: the fanned-out ``(dimension, value)`` pairs (empty when none).
        metrics: the names of this branch's metrics when the report was split by metric.
        group: the metric group's position (0 when not split).
    """

    report: Report
    values: tuple[tuple[str, Expression], ...] = ()
    metrics: tuple[str, ...] | None = None
    group: int = 0

    def __str__(self) -> str:
        parts = [f"{dim}={value}" for dim, value in self.values]
        if self.metrics is not None:
            parts.append(f"metrics={','.join(self.metrics)}")
        return ", ".join(parts)


def _answer_key(metric: Metric, is_now: bool) -> tuple[str, str | None]:
    """How the answer names the metric: NOW answers by name alone; PERCENTILE has no agg."""
    if is_now:
        return (metric.name, None)
    if metric.percentile is not None:
        return (metric.name, None)
    return (metric.name, metric.aggregation_type)


def metric_groups(report: Report) -> list[tuple[Metric, ...]]:
    """Split the metrics into groups whose answers are distinguishable (first fit, in order).

    Example:
        >>> r = Report(account_id="A").now().metric("ue_connections", "MAX")
        >>> [len(g) for g in metric_groups(r.metric("ue_connections", "AVG"))]
        [1, 1]
    """
    groups: list[list[Metric]] = []
    keys: list[set[tuple[str, str | None]]] = []
    for metric in report.metrics:
        key = _answer_key(metric, report.is_now)
        for group, seen in zip(groups, keys, strict=True):
            if key not in seen:
                group.append(metric)
                seen.add(key)
                break
        else:
            groups.append([metric])
            keys.append({key})
    return [tuple(g) for g in groups]


def _fanned_values(report: Report) -> list[tuple[str, tuple[Expression, ...]]]:
    """The grouped-by dimensions whose EXACT filters list several distinct values."""
    out = []
    for dim in report.dimensions or ():
        seen: dict[str, Expression] = {}
        for value in report.filter_values(dim):
            seen.setdefault(str(value).strip(), value)
        if len(seen) > 1:
            out.append((dim, tuple(seen.values())))
    return out


def branches(report: Report) -> list[Branch]:
    """The requests ``report`` fans out into, in order (the report itself when none).

    Each fanned-out dimension's filter is replaced by one value (the product when several
    dimensions fan out); each metric group of :func:`metric_groups` is its own request.

    Example:
        >>> r = (Report(account_id="A").between("2022-07-07", "2022-07-08").granularity("DAY")
        ...      .by("msisdn").where(msisdn=["91", "92"]).metric("time_usage_seconds", "COUNT"))
        >>> [str(b) for b in branches(r)]
        ['msisdn=91', 'msisdn=92']
    """
    fanned = _fanned_values(report)
    groups = metric_groups(report)
    split = len(groups) > 1
    out: list[Branch] = []
    for combo in itertools.product(*[[(dim, v) for v in values] for dim, values in fanned]):
        base = report.where(**dict(combo)) if combo else report
        for index, group in enumerate(groups):
            sub = dataclasses.replace(base, metrics=group) if split else base
            names = tuple(m.name for m in group) if split else None
            out.append(Branch(sub, tuple(combo), names, index))
    return out
