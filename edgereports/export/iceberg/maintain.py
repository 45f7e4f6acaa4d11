"""Maintenance of a report's Iceberg table: compact, expire snapshots, delete unused files.

Each day of several data files is rewritten as one (a transaction that changes no row), the
snapshots older than the job's ``retention`` are expired, and then every file under the
table's location that no remaining snapshot, manifest or metadata file uses, and that is
older than the retention, is deleted: the files of expired snapshots, and those of commits
that never happened (a writer killed, or refused by the catalog). A reader holding a snapshot
younger than the retention keeps reading; so does a writer whose files are younger, so the
retention must outlast a write.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import urlsplit

from ..._dependencies import lazy_import
from ..days import DAY_COLUMN
from ..job import Job
from ..reports import ReportJob
from ..summary import Maintenance
from .table import IcebergReport, open_table

_expr = lazy_import("pyiceberg.expressions", pip="edgereports[iceberg]")
_fs = lazy_import("pyarrow.fs")

__all__ = ["maintain_table", "remove_unused"]


def maintain_table(job: Job, report: ReportJob) -> Maintenance:
    """Compact each day, expire the snapshots older than the retention, delete the files no
    longer used that are older than it (:func:`remove_unused`)."""
    started = time.monotonic()
    opened = open_table(job, report, create=False)
    if opened is None:
        return Maintenance(report.name, 0, 0, 0, 0, time.monotonic() - started)
    table = opened.table
    files = table.inspect.files()
    before = files.num_rows
    per_day: dict[date, int] = {}
    for p in files.column("partition").to_pylist():
        per_day[p[DAY_COLUMN]] = per_day.get(p[DAY_COLUMN], 0) + 1
    for day, count in sorted(per_day.items()):
        if count > 1:
            _compact(opened, day)
    older = datetime.now(UTC) - job.retention
    table.maintenance.expire_snapshots().older_than(older).commit()
    table.refresh()
    removed = remove_unused(table, older)
    after = table.inspect.files()
    rows = sum(after.column("record_count").to_pylist())
    return Maintenance(
        report.name, before, after.num_rows, removed, rows, time.monotonic() - started
    )


def _compact(opened: IcebergReport, day: date) -> None:
    """Rewrite one day's rows as one data file (one transaction; the rows unchanged)."""
    where = _expr.EqualTo(DAY_COLUMN, day.isoformat())

    def transaction(tx: Any) -> None:
        rows = opened.table.scan(row_filter=where).to_arrow()
        tx.overwrite(rows.cast(opened.table.schema().as_arrow()), overwrite_filter=where)

    opened._commit(transaction)


def _key(path: str) -> str:
    """A file's path without its scheme: ``bucket/key`` on object storage, the local path."""
    parts = urlsplit(path)
    if parts.scheme in ("", "file"):
        return parts.path if parts.scheme else path
    return f"{parts.netloc}{parts.path}"


def used_files(table: Any) -> set[str]:
    """The files (as :func:`_key` names them) the table's snapshots and metadata use."""
    used = {_key(table.metadata_location)}
    used |= {_key(p) for p in table.inspect.metadata_log_entries().column("file").to_pylist()}
    for snapshot in table.snapshots():
        used.add(_key(snapshot.manifest_list))
    if table.snapshots():
        used |= {_key(p) for p in table.inspect.all_manifests().column("path").to_pylist()}
        used |= {_key(p) for p in table.inspect.all_files().column("file_path").to_pylist()}
    return used


def _listed(table: Any) -> Iterator[tuple[str, Any, datetime | None]]:
    """Every file under the table's location: its key, the file system holding it and when
    it was last written."""
    location = table.location()
    parts = urlsplit(location)
    filesystem = table.io.fs_by_scheme(parts.scheme or "file", parts.netloc or None)
    base = _key(location).rstrip("/")
    selector = _fs.FileSelector(base, recursive=True, allow_not_found=True)
    for info in filesystem.get_file_info(selector):
        if info.type == _fs.FileType.File:
            mtime = info.mtime
            when = None if mtime is None else mtime.astimezone(UTC)
            yield info.path, filesystem, when


def remove_unused(table: Any, older_than: datetime) -> int:
    """Delete the files under the table's location that nothing of the table uses and that
    were last written before ``older_than``; returns how many."""
    used = used_files(table)
    removed = 0
    for path, filesystem, when in _listed(table):
        if path in used or when is None or when >= older_than:
            continue
        filesystem.delete_file(path)
        removed += 1
    return removed
