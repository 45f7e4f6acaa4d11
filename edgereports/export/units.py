"""Units of work: one report x a range of UTC days, run alone, idempotently, on any machine.

What a unit replaces, and how units run side by side: docs/export.md ("Units of work"). An
orchestrator fans units out (``examples/`` has a Dagster asset, an Airflow DAG and a shell
loop); :func:`split_units` lists them and :func:`run_unit` runs one.

Example:
    >>> for unit in split_units("nightly.toml", "2022-07-01", "2022-07-08"):
    ...     print(unit.report, unit.start, unit.end, run_unit("nightly.toml", unit.report,
    ...           unit.start, unit.end).ok)
    usage 2022-07-01 2022-07-02 True
    ...
    usage 2022-07-07 2022-07-08 True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from ..errors import ConfigError
from ..query.timegrid import BUCKETS
from .client import Fetcher
from .job import Job, load_job
from .plan import cut, fanout_count, floor_day, to_utc
from .run import run_export
from .summary import ExportSummary

__all__ = ["Unit", "run_unit", "split_units"]

_DAY = BUCKETS["DAY"]  # the export's unit: a UTC day


@dataclass(frozen=True, order=True)
class Unit:
    """One unit of work: the report ``report`` over the UTC days ``[start, end)`` (and, for a
    fleet, shard ``shard`` of ``shards`` of its fan-out values, from 0)."""

    report: str
    start: date
    end: date
    shard: int = 0
    shards: int = 1

    @property
    def shard_arg(self) -> str | None:
        """The unit's ``--shard K/N`` (``None`` when not sharded)."""
        return None if self.shards == 1 else f"{self.shard + 1}/{self.shards}"

    def __str__(self) -> str:
        text = f"{self.report} {self.start.isoformat()} → {self.end.isoformat()}"
        return text if self.shards == 1 else f"{text} shard {self.shard_arg}"


def split_units(
    job: str | Path | Job,
    start: datetime | date | str,
    end: datetime | date | str,
    *,
    days: int = 1,
    only: str | Sequence[str] | None = None,
    shards: bool = False,
) -> list[Unit]:
    """The units that cover ``[start, end)`` for every report (or ``only`` these), ``days`` each.

    Args:
        job: the job file, or a :class:`Job`.
        start: the first UTC day (rounded down to a UTC midnight).
        end: the end (exclusive; rounded down to a UTC midnight).
        days: UTC days per unit.
        only: the report name(s) to cover; default every report of the job.
        shards: split each report with a shard size (many fan-out values) into its shards
            too: report x shard x range (a range of ``days``, up to a year, is one request
            per value).

    Returns:
        The units, report by report, oldest first; a report starts no earlier than its start.

    Raises:
        ConfigError: a bad job, range, report name or ``days``.

    Example:
        >>> split_units("nightly.toml", "2022-07-01", "2022-07-03", days=1)
        [Unit(report='usage', start=datetime.date(2022, 7, 1), ...), Unit(...)]
    """
    spec = job if isinstance(job, Job) else load_job(job)
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise ConfigError(f"days must be a whole number of at least 1, got {days!r}")
    lo, hi = floor_day(to_utc(start, "start")), floor_day(to_utc(end, "end"))
    names = [only] if isinstance(only, str) else list(only or [r.name for r in spec.reports])
    out: list[Unit] = []
    for name in dict.fromkeys(names):
        report = spec.report(name)
        count = -(-fanout_count(report) // report.shard_size) if shards and report.shard_size else 1
        for w in cut(max(lo, report.start), hi, days * _DAY):
            out += [Unit(name, w.start.date(), w.end.date(), k, count) for k in range(count)]
    return out


def run_unit(
    job: str | Path | Job,
    report: str,
    start: datetime | date | str,
    end: datetime | date | str | None = None,
    *,
    client: Fetcher | None = None,
    now: datetime | None = None,
    shard: str | tuple[int, int] | None = None,
) -> ExportSummary:
    """Run one unit of work: fetch the report's UTC days ``[start, end)`` and replace them.

    The same as ``edgereports export JOB --only REPORT --from START --until END``. Days past
    the last complete bucket are not fetched.

    Args:
        job: the job file, or a :class:`Job`.
        report: the report's name.
        start: the first UTC day.
        end: the end (exclusive); default: one day after ``start``.
        client: the client to fetch with (default: one from the job's connection).
        now: the current instant (default: the real time).
        shard: only shard K of N of the report's fan-out values (``"K/N"`` from 1, or
            ``(K - 1, N)``; a :class:`Unit`'s ``shard_arg``).

    Returns:
        The summary; ``summary.ok`` is False when a window failed (run the unit again).

    Raises:
        ConfigError: a bad job, report or range, or ``deltalake`` missing for Delta.
        ExportLocked: a Parquet unit found the report locked by another run.

    Example:
        >>> run_unit("nightly.toml", "usage", "2022-07-01").ok
        True
    """
    first = to_utc(start, "start")
    return run_export(
        job,
        only=report,
        start=first,
        until=to_utc(end, "end") if end is not None else floor_day(first) + _DAY,
        client=client,
        now=now,
        progress=False,
        shard=shard,
    )
