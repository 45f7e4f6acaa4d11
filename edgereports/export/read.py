"""Read an exported dataset back as a frame with the pinned dtypes of :mod:`edgereports.schema`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import schema
from .._dependencies import lazy_import
from ..errors import InputError, SchemaError
from ..normalize.stitching import canonical_order
from ..query.timegrid import BUCKETS, ceil
from .bounds import bounds_filter, bucket_start
from .delta.table import DELTA_LOG, read_delta, table_errors
from .job import load_job
from .parquet.state import load_state
from .parquet.writer import METADATA_KEY, partitions
from .plan import to_utc
from .storage import secret_values

pa = lazy_import("pyarrow")
ds = lazy_import("pyarrow.dataset")
pq = lazy_import("pyarrow.parquet")

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy_import("numpy")
    pd = lazy_import("pandas")

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
        and ((child / "_state.json").is_file() or partitions(child) or (child / DELTA_LOG).is_dir())
    )


def read_export(
    path: str | Path,
    report: str | None = None,
    start: TimeArg = None,
    end: TimeArg = None,
) -> pd.DataFrame:
    """Read an exported report back as a frame with the same columns and dtypes as a fetch.

    Reads ``day=YYYY-MM-DD/part.parquet`` files with :mod:`pyarrow.dataset`, or a Delta table
    (``format = "delta"``) through ``deltalake``, skipping days outside ``[start, end)``
    without opening them. The partition column ``day`` is not returned: ``time_stamp`` (or
    ``date`` for SIM counts) carries the same information.

    Args:
        path: the output root of a job, one report's directory or Delta table, an object-store
            URI (``s3://bucket/prefix``, settings from the environment), or the job file.
        report: the report name; may be left out when ``path`` is a report's directory or the
            root holds a single report.
        start: keep rows from this instant on (aware datetime, date = UTC midnight, ISO text).
        end: keep rows before this instant.

    Returns:
        The frame, oldest bucket first, with ``attrs`` ``shape``, ``report`` and ``source``
        (``"parquet"`` or ``"delta"``).

    Raises:
        InputError: no such dataset or report, several reports and none chosen, or a bad
            ``start``/``end``.
        ConfigError: the report's saved state, or its Delta table, is damaged (names it and
            the way out).
        OSError: the object store holding the table failed (the message is redacted).
        SchemaError: a partition is damaged (truncated, overwritten); names it.

    Example:
        >>> from edgereports.export import run_export
        >>> run_export("nightly.toml").ok  # writes exports/usage
        True
        >>> df = read_export("exports", "usage", start="2022-07-06")
        >>> sorted(df["time_stamp"].dt.strftime("%m-%d").unique())
        ['07-06', '07-07']
    """
    lo = None if start is None else to_utc(start, "start")
    hi = None if end is None else to_utc(end, "end")
    table_at = _delta_table(path, report)
    if table_at is not None:
        with table_errors(table_at[0], secret_values(table_at[2])):
            found, shape, definition = read_delta(table_at[0], lo, hi, table_at[2])
        return to_frame(found, shape, table_at[1], "delta", definition)
    report_dir = _report_dir(Path(path), report)
    after = None if hi is None else ceil(hi, BUCKETS["DAY"]).date()
    files = [
        f
        for day, f in partitions(report_dir).items()
        if (lo is None or day >= lo.date()) and (after is None or day < after)
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
        _check_owner(f, schemas[-1].metadata or {}, report_dir.name, state.shape)
    shape = _shape(schemas[0].metadata or {}, schemas[0].names, state.shape)
    unified = pa.unify_schemas([s.remove_metadata() for s in schemas])
    dataset = ds.dataset([str(f) for f in files], schema=unified, format="parquet")
    key = "time_stamp" if shape == "timeseries" else "date"
    request = _request(schemas[0].metadata or {})
    lo = bucket_start(lo, shape, request)
    try:
        table = dataset.to_table(filter=bounds_filter(lo, hi, shape, unified.field(key).type))
    except (OSError, pa.ArrowException) as exc:
        raise _damaged(_named_file(exc, files) or report_dir, exc) from None
    return to_frame(table, shape, report_dir.name, "parquet", request)


def _info(metadata: Mapping[bytes, bytes]) -> dict[str, Any]:
    """What a file's metadata records under the ``edgereports`` key (``{}``: nothing)."""
    try:
        info = json.loads(metadata.get(METADATA_KEY, b"{}"))
    except ValueError:
        return {}
    return info if isinstance(info, dict) else {}


def _request(metadata: Mapping[bytes, bytes]) -> dict[str, Any]:
    """The request recorded in the files' metadata (``{}`` when there is none)."""
    request = _info(metadata).get("request")
    return request if isinstance(request, dict) else {}


def _in_filter_order(frame: pd.DataFrame, request: Mapping[str, Any]) -> pd.DataFrame:
    """``frame`` with the series of a fan-out in the order of the request's filter values (the
    order a fetch sends, and gives, them); the files hold each day's rows sorted."""
    ranks = []
    for clause in request.get("dimension_filter_clauses") or ():
        for f in clause.get("filters") or ():
            name = f.get("dimension_name")
            values = [str(v) for v in f.get("expressions") or ()]
            if name in frame.columns and name != "account_id" and len(values) > 1:
                order = {v: i for i, v in enumerate(dict.fromkeys(values))}
                ranks.append(frame[name].astype(str).map(order).fillna(len(order)))
    if not ranks or not len(frame):
        return frame
    keys = np.lexsort([r.to_numpy(dtype=float) for r in reversed(ranks)])  # stable
    return frame.iloc[keys].reset_index(drop=True)


def to_frame(
    table: Any, shape: str, report: str, source: str, request: Mapping[str, Any] | None = None
) -> pd.DataFrame:
    """An Arrow table read back → a frame with the pinned dtypes and ``attrs``, its rows in
    the order a fetch gives them (series, then the request's metric order, then time), not
    day by day as the files hold them."""
    frame = table.to_pandas(types_mapper=_types_mapper())
    frame = schema.schema_for(shape).validate(frame).reset_index(drop=True)
    frame = canonical_order(_in_filter_order(frame, request or {}), request or None, shape)
    frame.attrs = {}
    return _with_attrs(frame.reset_index(drop=True), shape, report, source)


def _delta_table(
    path: str | Path, report: str | None
) -> tuple[str, str, dict[str, str] | None] | None:
    """The Delta table ``path`` (and ``report``) names, with the report's name and the
    ``storage_options`` of a job file's ``[storage]`` (None: the environment's); else None."""
    text = str(path)
    if "://" in text:  # an object-store URI: the root of a job, or one table
        if report is not None:
            return f"{text.rstrip('/')}/{report}", report, None
        return text, text.rstrip("/").rsplit("/", 1)[-1], None
    local = Path(path)
    if local.is_file() and local.suffix == ".toml":
        job = load_job(local)
        if job.format != "delta":
            return None
        names = [r.name for r in job.reports]
        name = report if report is not None else (names[0] if len(names) == 1 else None)
        if name is None:
            raise InputError(f"{local} has several reports ({', '.join(names)}); pass report=NAME")
        return job.location(job.report(name).name), name, job.storage_options()
    if report is None and (local / DELTA_LOG).is_dir():
        return str(local), local.name, None
    base = local / report if report is not None else None
    if base is None and local.is_dir():
        names = list_reports(local)
        base = local / names[0] if len(names) == 1 else None
    if base is not None and (base / DELTA_LOG).is_dir():
        return str(base), base.name, None
    return None


def _check_owner(
    path: Path, metadata: Mapping[bytes, bytes], report: str, shape: str | None
) -> None:
    """A partition whose file says it holds another report's rows (or another shape) is a
    SchemaError naming it: read with the others, it would give wrong rows or a raw error."""
    info = _info(metadata)
    owner, held = info.get("report"), info.get("shape")
    if (owner is not None and owner != report) or (None not in (held, shape) and held != shape):
        what = f"report {owner!r}" if owner != report else f"{held} rows"
        day = path.parent.name.partition("=")[2]
        after = (date.fromisoformat(day) + timedelta(days=1)).isoformat() if day else "..."
        raise SchemaError(
            f"exported partition {path} holds {what}, not those of {report!r}; replace that "
            f"day: edgereports export JOBFILE --only {report} --from {day} --until {after}",
            where=str(path),
        )


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


def _shape(metadata: dict[bytes, bytes], names: list[str], fallback: str | None) -> str:
    shape = _info(metadata).get("shape")
    if isinstance(shape, str):
        return shape
    if fallback:
        return fallback
    return "sim_count" if "date" in names and "time_stamp" not in names else "timeseries"


def _types_mapper() -> Any:
    text, count = (pd.api.types.pandas_dtype(name) for name in (schema.STRING, schema.COUNT))
    mapping = {pa.string(): text, pa.large_string(): text, pa.int64(): count}
    return mapping.get


def _with_attrs(
    frame: pd.DataFrame, shape: str, report: str, source: str = "parquet"
) -> pd.DataFrame:
    frame.attrs.update({"shape": shape, "report": report, "source": source})
    return frame
