"""Read an exported dataset back as a frame with the pinned dtypes of :mod:`edgereports.schema`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._dependencies import lazy_import
from ..errors import InputError
from ..normalize import stitching
from ..schema import COUNT, STRING, schema_for
from .destination import Destination
from .destinations import destination
from .formats import FORMATS
from .job import Job, load_job
from .plan import to_utc
from .storage import secret_values

pa = lazy_import("pyarrow")

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
        if child.is_dir() and not child.name.startswith(("_", ".")) and _holder(child) is not None
    )


def _holder(path: Path) -> Destination | None:
    """The destination whose table (or day files) lies at ``path``, if any."""
    for name in FORMATS:
        found = destination(name)
        if found.holds(str(path)):
            return found
    return None


def read_export(
    path: str | Path,
    report: str | None = None,
    start: TimeArg = None,
    end: TimeArg = None,
) -> pd.DataFrame:
    """Read an exported report back as a frame with the same columns and dtypes as a fetch.

    Reads ``day=YYYY-MM-DD/part.parquet`` files with :mod:`pyarrow.dataset`, a Delta table
    (``format = "delta"``) through ``deltalake`` or an Iceberg table through ``pyiceberg``,
    skipping days outside ``[start, end)`` without opening them. The partition column ``day``
    is not returned: ``time_stamp`` (or ``date`` for SIM counts) carries the same information.
    The range rule is a fetch's: the buckets that overlap ``[start, end)``, from the one
    holding ``start``. Rows of a v2 report are stamped at the end of the piece they cover, so
    a read of a day keeps the row stamped at its end (the next midnight), not the one stamped
    at its start.

    Args:
        path: the output root of a job, one report's directory or Delta table, an object-store
            URI (``s3://bucket/prefix``, settings from the environment), or the job file.
        report: the report name; may be left out when ``path`` is a report's directory or the
            root holds a single report.
        start: keep rows from this instant on (aware datetime, date = UTC midnight, ISO text).
        end: keep rows before this instant.

    Returns:
        The frame, oldest bucket first, with ``attrs`` ``shape``, ``report`` and ``source``
        (``"parquet"``, ``"delta"`` or ``"iceberg"``), and ``api_version`` for a v2 report.

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
    target, job, location, name, options = _locate(path, report)
    with target.guard(location, secret_values(options)):
        found = target.read(job, location, lo, hi, options)
    frame = to_frame(found.table, found.shape, name, target.format.name, found.definition)
    if found.api_version != "v1":  # as a fetch marks it: the stamps end the pieces they cover
        frame.attrs["api_version"] = found.api_version
    return frame


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
    frame = schema_for(shape).validate(frame).reset_index(drop=True)
    frame = stitching.canonical_order(
        _in_filter_order(frame, request or {}), request or None, shape
    )
    frame.attrs = {}
    return _with_attrs(frame.reset_index(drop=True), shape, report, source)


def _locate(
    path: str | Path, report: str | None
) -> tuple[Destination, Job | None, str, str, dict[str, str] | None]:
    """The destination, job (if any), location, report name and storage options that
    ``path`` (and ``report``) name."""
    text = str(path)
    if "://" in text:  # an object-store URI (a Delta table: the root of a job, or one table)
        if report is not None:
            return destination("delta"), None, f"{text.rstrip('/')}/{report}", report, None
        return destination("delta"), None, text, text.rstrip("/").rsplit("/", 1)[-1], None
    local = Path(path)
    if local.is_file() and local.suffix == ".toml":
        job = load_job(local)
        names = [r.name for r in job.reports]
        name = report if report is not None else (names[0] if len(names) == 1 else None)
        if name is None:
            raise InputError(f"{local} has several reports ({', '.join(names)}); pass report=NAME")
        location = job.location(job.report(name).name)
        if job.format == "parquet":
            local = _report_dir(Path(location).parent, name)
            return destination("parquet"), job, str(local), name, None
        return destination(job.format), job, location, name, job.storage_options()
    base = _report_dir(local, report)
    found = _holder(base)
    return found or destination("parquet"), None, str(base), base.name, None


def _report_dir(path: Path, report: str | None) -> Path:
    if not path.is_dir():
        raise InputError(f"no export at {path}: not a directory")
    if report is None and _holder(path) is not None:
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


def _types_mapper() -> Any:
    text, count = (pd.api.types.pandas_dtype(name) for name in (STRING, COUNT))
    mapping = {pa.string(): text, pa.large_string(): text, pa.int64(): count}
    return mapping.get


def _with_attrs(
    frame: pd.DataFrame, shape: str, report: str, source: str = "parquet"
) -> pd.DataFrame:
    frame.attrs.update({"shape": shape, "report": report, "source": source})
    return frame
