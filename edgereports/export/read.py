"""Read an exported dataset back as a frame with the pinned dtypes of :mod:`edgereports.schema`."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, SchemaError
from .state import load_state
from .writer import METADATA_KEY, partitions

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["list_reports", "read_export"]

TimeArg = datetime | date | str | None


def list_reports(root: str | Path) -> list[str]:
    """The report names exported under an output root (directories with partitions or state).

    Args:
        root: the output root of a job.

    Returns:
        The names, sorted.
    """
    base = Path(root)
    if not base.is_dir():
        return []
    return sorted(
        child.name
        for child in base.iterdir()
        if child.is_dir()
        and not child.name.startswith(("_", "."))
        and ((child / "_state.json").is_file() or partitions(child))
    )


def read_export(
    path: str | Path,
    report: str | None = None,
    start: TimeArg = None,
    end: TimeArg = None,
) -> pd.DataFrame:
    """Read an exported report back as a frame with the same columns and dtypes as a fetch.

    Reads ``day=YYYY-MM-DD/part.parquet`` files with :mod:`pyarrow.dataset`, skipping days
    outside ``[start, end)`` without opening them. The Hive partition column ``day`` is not
    returned: ``time_stamp`` (or ``date`` for SIM counts) carries the same information.

    Args:
        path: the output root of a job, one report's directory, or the job file itself.
        report: the report name; may be left out when ``path`` is a report's directory or the
            root holds a single report.
        start: keep rows from this instant on (aware datetime, date = UTC midnight, ISO text).
        end: keep rows before this instant.

    Returns:
        The frame, oldest bucket first, with ``attrs`` ``shape``, ``report`` and
        ``source="parquet"``.

    Raises:
        InputError: no such dataset or report, several reports and none chosen, or a bad
            ``start``/``end``.
        ConfigError: the report's saved state is damaged (names it and the way out).
        SchemaError: a partition is damaged (truncated, overwritten); names it.

    Example:
        >>> df = read_export("exports", "usage_daily", start="2024-06-01")  # doctest: +SKIP
    """
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    from .. import schema

    report_dir = _report_dir(Path(path), report)
    lo, hi = _instant(start, "start"), _instant(end, "end")
    files = [
        f
        for day, f in partitions(report_dir).items()
        if (lo is None or day >= lo.date()) and (hi is None or day < _ceil_day(hi))
    ]
    state = load_state(report_dir)
    if not files:
        shape = state.shape or "timeseries"
        frame = schema.empty_frame(shape, state.columns if shape != "sim_count" else ())
        return _with_attrs(frame, shape, report_dir.name)
    schemas = []
    for f in files:
        try:
            schemas.append(pq.read_schema(f))
        except (OSError, pa.ArrowException) as exc:
            raise _damaged(f, exc) from None
    shape = _shape(schemas[0].metadata or {}, schemas[0].names, state.shape)
    unified = pa.unify_schemas([s.remove_metadata() for s in schemas])
    dataset = ds.dataset([str(f) for f in files], schema=unified, format="parquet")
    key = "time_stamp" if shape == "timeseries" else "date"
    expr = None
    for bound, op in ((lo, "ge"), (hi, "lt")):
        if bound is None:
            continue
        value = bound if shape == "timeseries" else bound.replace(tzinfo=None)
        scalar = pa.scalar(value, type=unified.field(key).type)
        term = ds.field(key) >= scalar if op == "ge" else ds.field(key) < scalar
        expr = term if expr is None else expr & term
    try:
        table = dataset.to_table(filter=expr)
    except (OSError, pa.ArrowException) as exc:
        raise _damaged(_named_file(exc, files) or report_dir, exc) from None
    frame = table.to_pandas(types_mapper=_types_mapper())
    frame = schema.schema_for(shape).validate(frame)
    return _with_attrs(frame.reset_index(drop=True), shape, report_dir.name)


def _damaged(path: Path, exc: BaseException) -> SchemaError:
    text = " ".join(str(exc).split())[:160]
    return SchemaError(
        f"exported partition {path} is damaged ({text}); run the export again: it checks "
        "every partition and fetches damaged days again",
        where=str(path),
    )


def _named_file(exc: BaseException, files: list[Path]) -> Path | None:
    """The partition an Arrow error message names, if any."""
    text = str(exc)
    return next((f for f in files if str(f) in text), None)


def _report_dir(path: Path, report: str | None) -> Path:
    if path.is_file() and path.suffix == ".toml":
        from .job import load_job

        path = load_job(path).output
    if not path.is_dir():
        raise InputError(f"no export at {path}: not a directory")
    if report is None and (partitions(path) or (path / "_state.json").is_file()):
        return path
    names = list_reports(path)
    if report is None:
        if len(names) == 1:
            return path / names[0]
        listed = ", ".join(names) if names else "none"
        raise InputError(f"{path} holds several exported reports ({listed}); pass report=NAME")
    if report not in names:
        listed = ", ".join(names) if names else "none"
        raise InputError(f"no exported report {report!r} under {path} (reports: {listed})")
    return path / report


def _instant(value: TimeArg, what: str) -> datetime | None:
    if value is None:
        return None
    from .plan import to_utc

    return to_utc(value, what)


def _ceil_day(when: datetime) -> date:
    midnight = when.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return (midnight if midnight == when else midnight + timedelta(days=1)).date()


def _shape(metadata: dict[bytes, bytes], names: list[str], fallback: str | None) -> str:
    import json

    raw = metadata.get(METADATA_KEY)
    if raw:
        try:
            shape = json.loads(raw).get("shape")
        except ValueError:
            shape = None
        if isinstance(shape, str):
            return shape
    if fallback:
        return fallback
    return "sim_count" if "date" in names and "time_stamp" not in names else "timeseries"


def _types_mapper() -> Any:
    import pyarrow as pa

    from .. import schema

    mapping = {
        pa.string(): schema.STRING,
        pa.large_string(): schema.STRING,
        pa.int64(): schema.COUNT,
    }
    return mapping.get


def _with_attrs(frame: pd.DataFrame, shape: str, report: str) -> pd.DataFrame:
    frame.attrs.update({"shape": shape, "report": report, "source": "parquet"})
    return frame
