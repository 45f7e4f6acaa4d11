"""One export run: check its arguments, connect, take the service's clock, run the engine.

The engine (:mod:`.engine`) is the same for every format; the job's destination
(:mod:`.destinations`) only stores.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from ..errors import ConfigError
from .client import Fetcher, make_client
from .destinations import destination
from .engine import run_reports
from .fanout import fanout_values
from .job import Job, load_job
from .plan import RunScope, fanout_count, parse_shard, service_now, to_utc, unit_start
from .reports import ReportJob
from .summary import ExportSummary

__all__ = ["run_export"]


def run_export(
    job: str | Path | Job,
    *,
    until: datetime | str | None = None,
    only: str | Sequence[str] | None = None,
    dry_run: bool = False,
    full_refresh: bool = False,
    client: Fetcher | None = None,
    now: datetime | None = None,
    progress: bool | None = None,
    checkpoint: Callable[[str], None] | None = None,
    start: datetime | str | None = None,
    shard: str | tuple[int, int] | None = None,
) -> ExportSummary:
    """Run an export job: fetch what is new, write it to the job's destination.

    The destination is the job's ``format``: partitioned Parquet files with a state and a
    lock (the default), or a Delta or Iceberg table per report (no state file and no lock:
    the table holds its watermark).
    With ``start``, the run is a unit of work (:mod:`edgereports.export.units`): it fetches
    exactly the UTC days ``[start, until)`` and replaces them, whatever the watermark says.

    Args:
        job: the job file, or a :class:`Job`.
        until: stop at this instant (rounded down to a UTC midnight); default: the end of the
            last complete bucket.
        only: run only the report(s) with these names.
        dry_run: plan and return; fetch, write and lock nothing (``summary.plan_text()``).
        full_refresh: ignore the watermarks, re-fetch from each start date, and delete
            partitions outside the refreshed range once the whole report succeeded.
        client: the client to fetch with (a :class:`~edgereports.ReportingClient`); by
            default one built from the job's connection and the environment.
        now: the current instant (for tests; default the real time).
        progress: show a bar per report (default: only on a terminal or in a notebook).
        checkpoint: called with the name of each point of the write path reached
            (``"before-commit"`` and ``"after-commit"`` around each window's write; Parquet
            also ``"before-move"`` and ``"after-move-before-state"``); tests use it to stop a
            run at a chosen point.
        start: run the UTC days ``[start, until)`` as a unit (``--from``); a date or an
            ISO-8601 instant, rounded down to a UTC midnight.
        shard: with ``start``: run only shard K of N of each report's fan-out values
            (``"K/N"``, from 1; or ``(K - 1, N)``); its range counts as written once every
            shard is in.

    Returns:
        The summary; ``summary.ok`` is False when some windows failed (they are listed, the
        others are written, and the next run retries them).

    Raises:
        ConfigError: the job file is invalid, ``until`` is not after the start, a saved state
            is damaged or its watermark lies in the future, a report changed its definition
            since the data was written (run with ``full_refresh=True``), no key/URL is
            configured, or a variable ``[storage]`` names is not set; all before the lock is
            taken and before any request.
        OSError: the output cannot be written (read-only, not a directory, disk full) while
            the lock is taken or temporaries are swept; a window whose partitions or state
            cannot be written is listed as failed instead.
        ExportLocked: another run holds the lock of one of the reports.

    Example:
        >>> summary = run_export("nightly.toml")
        >>> summary.ok, [(r.name, len(r.plan.windows)) for r in summary.reports]
        (True, [('usage', 1)])
        >>> print(summary)
        export 'nightly' → .../exports: ok in ... s
        report    windows        rows   files      bytes  watermark
        usage         1/1         111      37   ... KB  2022-07-08
        total         1/1         111      37   ... KB
    """
    started = time.monotonic()
    spec = job if isinstance(job, Job) else load_job(job)
    chosen = _select(spec, only)
    stop = to_utc(until) if until is not None else None
    _check_until(spec, chosen, stop)
    begin = unit_start(start, stop, full_refresh)
    part = parse_shard(shard)
    if part is not None:
        _check_shard(spec, chosen, part, begin)
    target = destination(spec.format, checkpoint)
    spec.storage_options()  # the variables [storage] names are set, before any request
    with contextlib.ExitStack() as stack:
        if client is None:  # a dry run too: its plan stops at the service's present
            try:
                client = stack.enter_context(make_client(spec))
            except ConfigError:  # no key or address: a dry run plans by the local clock
                if not dry_run:
                    raise
        # one clock: the service's (its latest Date header), so no day past its present and
        # relative starts ("60d") count back from it
        instant = to_utc(now, "now") if now is not None else service_now(client)
        chosen = [r.at(instant) for r in chosen]
        scope = RunScope(
            now=instant,
            unit=begin,
            until=stop,
            dry_run=dry_run,
            full_refresh=full_refresh,
            client=client,
            progress=progress,
            checkpoint=checkpoint,
            shard=part,
        )
        summary = run_reports(target, spec, chosen, scope)
    summary.rate_limit = spec.effective_rate_limit()
    summary.seconds = time.monotonic() - started
    return summary


def _check_until(job: Job, reports: Sequence[ReportJob], until: datetime | None) -> None:
    """Refuse an ``until`` at or before the start of every chosen report (nothing to fetch).

    Raises:
        ConfigError: naming ``--until`` and the earliest start.
    """
    if until is None or not reports:
        return
    first = min(r.start for r in reports)
    if until <= first:
        raise ConfigError(
            f"--until {until.date().isoformat()} is not after the start of "
            f"{job.source or job.name} ({first.date().isoformat()}): there is nothing to "
            "export before it; give a later --until or leave it out"
        )


def _check_shard(
    job: Job, chosen: list[ReportJob], shard: tuple[int, int], begin: datetime | None
) -> None:
    """A shard is a unit's, of reports with at least as many fan-out values as shards."""
    if begin is None:
        raise ConfigError("--shard K/N runs a shard of a unit: give --from (and --until) too")
    for r in chosen:
        count = fanout_count(r) if fanout_values(r) else 0
        if count < shard[1]:
            raise ConfigError(
                f"{job.source or job.name}: report {r.name!r} fans out over {count} value(s); "
                f"--shard {shard[0] + 1}/{shard[1]} needs at least {shard[1]}"
            )


def _select(job: Job, only: str | Sequence[str] | None) -> list[ReportJob]:
    if only is None:
        return list(job.reports)
    names = [only] if isinstance(only, str) else list(only)
    return [job.report(n) for n in dict.fromkeys(names)]
