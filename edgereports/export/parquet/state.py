"""The state of one exported report (its watermark), saved atomically beside its partitions,
and what a run checks of it before it fetches.

``OUTPUT/<report>/_state.json`` holds the watermark (the end of the data on disk), the report's
definition (the request without its range, no secret), the frame shape and the toolkit version.
It is written to a temporary file in the same directory, flushed to disk and moved into place
with :func:`os.replace`, so a run killed at any moment leaves either the old or the new state.
The checks fail with a :class:`~edgereports.errors.ConfigError` that names the file and the way
out, before the output is touched (no lock taken, nothing written).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..._version import __version__
from ...errors import ConfigError
from ..fanout import Values, read_values, split_definition
from ..files import atomic_write_bytes
from ..job import Job
from ..reports import ReportJob

__all__ = [
    "HELD_KEY",
    "MARKS_KEY",
    "RETIRED_KEY",
    "SHAPES",
    "SHARDS_KEY",
    "STATE_FILE",
    "WAY_OUT",
    "ReportState",
    "held_values",
    "load_state",
    "report_state",
    "retired_values",
    "save_state",
]

STATE_FILE = "_state.json"
FORMAT = 1
#: The shapes an export writes.
SHAPES = ("timeseries", "sim_count")
#: What to do about a state that cannot be trusted.
WAY_OUT = "run with --full-refresh to rebuild the report (it replaces the state)"
#: The key of the state that lists the fan-out values held whole from the report's start.
HELD_KEY = "fanout_values"
#: The key of the state that lists the values whose rows are kept but no longer fetched.
RETIRED_KEY = "retired_values"
#: The key of an older state that listed, per range of shard units, the shards written.
SHARDS_KEY = "shard_units"
#: The key of the state that holds the table's marks (:mod:`edgereports.export.ledger`).
MARKS_KEY = "marks"

#: How far a watermark may lie past "now" (the service's clock may run ahead of ours).
CLOCK_SLACK = timedelta(days=1)


@dataclass(frozen=True)
class ReportState:
    """What earlier runs left for one report.

    Attributes:
        watermark: the end of the contiguous data on disk (UTC), or ``None``.
        definition: the request without its range that wrote the data.
        shape: ``"timeseries"`` or ``"sim_count"``.
        columns: the dimension columns of the frames written (for empty read-backs).
        updated_at: when the state was last saved.
    """

    watermark: datetime | None = None
    definition: dict[str, Any] | None = None
    shape: str | None = None
    columns: tuple[str, ...] = ()
    updated_at: datetime | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The JSON object saved in the state file."""
        return {
            "format": FORMAT,
            "watermark": _iso(self.watermark),
            "definition": self.definition,
            "shape": self.shape,
            "dimensions": list(self.columns),
            "updated_at": _iso(self.updated_at),
            "toolkit_version": __version__,
            **self.extra,
        }


def load_state(report_dir: Path) -> ReportState:
    """Read the state of the report in ``report_dir`` (an empty state when there is none).

    Raises:
        ConfigError: the state file exists but cannot be read or is not a state (not UTF-8,
            not JSON, an unknown shape, dimensions that are not column names...); the
            message names the file and the way out (``--full-refresh``).
    """
    path = report_dir / STATE_FILE
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):  # no state (yet) at this path
        return ReportState()
    except OSError as exc:
        raise ConfigError(f"cannot read export state {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError("not an export state of format 1")
        known = {"format", "watermark", "definition", "shape", "dimensions", "updated_at"}
        state = ReportState(
            watermark=_parse(data.get("watermark")),
            definition=_definition(data.get("definition")),
            shape=_shape(data.get("shape")),
            columns=_columns(data.get("dimensions")),
            updated_at=_parse(data.get("updated_at")),
            extra={k: v for k, v in data.items() if k not in known | {"toolkit_version"}},
        )
    except (ValueError, TypeError) as exc:  # UnicodeDecodeError is a ValueError
        error = ConfigError(f"export state {path} is damaged ({_short(exc)}); {WAY_OUT}")
    else:
        return state
    raise error  # outside the handler: one clear error, no decoding traceback chained


def save_state(report_dir: Path, state: ReportState) -> None:
    """Write the state atomically (temporary file, fsync, :func:`os.replace`)."""
    text = json.dumps(state.to_json(), indent=2, sort_keys=False) + "\n"
    atomic_write_bytes(report_dir / STATE_FILE, text.encode("utf-8"))


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


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.astimezone(UTC).isoformat()


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 160 else text[:157] + "..."


def _definition(value: object) -> dict[str, Any] | None:
    if value is not None and not isinstance(value, dict):
        raise ValueError(f"definition must be an object, got {value!r:.60}")
    return value


def _shape(value: object) -> str | None:
    if value is not None and value not in SHAPES:
        raise ValueError(f"shape {value!r:.60} is not one of {', '.join(SHAPES)}")
    return value


def _columns(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(
        isinstance(v, str) and v.strip() == v and v for v in value
    ):
        raise ValueError(f"dimensions must be a list of column names, got {value!r:.60}")
    if len(set(value)) != len(value):
        raise ValueError(f"dimensions repeat a name: {value!r:.60}")
    return tuple(value)


def _parse(text: object) -> datetime | None:
    if text is None:
        return None
    if not isinstance(text, str):
        raise ValueError(f"timestamp expected, got {text!r}")
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        raise ValueError(f"timestamp {text!r} has no offset")
    return value.astimezone(UTC)
