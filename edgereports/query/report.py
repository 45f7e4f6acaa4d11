"""The ``Report`` builder: an immutable, chainable query DSL for the request object.

Example:
    >>> report = (Report(account_id="62c40843c7a1909709112345")
    ...           .between("2022-07-07T09:50:00+05:30", "2022-07-08T09:50:00+05:30")
    ...           .granularity("DAY")
    ...           .metric("time_usage_seconds", "COUNT"))
    >>> list(report.to_request())
    ['start_date_time', 'end_date_time', 'granularity', 'dimension_filter_clauses', 'metrics']
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from ..errors import QueryError
from .terms import (
    Clause,
    Expression,
    Filter,
    Metric,
    expect_keys,
    expect_list,
    expressions,
)
from .timegrid import is_relative, relative_end, resolve_relative
from .times import (
    NOW,
    TimeLike,
    format_offset,
    is_keyword,
    parse_timestamp,
    parse_tz,
    render_time,
)
from .versions import check_foreign, check_version, stamps_at_end, vocabulary
from .vocabulary import RESERVED_COLUMNS, check_name, check_token, quiet

__all__ = ["REQUEST_KEYS", "Report"]

#: The keys of the request object in their documented order (the order ``to_request`` writes).
REQUEST_KEYS = (
    "start_date_time",
    "end_date_time",
    "granularity",
    "dimensions",
    "dimension_filter_clauses",
    "metrics",
)


@dataclass(frozen=True)
class Report:
    """An immutable report request; every method returns a new report.

    Args:
        account_id: written as the first EXACT filter of the first clause (optional).
        tz: the zone in which ``date`` values mean midnight (default UTC).
        strict: unknown metric, dimension, granularity or keyword names are errors instead of
            warnings.
        api_version: the API version the report is written for (``"v1"`` or ``"v2"``): which
            names it knows and which rules it checks. Never sent; a client of the other
            version refuses the report.

    Example:
        >>> Report(account_id="A").now().metric("uplink_bandwidth", "AVG").to_request()
        {'start_date_time': 'NOW', 'end_date_time': 'NOW', 'dimension_filter_clauses': \
[{'filters': [{'dimension_name': 'account_id', 'operator': 'EXACT', 'expressions': ['A']}]}], \
'metrics': [{'name': 'uplink_bandwidth', 'aggregation_type': 'AVG'}]}
    """

    account_id: str | int | None = None
    start: TimeLike | None = None
    end: TimeLike | None = None
    grain: str | None = None
    dimensions: tuple[str, ...] | None = None
    clauses: tuple[Clause, ...] | None = None
    metrics: tuple[Metric, ...] = ()
    tz: str | None = None
    strict: bool = False
    api_version: str = "v1"
    #: The relative dates the range was written with (``("7d", "today")``), kept so that a
    #: client can resolve them again against the service's present (:meth:`at`).
    relative: tuple[str | None, str | None] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        check_version(self.api_version)
        if self.account_id is not None:
            expressions(self.account_id, "account_id")
        if self.tz is not None:
            parse_tz(self.tz)
        texts = list(self.relative or (None, None))
        for i, name in enumerate(("start", "end")):  # resolved now, on the local clock
            value = getattr(self, name)
            if is_relative(value):
                texts[i] = str(value).strip()
                object.__setattr__(self, name, resolve_relative(value, self.zone))
        object.__setattr__(self, "relative", tuple(texts) if any(texts) else None)

    # -- building -------------------------------------------------------------------------

    def between(self, start: TimeLike, end: TimeLike) -> Report:
        """Set the range: datetimes (tz-aware), dates, ISO-8601 strings, relative dates or
        time keywords.

        Relative dates (``today``, ``yesterday``, ``tomorrow``, ``7d``, ``4w``, ``24h``) resolve
        now, in the report's zone (set :meth:`timezone` first): ``Nd``/``Nw`` are midnights
        counted back from today's, ``Nh`` whole hours counted back from the current one. The
        range is half-open, so ``between("7d", "today")`` is the seven whole days before
        today and ``end="tomorrow"`` includes today so far. They are not the service's
        ``LAST ...`` keywords, which stay available.

        Example:
            >>> r = Report().between("7d", "today")
            >>> (r.end - r.start).days
            7
        """
        report = dataclasses.replace(self, start=start, end=end, relative=None)
        report._check_range(warn=True)
        return report

    def at(self, now: datetime | None) -> Report:
        """The report with its relative dates resolved against ``now``.

        A client calls it with the service's present, so that ``"7d"`` means seven days back
        from the service's today, not the local machine's; ``None`` is the local clock. A
        report without relative dates is returned as it is.

        Example:
            >>> from datetime import UTC, datetime
            >>> r = Report().between("7d", "today").at(datetime(2022, 7, 8, 10, tzinfo=UTC))
            >>> r.start.isoformat(), r.end.isoformat(), r.relative
            ('2022-07-01T00:00:00+00:00', '2022-07-08T00:00:00+00:00', ('7d', 'today'))
        """
        if not self.relative:
            return self
        zone = self.zone
        start, end = (
            resolve_relative(text, zone, now) if text else value
            for text, value in zip(self.relative, (self.start, self.end), strict=True)
        )
        return dataclasses.replace(self, start=start, end=end)

    def now(self) -> Report:
        """The current five-minute window (``NOW`` to ``NOW``)."""
        return self.between(NOW, NOW)

    def last(self, period: str) -> Report:
        """A trailing window: ``last("7d")`` is ``between("7d", "today")`` (``last("24h")``
        ends at the current hour), while ``last("DAY")`` is the service's ``LAST DAY`` to
        ``NOW``.

        Example:
            >>> Report().last("DAY").start
            'LAST DAY'
        """
        end = relative_end(period)
        if end is not None:
            return self.between(period, end)
        return self.between(f"LAST {period.strip().upper()}", NOW)

    def timezone(self, tz: str | tzinfo) -> Report:
        """Set the zone for ``date`` values: an offset (``+05:30``), ``UTC`` or an IANA name."""
        zone = parse_tz(tz)
        if isinstance(tz, str):
            name = tz.strip()
        elif isinstance(zone, ZoneInfo):
            name = zone.key
        else:
            offset = zone.utcoffset(None)
            name = format_offset(offset) if offset is not None else ""
        if not name:
            raise QueryError(f"timezone {tz!r} has no fixed offset or zone name", field="timezone")
        return dataclasses.replace(self, tz=name).at(None)  # relative dates: the new zone's

    def granularity(self, value: str | None) -> Report:
        """Set the bucket size (``DAY``, ``HOUR``, ...); ``None`` removes it."""
        if value is not None:
            known = vocabulary(self.api_version).granularities
            check_token(value, "granularity", known, strict=self.strict)
        return dataclasses.replace(self, grain=value)

    def by(self, *dimensions: str | Iterable[str]) -> Report:
        """Group by dimensions, in order; ``by()`` with none writes an empty list."""
        names: list[object] = []
        for item in dimensions:
            names.extend([item] if isinstance(item, str) else list(item))
        known = vocabulary(self.api_version).dimensions
        for i, n in enumerate(names):
            if n in RESERVED_COLUMNS:
                raise QueryError(
                    f"dimensions[{i}] {n!r} is the name of a frame column; a dimension cannot "
                    f"be named {', '.join(RESERVED_COLUMNS)} (known dimensions: "
                    f"{', '.join(known)})",
                    field=f"dimensions[{i}]",
                )
            if isinstance(n, str):
                check_foreign(n, f"dimensions[{i}]", known, self.api_version)
        checked = tuple(
            check_name(n, f"dimensions[{i}]", known, strict=self.strict)
            for i, n in enumerate(names)
        )
        if len(set(checked)) != len(checked):
            raise QueryError(f"dimensions lists a name twice: {list(checked)}", field="dimensions")
        return dataclasses.replace(self, dimensions=checked)

    def where(self, **filters: Expression | Iterable[Expression]) -> Report:
        """Add EXACT filters to the first clause; a dimension filtered again is replaced.

        Example:
            >>> Report().where(msisdn=["919876543210", 919876543211]).clauses[0].filters[0]
            Filter(dimension_name='msisdn', expressions=('919876543210', 919876543211), \
operator='EXACT')
        """
        report = self
        for dimension, values in filters.items():
            report = report.filter(dimension, values)
        return report

    def filter(
        self,
        dimension: str,
        values: Expression | Iterable[Expression],
        *,
        operator: str = "EXACT",
        clause: int = 0,
    ) -> Report:
        """Add a filter to clause number ``clause`` (``len(clauses)`` starts a new clause)."""
        clauses = list(self.clauses or ())
        if not 0 <= clause <= len(clauses):
            raise QueryError(
                f"clause {clause} does not exist; use 0..{len(clauses)}",
                field="dimension_filter_clauses",
            )
        if clause == len(clauses):
            clauses.append(Clause())
        old = clauses[clause].filters
        same = [
            i for i, f in enumerate(old) if (f.dimension_name, f.operator) == (dimension, operator)
        ]
        index = same[0] if same else len(old)
        shift = 1 if clause == 0 and self.account_id is not None else 0
        field = f"dimension_filter_clauses[{clause}].filters[{index + shift}]"
        new = Filter.make(
            dimension, values, operator, field=field, strict=self.strict, version=self.api_version
        )
        kept = (*old[:index], new, *old[index + 1 :])
        clauses[clause] = Clause(kept)
        return dataclasses.replace(self, clauses=tuple(clauses))

    def metric(
        self,
        name: str | Metric,
        aggregation: str | None = None,
        *,
        percentile: int | float | None = None,
    ) -> Report:
        """Add a metric with an aggregation type, a PERCENTILE filter, or both.

        Example:
            >>> Report().metric("uplink_bandwidth", percentile=95).metrics[0].percentile
            95
        """
        index = len(self.metrics)
        read = functools.partial(Metric.from_dict, strict=self.strict, version=self.api_version)
        if isinstance(name, Metric):
            metric = read(name.to_dict(), f"metrics[{index}]")
        else:
            spec: dict[str, Any] = {"name": name}
            if aggregation is not None:
                spec["aggregation_type"] = aggregation
            if percentile is not None:
                spec["metric_filter_clauses"] = [
                    {"filters": [{"operator": "PERCENTILE", "comparison_value": percentile}]}
                ]
            metric = read(spec, f"metrics[{index}]")
        if metric in self.metrics:
            raise QueryError(
                f"metrics[{index}] repeats {metric.to_dict()}; each metric entry must differ",
                field=f"metrics[{index}]",
            )
        return dataclasses.replace(self, metrics=(*self.metrics, metric))

    # -- reading --------------------------------------------------------------------------

    @property
    def zone(self) -> tzinfo:
        """The report's time zone (UTC unless set)."""
        return parse_tz(self.tz)

    @property
    def is_now(self) -> bool:
        """True for a ``NOW`` to ``NOW`` report."""
        return self.start == NOW and self.end == NOW

    @property
    def stamps_at_end(self) -> bool:
        """True when the answer stamps each piece of the range at its end (v2), so that a
        window owns the stamps in ``(start, end]``; False when it stamps buckets at their
        start (v1), a window owning ``[start, end)``."""
        return stamps_at_end(self.api_version)

    @property
    def uses_keywords(self) -> bool:
        """True when the range is written with time keywords."""
        return is_keyword(self.start) or is_keyword(self.end)

    def time_range(self) -> tuple[datetime, datetime] | None:
        """The range as tz-aware datetimes in the caller's offsets; ``None`` for keywords."""
        if self.start is None or self.end is None or self.uses_keywords:
            return None
        start, end = self._rendered_times()
        return (
            parse_timestamp(start, "start_date_time"),
            parse_timestamp(end, "end_date_time"),
        )

    def filter_values(self, dimension: str) -> tuple[Expression, ...]:
        """All EXACT expressions for ``dimension`` across the clauses (``account_id`` too)."""
        values: list[Expression] = []
        if dimension == "account_id" and self.account_id is not None:
            values.append(self.account_id)
        for clause in self.clauses or ():
            for f in clause.filters:
                if f.dimension_name == dimension and f.operator == "EXACT":
                    values.extend(f.expressions)
        return tuple(values)

    def exact_filters(self) -> dict[str, Any]:
        """The EXACT filters as ``{dimension: value or values}``, ``account_id`` first.

        Example:
            >>> Report(account_id="A").where(msisdn=["91", "92"]).exact_filters()
            {'account_id': 'A', 'msisdn': ['91', '92']}
        """
        filters: dict[str, Any] = {}
        dims = ["account_id", *(f.dimension_name for c in self.clauses or () for f in c.filters)]
        for dim in dict.fromkeys(dims):
            values = list(dict.fromkeys(self.filter_values(dim)))
            if values:
                filters[dim] = values[0] if len(values) == 1 else values
        return filters

    def validate(self) -> Report:
        """Check the whole request; returns ``self``.

        Raises:
            QueryError: no metric, no range, a range in the wrong order, a keyword paired with
                a date, or a granularity on a ``NOW`` report.
        """
        if not self.metrics:
            raise QueryError(
                "metrics is empty; add one with .metric(name, aggregation), e.g. "
                ".metric('time_usage_seconds', 'COUNT')",
                field="metrics",
            )
        if self.start is None or self.end is None:
            raise QueryError(
                "no time range; call .between(start, end), .now() or .last('DAY')",
                field="start_date_time",
            )
        self._check_range()
        if self.is_now and self.grain is not None:
            raise QueryError(
                f"granularity {self.grain!r} cannot be used on a NOW query (a single current "
                "value); remove it with .granularity(None)",
                field="granularity",
            )
        return self

    def to_request(self) -> dict[str, Any]:
        """The JSON-ready request object, keys in the documented order.

        Raises:
            QueryError: see :meth:`validate`.
        """
        self.validate()
        start, end = self._rendered_times()
        out: dict[str, Any] = {"start_date_time": start, "end_date_time": end}
        if self.grain is not None:
            out["granularity"] = self.grain
        if self.dimensions is not None:
            out["dimensions"] = list(self.dimensions)
        clauses = [c.to_dict() for c in self.clauses] if self.clauses is not None else None
        if self.account_id is not None:
            account = Filter("account_id", (self.account_id,)).to_dict()
            if clauses:
                clauses[0]["filters"].insert(0, account)
            else:
                clauses = [{"filters": [account]}]
        if clauses is not None:
            out["dimension_filter_clauses"] = clauses
        out["metrics"] = [m.to_dict() for m in self.metrics]
        return out

    @classmethod
    def from_request(
        cls,
        request: Mapping[str, Any],
        *,
        strict: bool = False,
        api_version: str = "v1",
        warn: bool = True,
    ) -> Report:
        """Read a request object back into a report (the inverse of to_request).

        Args:
            request: the request dict.
            strict: unknown names are errors, not warnings.
            api_version: the API version the request is written for (``"v1"``, ``"v2"``).
            warn: warn of unknown names (False: read quietly, e.g. a request already checked).

        Raises:
            QueryError: the dict is not a valid request; the message names the field.

        Example:
            >>> Report.from_request({"start_date_time": "LAST DAY", "end_date_time": "NOW",
            ...     "metrics": [{"name": "ue_connections", "aggregation_type": "MAX"}]},
            ...     api_version="v2").api_version
            'v2'
        """
        if not warn:
            with quiet():
                return cls.from_request(request, strict=strict, api_version=api_version)
        d = expect_keys(request, "request", REQUEST_KEYS, required=("metrics",))
        report = cls(strict=strict, api_version=api_version)
        clauses = None
        if "dimension_filter_clauses" in d:
            items = expect_list(d["dimension_filter_clauses"], "dimension_filter_clauses")
            clauses = [
                Clause.from_dict(
                    c, f"dimension_filter_clauses[{i}]", strict=strict, version=api_version
                )
                for i, c in enumerate(items)
            ]
        account: Expression | None = None
        if clauses and clauses[0].filters:
            first = clauses[0].filters[0]
            if (first.dimension_name, first.operator) == ("account_id", "EXACT") and len(
                first.expressions
            ) == 1:
                account = first.expressions[0]
                clauses[0] = Clause(clauses[0].filters[1:])
                if clauses == [Clause()]:
                    clauses = None  # to_request writes the account's own clause back
        report = dataclasses.replace(
            report, account_id=account, clauses=None if clauses is None else tuple(clauses)
        )
        if "start_date_time" in d or "end_date_time" in d:
            for key in ("start_date_time", "end_date_time"):
                if not isinstance(d.get(key), str):
                    raise QueryError(
                        f"{key} must be an ISO-8601 timestamp string or a time keyword, "
                        f"got {d.get(key)!r}",
                        field=key,
                    )
            report = report.between(d["start_date_time"], d["end_date_time"])
        if "granularity" in d:
            report = report.granularity(d["granularity"])
        if "dimensions" in d:
            report = report.by(expect_list(d["dimensions"], "dimensions"))
        for i, m in enumerate(expect_list(d["metrics"], "metrics")):
            read = Metric.from_dict(m, f"metrics[{i}]", strict=strict, version=api_version)
            report = report.metric(read)
        return report

    # -- internals ------------------------------------------------------------------------

    def _rendered_times(self, *, warn: bool = False) -> tuple[str, str]:
        """Render start and end; ``warn`` once, when the range is set (not on every use)."""
        zone = self.zone
        return (
            render_time(self.start, "start_date_time", zone, strict=self.strict, warn=warn),
            render_time(self.end, "end_date_time", zone, strict=self.strict, warn=warn),
        )

    def _check_range(self, *, warn: bool = False) -> None:
        if self.start is None or self.end is None:
            return
        start, end = self._rendered_times(warn=warn)
        start_kw, end_kw = is_keyword(start), is_keyword(end)
        if start_kw != end_kw:
            raise QueryError(
                f"start_date_time {start!r} and end_date_time {end!r} mix a date with a time "
                "keyword; use dates on both sides, or a keyword such as start='LAST DAY', "
                "end='NOW'",
                field="start_date_time" if start_kw else "end_date_time",
            )
        if start_kw:
            if end != NOW and end != start:
                raise QueryError(
                    f"end_date_time {end!r} must be 'NOW' (e.g. start='LAST DAY', end='NOW')",
                    field="end_date_time",
                )
            if start == NOW and end != NOW:
                raise QueryError("start_date_time 'NOW' needs end 'NOW'", field="end_date_time")
            return
        begin = parse_timestamp(start, "start_date_time")
        finish = parse_timestamp(end, "end_date_time")
        if begin >= finish:
            raise QueryError(
                f"start_date_time {start!r} must be before end_date_time {end!r}: a range is "
                'half-open [start, end), so one day is between("2024-06-01", "2024-06-02")',
                field="start_date_time",
            )
