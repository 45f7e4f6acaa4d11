"""The cache on disk: normalized rows in Arrow IPC segment files and a SQLite index.

Each fetched run of chunks is one segment file (``segments/<id>-<crc32>.arrow``, written to a
temporary name and renamed, so no reader sees half a file); the index (``index.sqlite``, WAL
mode, so two processes can share the directory) maps (series key, chunk) to its segment. A hit
reads each segment once, whatever the number of chunks it holds.

Integrity: a segment's name carries the CRC-32 of its bytes, and its metadata the identity of
what it holds (the series key, which covers the request with its fan-out value, and each
chunk's bounds and rows). A segment that cannot be read, whose bytes fail the checksum, or
whose identity is not what the index says is dropped with a warning: its chunks are misses,
fetched again. An index that SQLite cannot read is set aside (renamed ``*.damaged-<time>``)
and rebuilt from the segments that pass both checks.

Access: the index keeps, per scope (service address, API version, account), salted
fingerprints of the keys seen to work there (PBKDF2 of the key with a salt of this cache;
never the key), with when they last did. Rows are served only to a key whose fingerprint is
bound to the scope and was seen working in the last day.

With ``max_bytes``, the oldest segments are evicted first once the total size is over the
bound.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import sqlite3
import threading
import time
import uuid
import warnings
import zlib
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ...errors import ConfigError, EdgeReportsWarning

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
_IDENTITY = b"edgereports.identity"
#: PBKDF2 rounds of a key's fingerprint (computed once per client and cache): keys
#: are long random strings, the salt keeps a fingerprint from matching across caches.
_ROUNDS = 2_000
#: How long a key seen to work reads the cache before it must work again (a revoked key is
#: refused by its next answer at the latest a day after it was last seen working).
KEY_PROOF_SECONDS = 24 * 3600.0
_SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
    series TEXT NOT NULL, chunk INTEGER NOT NULL, segment TEXT NOT NULL, rows INTEGER NOT NULL,
    PRIMARY KEY (series, chunk));
CREATE TABLE IF NOT EXISTS segments (
    name TEXT PRIMARY KEY, bytes INTEGER NOT NULL, created REAL NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_segment ON chunks (segment);
CREATE TABLE IF NOT EXISTS keys (
    scope TEXT NOT NULL, fingerprint TEXT NOT NULL, seen REAL NOT NULL,
    PRIMARY KEY (scope, fingerprint));
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
#: Chunk bounds and rows: chunk start (epoch seconds) -> (chunk end, rows).
Chunks = Mapping[int, tuple[int, int]]


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


def _checksum(data: bytes | memoryview) -> str:
    return f"{zlib.crc32(data):08x}"


def _dropped(segment: str, why: str) -> None:
    warnings.warn(
        f"cache segment {segment} {why}; dropped, its chunks are fetched again",
        EdgeReportsWarning,
        stacklevel=4,
    )


class Store:
    """Segments and their index in one directory (thread- and process-safe)."""

    def __init__(self, root: Path, max_bytes: int | None = None) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self._local = threading.local()
        (root / SEGMENTS).mkdir(exist_ok=True)
        try:
            self._create()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise
            self._set_aside(exc)

    def recover(self, error: BaseException) -> None:
        """Set a damaged index aside and rebuild it (a query found it damaged)."""
        self._set_aside(error)

    def _create(self) -> None:
        with self._db() as db:
            _while_busy(lambda: db.executescript(_SCHEMA))
            db.execute("SELECT COUNT(*) FROM chunks").fetchone()

    def _set_aside(self, error: BaseException) -> None:
        """Rename a damaged index out of the way, and rebuild it from the sound segments."""
        db = getattr(self._local, "db", None)
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()
            self._local.db = None
        stamp = time.strftime("%Y%m%dT%H%M%S")
        aside = self.root / f"{INDEX}.damaged-{stamp}"
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.replace(self.root / f"{INDEX}{suffix}", f"{aside}{suffix}")
        self._create()
        rebuilt = self._rebuild()
        warnings.warn(
            f"the cache index {str(self.root / INDEX)!r} could not be read "
            f"({type(error).__name__}: {error}); it was set aside as {aside.name} and rebuilt "
            f"from {rebuilt} sound segment(s)",
            EdgeReportsWarning,
            stacklevel=4,
        )

    def _rebuild(self) -> int:
        """Index the segments whose bytes and identity check out; returns how many."""
        import pyarrow as pa

        count = 0
        for path in sorted((self.root / SEGMENTS).glob("*.arrow")):
            name = path.stem
            try:
                data = path.read_bytes()
                if _checksum(data) != name.rpartition("-")[2]:
                    raise ValueError("checksum")
                meta = pa.ipc.open_file(pa.BufferReader(data)).schema.metadata or {}
                identity = orjson.loads(meta[_IDENTITY])
                series = str(identity["series"])
                rows = [(series, int(c), name, int(n)) for c, _, n in identity["chunks"]]
            except (OSError, KeyError, TypeError, ValueError, pa.ArrowException):
                self._unlink(name)
                continue
            with self._db() as db:
                db.execute(
                    "INSERT OR REPLACE INTO segments (name, bytes, created) VALUES (?, ?, ?)",
                    (name, len(data), path.stat().st_mtime),
                )
                db.executemany(
                    "INSERT OR REPLACE INTO chunks (series, chunk, segment, rows) "
                    "VALUES (?, ?, ?, ?)",
                    rows,
                )
            count += 1
        return count

    # -- access ---------------------------------------------------------------------------

    def fingerprint(self, key: str) -> str:
        """A salted fingerprint of ``key`` (PBKDF2-SHA256 with this cache's salt): what binds
        entries to a key, never the key itself."""
        with self._db() as db:
            db.execute(
                "INSERT OR IGNORE INTO meta (name, value) VALUES ('salt', ?)",
                (uuid.uuid4().hex,),
            )
            salt = db.execute("SELECT value FROM meta WHERE name = 'salt'").fetchone()[0]
        digest = hashlib.pbkdf2_hmac("sha256", key.encode("utf-8"), salt.encode(), _ROUNDS)
        return digest.hex()

    def key_seen(self, scope: str, fingerprint: str, within: float = KEY_PROOF_SECONDS) -> bool:
        """A key of this fingerprint has been seen to work in ``scope`` in the last ``within``
        seconds (a key revoked since must prove itself again)."""
        with self._db() as db:
            found = db.execute(
                "SELECT 1 FROM keys WHERE scope = ? AND fingerprint = ? AND seen > ?",
                (scope, fingerprint, time.time() - within),
            ).fetchone()
        return found is not None

    def see_key(self, scope: str, fingerprint: str) -> None:
        """Record that a key of this fingerprint worked in ``scope``."""
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO keys (scope, fingerprint, seen) VALUES (?, ?, ?)",
                (scope, fingerprint, time.time()),
            )

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

    def held(self, series: Collection[str]) -> set[str]:
        """Those of ``series`` the index holds a chunk of."""
        with self._db() as db:
            return _distinct_in(
                db, "SELECT DISTINCT series FROM chunks WHERE series IN ({})", series
            )

    def read(
        self, segment: str, series: str, chunks: Sequence[int]
    ) -> tuple[pd.DataFrame, dict[str, Any], Any] | None:
        """A segment's rows, the attrs of the answer they came from and the request they
        answer; None when it is missing or damaged (its entries are then dropped: a miss)."""
        import pyarrow as pa

        found = self.read_table(segment, series, chunks)
        if found is None:
            return None
        try:
            frame = found[0].to_pandas()
        except (ValueError, pa.ArrowException):
            self.forget(segment)
            return None
        return frame, found[1], found[2]

    def read_table(
        self, segment: str, series: str, chunks: Sequence[int]
    ) -> tuple[pa.Table, dict[str, Any], Any] | None:
        """A segment as Arrow: table, attrs and the request it answers.

        None (the segment dropped with a warning, its chunks misses) when it is missing or
        unreadable, its bytes fail the checksum its name carries, or its identity is not
        ``series`` holding ``chunks``.
        """
        import pyarrow as pa

        path = self.root / SEGMENTS / f"{segment}.arrow"
        try:
            data = path.read_bytes()
        except OSError:
            self.forget(segment)
            return None
        why = None
        if _checksum(data) != segment.rpartition("-")[2]:
            why = "fails its checksum (damaged or replaced)"
        else:
            try:
                table = pa.ipc.open_file(pa.BufferReader(data)).read_all()
                meta = table.schema.metadata or {}
                attrs = orjson.loads(meta[_ATTRS])
                request = orjson.loads(meta[_REQUEST])
                identity = orjson.loads(meta[_IDENTITY])
                held = {int(c) for c, _, _ in identity["chunks"]}
                if identity["series"] != series or not held.issuperset(chunks):
                    why = "holds another series or other chunks than the index says"
            except (KeyError, TypeError, ValueError, pa.ArrowException):
                why = "cannot be read"
        if why is not None:
            _dropped(segment, why)
            self.forget(segment)
            return None
        return table, attrs, request

    # -- writing --------------------------------------------------------------------------

    def write(
        self,
        series: str,
        chunks: Chunks,
        frame: pd.DataFrame | pa.Table,
        attrs: dict[str, Any],
        request: Any,
    ) -> None:
        """Store ``frame`` (the rows of ``chunks``: chunk start → (end, rows), answering
        ``request``, which holds no key; a frame or its Arrow table) as one segment carrying
        its identity.

        Raises:
            OSError, sqlite3.Error: the directory cannot be written.
        """
        import pyarrow as pa

        table = (
            frame
            if isinstance(frame, pa.Table)
            else pa.Table.from_pandas(frame, preserve_index=False, nthreads=1)  # no thread pool
        )
        meta = dict(table.schema.metadata or {})
        meta[_ATTRS] = orjson.dumps(attrs, default=str)
        meta[_REQUEST] = orjson.dumps(request)
        meta[_IDENTITY] = orjson.dumps(
            {"series": series, "chunks": [[c, e, n] for c, (e, n) in sorted(chunks.items())]}
        )
        rows = {c: n for c, (_, n) in chunks.items()}
        self._write_table(series, rows, table.replace_schema_metadata(meta))

    def entries(self, series: str) -> list[tuple[int, str, int]]:
        """The stored chunks of ``series``: (chunk, segment, rows), in time order."""
        with self._db() as db:
            return db.execute(
                "SELECT chunk, segment, rows FROM chunks WHERE series = ? ORDER BY chunk", (series,)
            ).fetchall()

    def _write_table(self, series: str, chunks: Mapping[int, int], table: pa.Table) -> None:
        import pyarrow as pa

        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, table.schema) as out:
            out.write_table(table)
        data = sink.getvalue()
        name = f"{uuid.uuid4().hex}-{_checksum(memoryview(data))}"
        final = self.root / SEGMENTS / f"{name}.arrow"
        temp = final.with_suffix(".tmp")
        try:
            with open(temp, "wb") as file:
                file.write(memoryview(data))
            os.replace(temp, final)
        except BaseException:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise
        size = data.size
        with self._db() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(
                    "INSERT INTO segments (name, bytes, created) VALUES (?, ?, ?)",
                    (name, size, time.time()),
                )
                replaced = self._segments_of(db, series, list(chunks))
                db.executemany(
                    "INSERT OR REPLACE INTO chunks (series, chunk, segment, rows) "
                    "VALUES (?, ?, ?, ?)",
                    [(series, chunk, name, rows) for chunk, rows in chunks.items()],
                )
                orphans = self._orphans(db, replaced)
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

    @staticmethod
    def _segments_of(db: sqlite3.Connection, series: str, chunks: list[int]) -> set[str]:
        """The segments that hold ``chunks`` of ``series`` now (a write may replace them)."""
        query = "SELECT DISTINCT segment FROM chunks WHERE series = ? AND chunk IN ({})"
        return _distinct_in(db, query, chunks, before=(series,))

    def _orphans(self, db: sqlite3.Connection, candidates: set[str]) -> list[str]:
        """Those of ``candidates`` no chunk points to any more (replaced), dropped: only the
        segments a write replaced are looked at, so a write costs the same in a full cache."""
        names = [
            n
            for n in sorted(candidates)
            if db.execute("SELECT 1 FROM chunks WHERE segment = ? LIMIT 1", (n,)).fetchone() is None
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
        """Remove every entry and segment; returns the number of segment files removed.

        Works whatever state the index is in: one SQLite cannot read is set aside first.
        """
        try:
            with self._db() as db:
                db.execute("BEGIN IMMEDIATE")
                db.execute("DELETE FROM chunks")
                db.execute("DELETE FROM segments")
                db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            self._set_aside(exc)
            return self.clear()
        removed = 0
        for path in (self.root / SEGMENTS).iterdir():
            with contextlib.suppress(OSError):
                path.unlink()
                removed += path.suffix == ".arrow"
        return removed


def _distinct_in(
    db: sqlite3.Connection, query: str, values: Collection[Any], *, before: tuple[Any, ...] = ()
) -> set[str]:
    """The first column of ``query`` over ``values``, its ``IN ({})`` list filled 500 values at a
    time (under SQLite's limit on variables), ``before`` bound ahead of them."""
    items, found = list(values), set[str]()
    for at in range(0, len(items), 500):
        some = items[at : at + 500]
        rows = db.execute(query.format(",".join("?" * len(some))), (*before, *some))
        found.update(str(row[0]) for row in rows)
    return found
