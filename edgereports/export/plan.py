"""The plan of a run: which windows of whole UTC days each report fetches.

The first run of a report fetches from its start date; later runs from the saved watermark
minus the lookback, rounded down to a UTC midnight. Every run stops at the end of the last
complete bucket (``--until`` can stop it earlier; it is rounded down to a UTC midnight). Windows
start on UTC midnights and span ``window_days`` days; only the last one may end inside a day
(an HOUR report's current day, up to its last complete hour), and that day is re-fetched whole
by the next run because the watermark then lies inside it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from ..errors import ConfigError
from ..query.timegrid import BUCKETS, bucket_starts, floor
from .client import Fetcher
from .reports import MAX_WINDOW_DAYS, ReportJob, to_utc
from .values import fanout_values

__all__ = [
    "UNIT",
    "ExportWindow",
    "ReportPlan",
    "RunScope",
    "cut",
    "floor_day",
    "midnight",
    "parse_shard",
    "plan_export",
    "stamp",
    "to_utc",
    "unit_start",
]

#: The ``reason`` of a unit's plan.
UNIT = "unit"

_DAY = BUCKETS["DAY"]  # the export's unit: a UTC day


@dataclass(frozen=True, order=True)
class ExportWindow:
    """A fetch window ``[start, end)`` in UTC; ``start`` is a UTC midnight.

    A window of a sharded plan fetches shard ``shard`` of ``shards`` of the report's fan-out
    values (its days are complete once every shard of the same range is written).
    """

    start: datetime
    end: datetime
    shard: int = 0
    shards: int = 1

    def days(self) -> list[date]:
        """The UTC days whose partitions this window writes (the last may be partial)."""
        return [day.date() for day in bucket_starts(self.start, self.end, _DAY)]

    def __str__(self) -> str:
        text = f"{stamp(self.start)} → {stamp(self.end)}"
        return text if self.shards == 1 else f"{text} shard {self.shard + 1}/{self.shards}"


@dataclass(frozen=True)
class ReportPlan:
    """The windows one report fetches in this run, and why.

    Attributes:
        name: the report's output name.
        windows: the windows, oldest first.
        watermark: the watermark before the run (``None`` on a first run).
        begin: where the run starts; ``end``: the end of the last complete bucket (or --until).
        reason: ``"first run"``, ``"incremental"``, ``"full refresh"`` or ``"up to date"``.
    """

    name: str
    windows: tuple[ExportWindow, ...]
    watermark: datetime | None
    begin: datetime
    end: datetime
    reason: str
    repair: tuple[date, ...] = ()
    backfill: tuple[ExportWindow, ...] = ()
    added: int = 0
    requests: int = 0
    rows: int = 0

    @property
    def count(self) -> int:
        """The windows of the run: its own and those of the backfill."""
        return len(self.windows) + len(self.backfill)

    def lines(self) -> list[str]:
        """The plan as text, one line per window (what ``--dry-run`` prints)."""
        since = "none" if self.watermark is None else stamp(self.watermark)
        out = [f"{self.name}: {self.reason}, watermark {since}, nothing to fetch"]
        if self.windows:
            head = (
                f"{self.name}: {self.reason}, watermark {since}, {len(self.windows)} window(s) "
                f"{stamp(self.begin)} → {stamp(self.end)}"
            )
            if self.requests:
                head += f", {self.requests:,} request(s), at most {self.rows:,} rows"
            if self.repair:
                head += f", and {len(self.repair)} damaged day(s) again"
            out = [head, *(f"  {w}  ({len(w.days())} day(s))" for w in self.windows)]
        if self.backfill:
            out.append(
                f"  and a backfill of {self.added} added fan-out value(s) from "
                f"{stamp(self.backfill[0].start)}: {len(self.backfill)} window(s)"
            )
            out += [f"  {w}  ({len(w.days())} day(s), added values only)" for w in self.backfill]
        return out


def floor_day(when: datetime) -> datetime:
    """The UTC midnight at or before ``when``."""
    return floor(when, _DAY)


def plan_export(
    report: ReportJob,
    watermark: datetime | None,
    *,
    now: datetime,
    until: datetime | None = None,
    full_refresh: bool = False,
    damaged: Sequence[date] = (),
) -> ReportPlan:
    """Plan the windows of one report.

    Args:
        report: the report of the job.
        watermark: the end of the data on disk from earlier runs (``None`` for none).
        now: the current instant (aware).
        until: stop at this instant, rounded down to a UTC midnight.
        full_refresh: ignore the watermark and fetch everything from the start date.
        damaged: days whose partition is damaged: those before ``begin`` are fetched again
            first, one window per run of consecutive days (at most ``window_days`` long).

    Returns:
        The plan; its windows cover ``[begin, end)`` with no gap and no overlap, after the
        windows of the damaged days before ``begin``.
    """
    end = floor(now, report.bucket)  # the end of the last complete bucket
    if until is not None:
        end = min(end, floor_day(until))
    if full_refresh or watermark is None:
        begin = report.start
        reason = "full refresh" if full_refresh else "first run"
    else:
        begin = max(report.start, floor_day(watermark - report.lookback))
        reason = "incremental"
    step = timedelta(days=report.window_days)
    repair = tuple(sorted(d for d in set(damaged) if midnight(d) < begin))
    windows = _repair_windows(repair, step)
    windows += _sharded(report, begin, end) or cut(begin, end, step)
    if not windows and reason == "incremental":
        reason = "up to date"
    return ReportPlan(
        report.name, tuple(windows), watermark, begin, max(begin, end), reason, repair
    )


def cut(begin: datetime, end: datetime, step: timedelta) -> list[ExportWindow]:
    """``[begin, end)`` cut into windows of ``step`` (the last may be shorter)."""
    windows, cursor = [], begin
    while cursor < end:
        nxt = min(cursor + step, end)
        windows.append(ExportWindow(cursor, nxt))
        cursor = nxt
    return windows


def _sharded(report: ReportJob, begin: datetime, end: datetime) -> list[ExportWindow]:
    """Windows of :data:`MAX_WINDOW_DAYS` over shards of the fan-out values, range by range,
    when they send fewer requests than the report's own windows (else none).

    One request per value and window either way: ``values x ranges`` requests.
    """
    if not report.shard_size or end <= begin:
        return []
    plain = cut(begin, end, timedelta(days=report.window_days))
    ranges = cut(begin, end, timedelta(days=MAX_WINDOW_DAYS))
    if len(ranges) >= len(plain):
        return []
    shards = -(-fanout_count(report) // report.shard_size)
    return [ExportWindow(w.start, w.end, k, shards) for w in ranges for k in range(shards)]


def fanout_count(report: ReportJob) -> int:
    """The number of fan-out values of ``report`` (the product over its dimensions)."""
    return math.prod(len(v) for v in fanout_values(report).values())


def midnight(day: date) -> datetime:
    """The UTC midnight that starts ``day``."""
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _repair_windows(days: Sequence[date], step: timedelta) -> list[ExportWindow]:
    """Windows over runs of consecutive days, each at most ``step`` long."""
    windows: list[ExportWindow] = []
    for day in days:
        start = midnight(day)
        last = windows[-1] if windows else None
        if last is not None and last.end == start and last.end - last.start < step:
            windows[-1] = ExportWindow(last.start, start + _DAY)
        else:
            windows.append(ExportWindow(start, start + _DAY))
    return windows


def stamp(when: datetime) -> str:
    """``when`` as text: the date of a UTC midnight, else ``2024-06-30T05:00Z``."""
    when = when.astimezone(UTC)
    if when == floor_day(when):
        return when.date().isoformat()
    return when.strftime("%Y-%m-%dT%H:%MZ")


def service_now(client: object) -> datetime:
    """Now by the service's clock when the client knows it (``service_now()``), else local.

    The export plans no day past the service's present.
    """
    clock = getattr(client, "service_now", None)
    now = clock() if callable(clock) else None
    return now if isinstance(now, datetime) else datetime.now(UTC)


def unit_start(
    start: datetime | date | str | None, until: datetime | None, full_refresh: bool
) -> datetime | None:
    """Check ``--from`` (with ``--until``) and return it as a UTC midnight (None: not a unit).

    Raises:
        ConfigError: an unreadable date, ``--from`` not before ``--until``, or a full refresh.
    """
    if start is None:
        return None
    begin = floor_day(to_utc(start, "--from"))
    if full_refresh:
        raise ConfigError(
            "--from runs the days [--from, --until) as a unit; it does not combine with "
            "--full-refresh"
        )
    if until is not None and floor_day(until) <= begin:
        raise ConfigError(
            f"--from {begin.date()} must be before --until {floor_day(until).date()} "
            "(the range is half-open: --from D --until D+1 is the one day D)"
        )
    return begin


def parse_shard(value: str | tuple[int, int] | None) -> tuple[int, int] | None:
    """Read ``--shard K/N`` (shard K of N, counted from 1) as ``(K - 1, N)``.

    Raises:
        ConfigError: not of the form K/N with 1 <= K <= N.

    Example:
        >>> parse_shard("2/179")
        (1, 179)
    """
    if value is None:
        return None
    if isinstance(value, tuple):
        k, n = value
        text = f"{k + 1}/{n}"
    else:
        text = value.strip()
        left, _, right = text.partition("/")
        try:
            k, n = int(left) - 1, int(right)
        except ValueError:
            k, n = -1, 0
    if not 0 <= k < n:
        raise ConfigError(f"--shard must be K/N with 1 <= K <= N (shard K of N), got {text!r}")
    return k, n


@dataclass(frozen=True)
class RunScope:
    """What one run covers and how, as ``run_export`` settles it for the Parquet and the
    Delta engine alike.

    Attributes:
        now: the service's present: no day past its last complete bucket is fetched.
        unit: a unit's first UTC day (the run fetches exactly ``[unit, until)``), or None.
        until: where the run stops (``--until``), or None.
        dry_run: plan only: nothing is fetched or written.
        full_refresh: every report from its start, the saved watermarks ignored.
        client: what fetches (None only in a dry run).
        progress: the progress bars' setting.
        checkpoint: called at the write path's named points (tests stop a run there).
        shard: a unit's shard of the fan-out values (k of n, from 0), or None.
    """

    now: datetime
    unit: datetime | None
    until: datetime | None
    dry_run: bool
    full_refresh: bool
    client: Fetcher | None
    progress: bool | None
    checkpoint: Callable[[str], None] | None
    shard: tuple[int, int] | None = None

    def plan(
        self, report: ReportJob, watermark: datetime | None, damaged: Sequence[date] = ()
    ) -> ReportPlan:
        """The plan of ``report`` in this run: from ``watermark``, or a unit's days ``[unit,
        until)`` cut to the report's start and last bucket (with ``shard`` (k, n): shard k of
        n of the fan-out values, over ranges of up to :data:`MAX_WINDOW_DAYS` days)."""
        if self.unit is None:
            return plan_export(
                report,
                watermark,
                now=self.now,
                until=self.until,
                full_refresh=self.full_refresh,
                damaged=damaged,
            )
        first = dataclasses.replace(report, start=max(report.start, self.unit))
        plan = plan_export(first, None, now=self.now, until=self.until)
        if self.shard is not None:
            k, n = self.shard
            ranges = cut(plan.begin, plan.end, timedelta(days=MAX_WINDOW_DAYS))
            windows = tuple(ExportWindow(w.start, w.end, k, n) for w in ranges)
            plan = dataclasses.replace(plan, windows=windows)
        return dataclasses.replace(plan, watermark=watermark, reason=UNIT)
