"""What a Parquet run checks before it fetches: the saved states and the files on disk.

Everything here fails with a :class:`~edgereports.errors.ConfigError` that names the file or
argument and the way out, before the output is touched (no lock taken, nothing written); the
one exception is :func:`damaged_days`, which finds partitions whose Parquet footer does not
read, so that the run fetches those days again whatever their age.
"""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from pathlib import Path

from ..._dependencies import lazy_import
from ...errors import ConfigError
from ..fanout import Values, read_values, split_definition
from ..job import Job
from ..reports import ReportJob
from .state import STATE_FILE, WAY_OUT, ReportState, load_state
from .writer import partitions

pa = lazy_import("pyarrow")
pq = lazy_import("pyarrow.parquet")


__all__ = ["damaged_days", "held_values", "report_state", "retired_values"]

#: The key of the state that lists the fan-out values held whole from the report's start.
HELD_KEY = "fanout_values"
#: The key of the state that lists the values whose rows are kept but no longer fetched.
RETIRED_KEY = "retired_values"
#: The key of the state that lists, per range of shard units, the shards written.
SHARDS_KEY = "shard_units"

#: How far a watermark may lie past "now" (the service's clock may run ahead of ours).
CLOCK_SLACK = timedelta(days=1)


def report_state(
    job: Job, report: ReportJob, report_dir: Path, *, now: datetime, full_refresh: bool
) -> ReportState:
    """Load the saved state of one report and check that this run may build on it.

    With ``full_refresh`` the state is not used (the run replaces it), so a damaged one is
    set aside instead of refused.

    The fan-out values (subscribers, sites...) may change: they are rows, not identity.

    Raises:
        ConfigError: the state is damaged, its watermark lies in the future, or the report's
            request (other than its fan-out values) or shape changed since the data was
            written.
    """
    try:
        state = load_state(report_dir)
    except ConfigError:
        if full_refresh:
            return ReportState()
        raise
    if full_refresh:
        return state
    path = report_dir / STATE_FILE
    if state.watermark is not None and state.watermark > now + CLOCK_SLACK:
        raise ConfigError(
            f"export state {path} has a watermark in the future "
            f"({state.watermark.isoformat()}, now {now.isoformat(timespec='seconds')}); "
            f"{WAY_OUT}"
        )
    if state.shape is not None and state.shape != report.shape:
        raise ConfigError(
            f"export state {path} was written for {state.shape} frames, but report "
            f"{report.name!r} gives {report.shape} frames; {WAY_OUT}"
        )
    if state.definition is not None:
        now_definition = json.loads(json.dumps(report.definition()))
        if split_definition(now_definition)[0] != split_definition(state.definition)[0]:
            raise ConfigError(
                f"{job.source or job.name}: report {report.name!r} asks for other data than "
                f"the data already exported under {report_dir} (its request changed: metrics, "
                "dimensions, filters or granularity); run once with --full-refresh to rebuild "
                "it, or give the changed report a new name"
            )
    return state


def damaged_days(report_dir: Path) -> list[date]:
    """The days whose ``part.parquet`` does not read as Parquet (truncated, overwritten).

    Only the footer of each file is read.
    """
    damaged: list[date] = []
    for day, path in partitions(report_dir).items():
        try:
            pq.read_metadata(path)
        except (OSError, pa.ArrowException):
            damaged.append(day)
    return damaged


def held_values(state: ReportState) -> Values | None:
    """The fan-out values the saved data holds whole from the report's start (``None``:
    nothing saved yet)."""
    held = read_values(state.extra.get(HELD_KEY))
    if held is not None:
        return held
    if state.definition is None:
        return None
    return split_definition(state.definition)[1]


def retired_values(state: ReportState) -> Values:
    """The fan-out values whose rows the saved data keeps, though no run fetches them."""
    return read_values(state.extra.get(RETIRED_KEY)) or {}
