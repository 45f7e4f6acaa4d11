"""The cache on disk: normalized rows in Arrow IPC segment files and a SQLite index.

Each fetched run of chunks is one segment file (``segments/<id>.arrow``, written to a
temporary name and renamed, so no reader sees half a file); the index (``index.sqlite``, WAL
mode, so two processes can share the directory) maps (series key, chunk) to its segment. A hit
reads each segment once, whatever the number of chunks it holds. A segment that cannot be read
is a miss: its entries are dropped and the chunks fetched again. With ``max_bytes``, the oldest
segments are evicted first once the total size is over the bound.
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ...errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["INDEX", "SEGMENTS", "Store"]

INDEX = "index.sqlite"
SEGMENTS = "segments"
#: How long a process waits for another one holding the index.
_BUSY_SECONDS = 30.0
_ATTRS = b"edgereports.attrs"
_REQUEST = b"edgereports.request"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
    series TEXT NOT NULL, chunk INTEGER NOT NULL, segment TEXT NOT NULL, rows INTEGER NOT NULL,
    PRIMARY KEY (series, chunk));
CREATE TABLE IF NOT EXISTS segments (
    name TEXT PRIMARY KEY, bytes INTEGER NOT NULL, created REAL NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_segment ON chunks (segment);
"""


def _while_busy(call: Callable[[], object]) -> None:
    """``call``, tried again while another process holds the index (up to a deadline)."""
    deadline = time.monotonic() + _BUSY_SECONDS
    while True:
        try:
            call()
            return
        except sqlite3.OperationalError as exc:
            busy = "locked" in str(exc) or "busy" in str(exc)
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(random.uniform(0.01, 0.05))


def check_directory(path: str | os.PathLike[str]) -> Path:
    """The cache directory, created if missing.

    Raises:
        ConfigError: ``path`` is not a directory this process can write to.
    """
    root = Path(path).expanduser()
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = root / f".probe-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(
            f"cache must be a writable directory, got {str(root)!r} ({exc.strerror or exc})"
        ) from None
    return root


class Store:
    """Segments and their index in one directory (thread- and process-safe)."""

    def __init__(self, root: Path, max_bytes: int | None = None) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self._local = threading.local()
        (root / SEGMENTS).mkdir(exist_ok=True)
        with self._db() as db:
            _while_busy(lambda: db.executescript(_SCHEMA))

    @contextlib.contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.root / INDEX, timeout=_BUSY_SECONDS, isolation_level=None)
            # WAL is kept in the file: only its creator switches, and processes opening a new
            # index at once may find it busy without waiting, so they try again
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                _while_busy(lambda: db.execute("PRAGMA journal_mode=WAL"))
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        yield db

    # -- reading --------------------------------------------------------------------------

    def lookup(self, series: str, chunks: Sequence[int]) -> dict[int, str]:
        """The segment of each stored chunk of ``series`` (chunk start, epoch seconds → segment)."""
        with self._db() as db:
            found = dict(
                db.execute("SELECT chunk, segment FROM chunks WHERE series = ?", (series,))
            )
        return {c: found[c] for c in chunks if c in found}

    def read(self, segment: str) -> tuple[pd.DataFrame, dict[str, Any], Any] | None:
        """A segment's rows, the attrs of the answer they came from and the request they
        answer; None when it is missing or damaged (its entries are then dropped: a miss)."""
        import pyarrow as pa

        found = self.read_table(segment)
        if found is None:
            return None
        try:
            frame = found[0].to_pandas()
        except (ValueError, pa.ArrowException):
            self.forget(segment)
            return None
        return frame, found[1], found[2]

    def read_table(self, segment: str) -> tuple[pa.Table, dict[str, Any], Any] | None:
        """A segment as Arrow: table, attrs and the request it answers; None if damaged."""
        import pyarrow as pa

        path = self.root / SEGMENTS / f"{segment}.arrow"
        try:
            with pa.memory_map(str(path)) as source:
                table = pa.ipc.open_file(source).read_all()
            meta = table.schema.metadata or {}
            attrs = orjson.loads(meta[_ATTRS])
            request = orjson.loads(meta[_REQUEST])
        except (OSError, KeyError, ValueError, pa.ArrowException, orjson.JSONDecodeError):
            self.forget(segment)
            return None
        return table, attrs, request

    # -- writing --------------------------------------------------------------------------

    def write(
        self,
        series: str,
        chunks: Mapping[int, int],
        frame: pd.DataFrame,
        attrs: dict[str, Any],
        request: Any,
    ) -> None:
        """Store ``frame`` (the rows of ``chunks``: chunk → rows, answering ``request``, which
        holds no key) as one segment.

        Raises:
            OSError, sqlite3.Error: the directory cannot be written.
        """
        import pyarrow as pa

        table = pa.Table.from_pandas(frame, preserve_index=False)
        meta = dict(table.schema.metadata or {})
        meta[_ATTRS] = orjson.dumps(attrs, default=str)
        meta[_REQUEST] = orjson.dumps(request)
        self._write_table(series, chunks, table.replace_schema_metadata(meta))

    def entries(self, series: str) -> list[tuple[int, str, int]]:
        """The stored chunks of ``series``: (chunk, segment, rows), in time order."""
        with self._db() as db:
            return db.execute(
                "SELECT chunk, segment, rows FROM chunks WHERE series = ? ORDER BY chunk", (series,)
            ).fetchall()

    def _write_table(self, series: str, chunks: Mapping[int, int], table: pa.Table) -> None:
        import pyarrow as pa

        name = uuid.uuid4().hex
        final = self.root / SEGMENTS / f"{name}.arrow"
        temp = final.with_suffix(".tmp")
        try:
            with pa.OSFile(str(temp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as out:
                out.write_table(table)
            os.replace(temp, final)
        except BaseException:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise
        size = final.stat().st_size
        with self._db() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(
                    "INSERT INTO segments (name, bytes, created) VALUES (?, ?, ?)",
                    (name, size, time.time()),
                )
                db.executemany(
                    "INSERT OR REPLACE INTO chunks (series, chunk, segment, rows) "
                    "VALUES (?, ?, ?, ?)",
                    [(series, chunk, name, rows) for chunk, rows in chunks.items()],
                )
                orphans = self._orphans(db)
                evicted = self._evict(db)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        for old in (*orphans, *evicted):
            self._unlink(old)

    def forget(self, segment: str) -> None:
        """Drop a segment and its entries (a damaged one: its chunks become misses)."""
        with contextlib.suppress(sqlite3.Error), self._db() as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM chunks WHERE segment = ?", (segment,))
            db.execute("DELETE FROM segments WHERE name = ?", (segment,))
            db.execute("COMMIT")
        self._unlink(segment)

    def _orphans(self, db: sqlite3.Connection) -> list[str]:
        """Segments no chunk points to any more (replaced by a refresh), dropped."""
        names = [
            row[0]
            for row in db.execute(
                "SELECT name FROM segments WHERE name NOT IN (SELECT DISTINCT segment FROM chunks)"
            )
        ]
        db.executemany("DELETE FROM segments WHERE name = ?", [(n,) for n in names])
        return names

    def _evict(self, db: sqlite3.Connection) -> list[str]:
        """The oldest segments past ``max_bytes``, dropped with their chunks."""
        if self.max_bytes is None:
            return []
        total = db.execute("SELECT COALESCE(SUM(bytes), 0) FROM segments").fetchone()[0]
        evicted: list[str] = []
        if total <= self.max_bytes:
            return evicted
        for name, size in db.execute(
            "SELECT name, bytes FROM segments ORDER BY created"
        ).fetchall():
            if total <= self.max_bytes:
                break
            evicted.append(name)
            total -= size
        db.executemany("DELETE FROM chunks WHERE segment = ?", [(n,) for n in evicted])
        db.executemany("DELETE FROM segments WHERE name = ?", [(n,) for n in evicted])
        return evicted

    def _unlink(self, segment: str) -> None:
        with contextlib.suppress(OSError):
            (self.root / SEGMENTS / f"{segment}.arrow").unlink()

    # -- the whole cache ------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """Entries (chunks), segments, bytes, rows and the bound."""
        with self._db() as db:
            chunks, rows, series = db.execute(
                "SELECT COUNT(*), COALESCE(SUM(rows), 0), COUNT(DISTINCT series) FROM chunks"
            ).fetchone()
            segments, size = db.execute(
                "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM segments"
            ).fetchone()
        return {
            "path": str(self.root),
            "series": series,
            "chunks": chunks,
            "rows": rows,
            "segments": segments,
            "bytes": size,
            "max_bytes": self.max_bytes,
        }

    def clear(self) -> int:
        """Remove every entry and segment; returns the number of segments removed."""
        with self._db() as db:
            db.execute("BEGIN IMMEDIATE")
            names = [row[0] for row in db.execute("SELECT name FROM segments")]
            db.execute("DELETE FROM chunks")
            db.execute("DELETE FROM segments")
            db.execute("COMMIT")
        for path in (self.root / SEGMENTS).iterdir():
            with contextlib.suppress(OSError):
                path.unlink()
        return len(names)
