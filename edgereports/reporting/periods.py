"""The other periods (or cohorts) of a comparison: which reports they are, checked before any
request.

``compare=`` names one period (the frame gains the comparison's columns), or a list of up to
:data:`~edgereports.query.periods.MAX_PERIODS` (one block of rows per period, named in a
``period`` column); ``compare_by={dimension: [base, other, ...]}`` compares cohorts over the
same range (the report pinned to the first value against each other one, named in a
``cohort`` column). The arithmetic of the periods is the time grid's
(:mod:`edgereports.query.periods`).

Example:
    >>> from edgereports.query import Report
    >>> report = Report(account_id="A").between("2024-07-01", "2024-07-08").granularity("DAY")
    >>> report = report.metric("time_usage_seconds", "COUNT")
    >>> plan = plan_comparison(report, ["previous_week", "previous_year_dow"], None)
    >>> for other in plan.others:
    ...     print(other.name, other.report.to_request()["start_date_time"])
    previous_week 2024-06-24T00:00:00+00:00
    previous_year_dow 2023-07-03T00:00:00+00:00
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from typing import Any

from ..errors import QueryError
from ..query import Report
from ..query.periods import (
    COMPARE_RULES,
    MAX_PERIODS,
    Shift,
    describe_rule,
    other_range,
    pair_shift,
    rule_shift,
)
from ..query.times import YEARS

__all__ = ["COMPARE_MODES", "Comparison", "Other", "plan_comparison"]

#: The named comparisons ``compare=`` takes (besides an explicit ``(start, end)``).
COMPARE_MODES = COMPARE_RULES
_ALLOWED = (
    f"{', '.join(map(repr, COMPARE_RULES))}, a (start, end) pair, or a list of up to "
    f"{MAX_PERIODS} of them"
)


@dataclass(frozen=True)
class Other:
    """One period (or cohort) a frame is compared with.

    Attributes:
        name: its name: the rule (``"previous_week"``), ``"START..END"`` for a range given by
            its dates, or the cohort's value; what the ``period`` (``cohort``) column holds.
        mode: the rule, ``"range"`` or ``"cohort"``.
        report: its report.
        start: its range's start (None for a range written with time keywords).
        end: its range's end.
        shift: how far back it lies (None for a cohort: the same range).
        cohort: the cohort's value (``compare_by``), else None.
    """

    name: str
    mode: str
    report: Report
    start: datetime | None
    end: datetime | None
    shift: Shift | None = None
    cohort: str | None = None

    @property
    def rule(self) -> str:
        """What the comparison does, in words."""
        if self.mode == "cohort":
            return f"the same range, {self.cohort}"
        return describe_rule(self.mode)


@dataclass(frozen=True)
class Comparison:
    """What a comparison compares: this period and the others.

    Attributes:
        report: this period's report (for ``compare_by``, pinned to the base cohort).
        others: the periods (or cohorts) it is compared with, in the order asked.
        start: this range's start (None for a range written with time keywords).
        end: this range's end.
        zone: the zone whose calendar the periods are counted on: the report's time zone, else
            the offset of its start.
        bucket: the bucket length, or None for a report without buckets (rows then meet by
            their rank in time within their series).
        at_end: the rows are stamped at the end of the piece they cover (v2).
        column: ``"period"`` (a list of periods), ``"cohort"`` (``compare_by``) or None (one
            period: the frame gains the comparison's columns only).
        by: the dimension of ``compare_by``.
        base: the base cohort's value.
    """

    report: Report
    others: tuple[Other, ...]
    start: datetime | None
    end: datetime | None
    zone: tzinfo
    bucket: timedelta | None
    at_end: bool = False
    column: str | None = None
    by: str | None = None
    base: str | None = None

    @property
    def mode(self) -> str:
        """The rule of a single period, else what the list holds (``"periods"``,
        ``"cohorts"``)."""
        if self.column is None:
            return self.others[0].mode
        return "periods" if self.column == "period" else "cohorts"


def plan_comparison(
    report: Report,
    compare: object,
    bucket: timedelta | None,
    *,
    compare_by: object = None,
) -> Comparison:
    """Check ``compare=`` (or ``compare_by=``) and build the other reports (before any request).

    Args:
        report: the report.
        compare: a rule (:data:`COMPARE_MODES`), ``(start, end)`` (any values
            :meth:`Report.between` takes), or a list of up to four of them; or None.
        bucket: the report's bucket length, or None.
        compare_by: ``{dimension: [base, other, ...]}``: the report pinned to ``base`` against
            it pinned to each other value (two to five values), over the same range.

    Raises:
        QueryError: an unknown value, too many periods, a period named twice, both arguments,
            a report ranged by time keywords (``NOW``, ``LAST ...``) for periods, SIM counts,
            or another period outside the years a request may name; the message names
            ``compare`` (``compare_by``) and what it takes.
    """
    if compare is not None and compare_by is not None:
        raise QueryError(
            "compare and compare_by cannot be combined: compare= sets other periods, "
            "compare_by= other cohorts over the same range",
            field="compare_by",
        )
    if report.metrics and all(m.name == "sim" for m in report.metrics):
        field = "compare" if compare is not None else "compare_by"
        raise QueryError(
            f"{field} works on time series and current values, not on SIM counts", field=field
        )
    if compare_by is not None:
        return _cohorts(report, compare_by, bucket)
    items = _periods(compare)
    span = report.time_range()
    if span is None:
        raise QueryError(
            "compare needs a report over a range of dates, not one written with time keywords "
            f"(NOW, LAST ...); got start={report.start!r}, end={report.end!r}",
            field="compare",
        )
    start, end = span
    zone = report.zone if report.tz is not None else start.tzinfo
    assert zone is not None
    others = tuple(_other(report, item, start, end, zone) for item in items)
    names = [o.name for o in others]
    if len(set(names)) != len(names):
        raise QueryError(f"compare names a period twice: {names}", field="compare")
    return Comparison(
        report,
        others,
        start,
        end,
        zone,
        bucket,
        report.stamps_at_end,
        column="period" if isinstance(compare, list) else None,
    )


def _periods(compare: object) -> list[object]:
    """The periods ``compare`` names, each a rule or a ``(start, end)`` pair."""
    if isinstance(compare, list):
        if not 1 <= len(compare) <= MAX_PERIODS:
            raise QueryError(
                f"compare takes 1 to {MAX_PERIODS} periods, got {len(compare)}", field="compare"
            )
        for item in compare:
            _check_period(item, compare)
        return list(compare)
    _check_period(compare, compare)
    return [compare]


def _check_period(item: object, compare: object) -> None:
    if isinstance(item, str):
        if item not in COMPARE_RULES:
            raise QueryError(f"compare must be {_ALLOWED}, got {compare!r}", field="compare")
        return
    if not (isinstance(item, Sequence) and len(item) == 2):
        raise QueryError(f"compare must be {_ALLOWED}, got {compare!r}", field="compare")
    if all(isinstance(x, str) and x in COMPARE_RULES for x in item):
        raise QueryError(
            f"compare: several periods are a list, compare={list(item)!r}; a tuple is one "
            f"(start, end) range, got {item!r}",
            field="compare",
        )


def _other(report: Report, item: object, start: datetime, end: datetime, zone: tzinfo) -> Other:
    if isinstance(item, str):
        try:
            shift = rule_shift(item, start, end, zone)
            low, high = other_range(start, end, shift, zone)
            if item == "previous_period":
                high = start.astimezone(zone)  # the period just before: it ends where this starts
            other = report.between(low, high)
        except (QueryError, OverflowError):  # a period out of the years a request may name
            raise QueryError(
                f"compare={item!r} of this range reaches outside the years "
                f"{YEARS[0]} to {YEARS[1]}",
                field="compare",
            ) from None
        return Other(item, item, other, low, high, shift)
    assert isinstance(item, Sequence)
    try:
        other = report.between(item[0], item[1])
    except QueryError as exc:
        raise QueryError(f"compare: {exc}", field="compare") from None
    span = other.time_range()
    if span is None:
        raise QueryError(
            f"compare takes dates, not time keywords; got {tuple(item)!r}", field="compare"
        )
    name = f"{_text(item[0])}..{_text(item[1])}"
    return Other(name, "range", other, span[0], span[1], pair_shift(start, span[0], zone))


def _text(value: object) -> str:
    return value.isoformat() if isinstance(value, date | datetime) else str(value).strip()


def _cohorts(report: Report, compare_by: object, bucket: timedelta | None) -> Comparison:
    """The comparison of ``compare_by={dimension: [base, other, ...]}``."""
    allowed = (
        "compare_by must be {dimension: [base, other, ...]} with one dimension and 2 to "
        f"{MAX_PERIODS + 1} distinct values"
    )
    if not (isinstance(compare_by, Mapping) and len(compare_by) == 1):
        raise QueryError(f"{allowed}, got {compare_by!r}", field="compare_by")
    ((dimension, values),) = compare_by.items()
    listed = [values] if isinstance(values, str | int) else values
    if not (
        isinstance(dimension, str)
        and isinstance(listed, Sequence)
        and 2 <= len(listed) <= MAX_PERIODS + 1
        and all(isinstance(v, str | int) and not isinstance(v, bool) for v in listed)
        and len({str(v) for v in listed}) == len(listed)
    ):
        raise QueryError(f"{allowed}, got {compare_by!r}", field="compare_by")
    try:
        pinned = [_pin(report, dimension, value) for value in listed]
    except QueryError as exc:
        raise QueryError(f"compare_by: {exc}", field="compare_by") from None
    span = report.time_range()
    start, end = span if span is not None else (None, None)
    zone: Any = report.zone if report.tz is not None or start is None else start.tzinfo
    others = tuple(
        Other(str(v), "cohort", r, start, end, cohort=str(v))
        for v, r in zip(listed[1:], pinned[1:], strict=True)
    )
    return Comparison(
        pinned[0],
        others,
        start,
        end,
        zone,
        bucket,
        report.stamps_at_end,
        column="cohort",
        by=dimension,
        base=str(listed[0]),
    )


def _pin(report: Report, dimension: str, value: str | int) -> Report:
    """The report filtered to one value of ``dimension`` (an earlier filter on it replaced)."""
    if dimension == "account_id":
        return dataclasses.replace(report, account_id=value)
    return report.where(**{dimension: [value]})
