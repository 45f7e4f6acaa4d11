"""Read a report's day files back: the files of the range, checked, as one Arrow table."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from ..._dependencies import lazy_import
from ...errors import SchemaError
from ...query.timegrid import BUCKETS, ceil
from ...query.versions import stamps_at_end
from ...schema import schema_for
from ..bounds import bounds_filter, read_bounds
from ..destination import ReadBack
from ..files import METADATA_KEY
from .state import load_state
from .writer import partitions

pa = lazy_import("pyarrow")
ds = lazy_import("pyarrow.dataset")
pq = lazy_import("pyarrow.parquet")

__all__ = ["read_parquet"]


def read_parquet(report_dir: Path, lo: datetime | None, hi: datetime | None) -> ReadBack:
    """The rows of ``[lo, hi)`` of a report's day files (days outside are not opened).

    Raises:
        ConfigError: the report's state is damaged.
        SchemaError: a partition is damaged or holds another report's rows; names it.
    """
    after = None if hi is None else ceil(hi, BUCKETS["DAY"]).date()
    files = [
        f
        for day, f in partitions(report_dir).items()
        if (lo is None or day >= lo.date()) and (after is None or day < after)
    ]
    state = load_state(report_dir)
    if not files:
        shape = state.shape or "timeseries"
        columns = state.columns if shape != "sim_count" else ()
        empty = schema_for(shape).arrow_schema(columns).empty_table()
        return ReadBack(empty, shape, state.definition or {})
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
    version = str(_info(schemas[0].metadata or {}).get("api_version") or "v1")
    at_end = stamps_at_end(version)
    lo, hi = read_bounds(lo, hi, shape, request, at_end=at_end)
    expr = bounds_filter(lo, hi, shape, unified.field(key).type, at_end=at_end)
    try:
        table = dataset.to_table(filter=expr)
    except (OSError, pa.ArrowException) as exc:
        raise _damaged(_named_file(exc, files) or report_dir, exc) from None
    return ReadBack(table, shape, request, version)


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


def _shape(metadata: dict[bytes, bytes], names: list[str], fallback: str | None) -> str:
    shape = _info(metadata).get("shape")
    if isinstance(shape, str):
        return shape
    if fallback:
        return fallback
    return "sim_count" if "date" in names and "time_stamp" not in names else "timeseries"
