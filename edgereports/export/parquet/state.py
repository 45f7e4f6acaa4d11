"""The state of one exported report (its watermark), saved atomically beside its partitions.

``OUTPUT/<report>/_state.json`` holds the watermark (the end of the data on disk), the report's
definition (the request without its range, no secret), the frame shape and the toolkit version.
It is written to a temporary file in the same directory, flushed to disk and moved into place
with :func:`os.replace`, so a run killed at any moment leaves either the old or the new state.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..._version import __version__
from ...errors import ConfigError
from ..files import atomic_write_bytes

__all__ = [
    "SHAPES",
    "STATE_FILE",
    "WAY_OUT",
    "ReportState",
    "load_state",
    "save_state",
]

STATE_FILE = "_state.json"
FORMAT = 1
#: The shapes an export writes.
SHAPES = ("timeseries", "sim_count")
#: What to do about a state that cannot be trusted.
WAY_OUT = "run with --full-refresh to rebuild the report (it replaces the state)"


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
