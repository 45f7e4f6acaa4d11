"""Atomic partition writes: ``OUTPUT/<report>/day=YYYY-MM-DD/part.parquet``, one file per day.

A window's frame is cut into UTC days of its bucket column (``time_stamp``, or ``date`` for SIM
counts). Each day is written to a temporary file in its partition directory, flushed to disk and
moved over ``part.parquet`` with :func:`os.replace`: a reader sees the old complete day or the
new complete day, never a mix, and a re-fetched day replaces the old file whole, so the dataset
holds one copy of each observation however often the job runs. A day of the window that came
back empty loses its old file. The partition value lives in the path only (Hive style); the
files carry the pinned schema of :mod:`edgereports.schema` and, under the metadata key
``edgereports``, the request of the window (no secret), the report name and the toolkit version.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._dependencies import lazy_import
from ..._version import __version__
from ..days import DayRows, split_days
from ..files import METADATA_KEY, atomic_write
from ..summary import Written

pa = lazy_import("pyarrow")
pc = lazy_import("pyarrow.compute")
pq = lazy_import("pyarrow.parquet")

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "METADATA_KEY",
    "PART_FILE",
    "damaged_days",
    "partition_dir",
    "partitions",
    "remove_partition",
    "sweep_temporaries",
    "write_days",
    "write_window",
]

PART_FILE = "part.parquet"
_DAY_DIR = re.compile(r"day=(\d{4}-\d{2}-\d{2})")


def partition_dir(report_dir: Path, day: date) -> Path:
    """The directory of one day's partition."""
    return report_dir / f"day={day.isoformat()}"


def partitions(report_dir: Path) -> dict[date, Path]:
    """The partition files of a report, by day, oldest first."""
    found: dict[date, Path] = {}
    if not report_dir.is_dir():
        return found
    for child in report_dir.iterdir():
        match = _DAY_DIR.fullmatch(child.name)
        part = child / PART_FILE
        if match and part.is_file():
            found[date.fromisoformat(match[1])] = part
    return dict(sorted(found.items()))


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


def remove_partition(report_dir: Path, day: date) -> bool:
    """Delete one day's partition (and its directory when empty); True when it existed."""
    directory = partition_dir(report_dir, day)
    part = directory / PART_FILE
    existed = part.is_file()
    part.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        directory.rmdir()
    return existed


def sweep_temporaries(report_dir: Path, days: Iterable[date] | None = None) -> int:
    """Delete temporary files a killed run left behind (call only while holding the lock):
    all of the report's, or only those of ``days`` (a unit holds only its days' locks)."""
    count = 0
    if not report_dir.is_dir():
        return 0
    if days is None:
        patterns = [".*.tmp", "day=*/.*.tmp"]
    else:
        patterns = [f"day={d.isoformat()}/.*.tmp" for d in days]
    for pattern in patterns:
        for path in report_dir.glob(pattern):
            path.unlink(missing_ok=True)
            count += 1
    return count


def write_window(
    frame: pd.DataFrame,
    report_dir: Path,
    days: list[date],
    *,
    shape: str,
    start: datetime,
    end: datetime,
    metadata: Mapping[str, Any],
    checkpoint: Callable[[str], None] | None = None,
    stamps_at_end: bool = False,
    values: Mapping[str, Sequence[str]] | None = None,
) -> Written:
    """Write the days of one window's frame, each to its partition, atomically.

    The frame is cut into days by :func:`~edgereports.export.days.split_days` (rows outside
    ``[start, end)`` are left to their own window; v2 stamps, ``stamps_at_end``, are placed on
    the day of the bucket they cover) and written by :func:`write_days`.

    Raises:
        ValueError: the frame does not fit the schema of ``shape``.
        OSError: the disk refused; the partitions already moved stay (each is complete).
    """
    rows = split_days(frame, shape, days, start, end, stamps_at_end=stamps_at_end)
    return write_days(rows, report_dir, metadata=metadata, checkpoint=checkpoint, values=values)


def write_days(
    rows: DayRows,
    report_dir: Path,
    *,
    metadata: Mapping[str, Any],
    checkpoint: Callable[[str], None] | None = None,
    values: Mapping[str, Sequence[str]] | None = None,
) -> Written:
    """Write each day of ``rows`` to its partition, atomically; a day without rows loses its
    old partition.

    Args:
        rows: a window's rows by day.
        metadata: JSON-ready facts stored in every file (request, report name, window).
        checkpoint: called at ``"before-move"`` (a partition's temporary file is complete).
        values: the rows hold these fan-out values only (by dimension): each day's file
            keeps the rows of the other values it held (a backfill of added subscribers, or
            the history of removed ones) and replaces those of these.

    Raises:
        ValueError: a day's file holds other columns than the report's rows.
        OSError: the disk refused; the partitions already moved stay (each is complete).
    """
    target = rows.schema
    system = pa.system_memory_pool()
    written = files = removed = size = 0
    for day in rows.days:
        count = rows.count(day)
        kept = None if values is None else _kept_rows(report_dir, day, values, target)
        if count == 0 and (kept is None or kept.num_rows == 0):
            removed += remove_partition(report_dir, day)
            continue
        part = rows.table(day)
        if kept is not None and kept.num_rows:
            part = pa.concat_tables([part, kept])
            order = pc.sort_indices(part, sort_keys=rows.sort_keys, memory_pool=system)
            part = pc.take(part, order, memory_pool=system)
        info = {**metadata, "day": day.isoformat(), "rows": part.num_rows, "shape": rows.shape}
        info.setdefault("toolkit_version", __version__)
        info.setdefault("written_at", datetime.now(UTC).isoformat(timespec="seconds"))
        part = part.replace_schema_metadata({METADATA_KEY: json.dumps(info).encode("utf-8")})
        size += _write_part(part, partition_dir(report_dir, day), checkpoint, system)
        del part
        written += count
        files += 1
    return Written(
        rows=written, files=files, removed=removed, bytes=size, dimensions=rows.dimensions
    )


def _kept_rows(
    report_dir: Path, day: date, values: Mapping[str, Sequence[str]], target: Any
) -> Any | None:
    """The rows of a day's file whose fan-out values are not among ``values`` (None: no file)."""
    path = partition_dir(report_dir, day) / PART_FILE
    if not path.is_file():
        return None
    old = pq.read_table(path, partitioning=None)
    keep = None
    for dim, vals in values.items():
        if dim not in old.column_names:
            continue
        column = old.column(dim)
        outside = pc.invert(pc.is_in(column, value_set=pa.array(vals, type=column.type)))
        outside = pc.fill_null(outside, True)
        keep = outside if keep is None else pc.and_(keep, outside)
    old = old if keep is None else old.filter(keep)
    names = set(old.column_names)
    if any(f.name not in names for f in target):
        raise ValueError(f"the partition {path} has other columns than the report's rows")
    return old.select(target.names).cast(target)


def _write_part(
    table: Any, directory: Path, checkpoint: Callable[[str], None] | None, pool: Any
) -> int:
    before_move = None if checkpoint is None else lambda: checkpoint("before-move")
    return atomic_write(
        directory / PART_FILE,
        lambda fh: pq.write_table(table, fh, compression="snappy", memory_pool=pool),
        before_move=before_move,
    )
