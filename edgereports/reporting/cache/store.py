"""The cache on disk: normalized rows in Arrow IPC segment files and a SQLite index.

The rows a pull's writer has at hand are written as one segment file
(``segments/<id>-<crc32>.arrow``, written to a temporary name and renamed, so no reader sees
half a file) holding one entry per series (see :mod:`.segments`), and indexed in one
transaction; the index (``index.sqlite``, WAL mode, so two processes can share the directory)
maps (series key, chunk) to its segment. A pull reads each segment once, whatever the number
of entries and chunks it holds.

Integrity: a segment's name carries the CRC-32 of its bytes, and its metadata the identity of
what it holds (for each entry the series key, which covers the request with its fan-out
value, and each chunk's bounds and rows). A segment that cannot be read, whose bytes fail the
checksum, or whose identity is not what the index says is dropped with a warning: the chunks
of every entry it holds are misses, fetched again. An index that SQLite cannot read is set
aside (renamed ``*.damaged-<time>``) and rebuilt from the segments that pass both checks.

Access: the index keeps, per scope (service address, API version, account), salted
fingerprints of the keys seen to work there (PBKDF2 of the key with a salt of this cache;
never the key), with when they last did. Rows are served only to a key whose fingerprint is
bound to the scope and was seen working in the last day.

With ``max_bytes``, the oldest segments are evicted first (with every entry they hold) once
the total size is over the bound.
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
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError, EdgeReportsWarning
from .segments import Chunks, Entry, Segment, encode, group, name_of

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["INDEX", "SEGMENTS", "Reader", "Store"]

INDEX = "index.sqlite"
SEGMENTS = "segments"
#: How long a process waits for another one holding the index.
_BUSY_SECONDS = 30.0
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
                segment = Segment(name, path.read_bytes())
                created = path.stat().st_mtime
            except (OSError, KeyError, TypeError, ValueError, pa.ArrowException):
                self._unlink(name)
                continue
            rows = [
                (series, c, name, n)
                for series, chunks in segment.chunks().items()
                for c, (_, n) in chunks.items()
            ]
            with self._db() as db:
                db.execute(
                    "INSERT OR REPLACE INTO segments (name, bytes, created) VALUES (?, ?, ?)",
                    (name, segment.size, created),
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
        query = "SELECT value FROM meta WHERE name = 'salt'"
        with self._db() as db:
            found = db.execute(query).fetchone()  # a read: no write transaction once salted
            if found is None:
                db.execute(
                    "INSERT OR IGNORE INTO meta (name, value) VALUES ('salt', ?)",
                    (uuid.uuid4().hex,),
                )
                found = db.execute(query).fetchone()
            salt = found[0]
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

    def open(self, segment: str) -> Segment | None:
        """A segment read and checked; None (it is dropped, its chunks misses: with a
        warning unless the file is gone) when it is missing or unreadable, or its bytes fail
        the checksum its name carries."""
        import pyarrow as pa

        try:
            data = (self.root / SEGMENTS / f"{segment}.arrow").read_bytes()
        except OSError:
            self.forget(segment)
            return None
        try:
            return Segment(segment, data)
        except (KeyError, TypeError, ValueError, pa.ArrowException) as exc:
            checksum = isinstance(exc, ValueError) and str(exc) == "checksum"
            self.drop(segment, "fails its checksum (damaged or replaced)" if checksum else
                      "cannot be read")  # fmt: skip
            return None

    def drop(self, segment: str, why: str) -> None:
        """Drop a segment found unsound, with a warning saying ``why``."""
        warnings.warn(
            f"cache segment {segment} {why}; dropped, its chunks are fetched again",
            EdgeReportsWarning,
            stacklevel=5,
        )
        self.forget(segment)

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
        ``request``, which holds no key; a frame or its Arrow table) as one segment.

        Raises:
            OSError, sqlite3.Error: the directory cannot be written.
        """
        import pyarrow as pa

        table = (
            frame
            if isinstance(frame, pa.Table)
            else pa.Table.from_pandas(frame, preserve_index=False, nthreads=1)  # no thread pool
        )
        self.write_entries([Entry(series, chunks, table, attrs, request)], shared=False)

    def entries(self, series: str) -> list[tuple[int, str, int]]:
        """The stored chunks of ``series``: (chunk, segment, rows), in time order."""
        with self._db() as db:
            return db.execute(
                "SELECT chunk, segment, rows FROM chunks WHERE series = ? ORDER BY chunk", (series,)
            ).fetchall()

    def write_entries(self, entries: Sequence[Entry], *, shared: bool = True) -> None:
        """Store ``entries`` in one transaction of the index: in one segment file per schema
        (``shared``), or one file each. An entry replaces the chunks of its series it holds.

        Raises:
            OSError, sqlite3.Error: the directory cannot be written.
        """
        files: list[tuple[str, int, list[Entry]]] = []
        try:
            for some in group(entries) if shared else [[e] for e in entries]:
                data = encode(some)
                name = name_of(data)
                self._write_file(name, data)
                files.append((name, data.size, some))
            self._index(files)
        except BaseException:
            for name, _, _ in files:  # not indexed: no reader will look for them
                self._unlink(name)
            raise

    def _write_file(self, name: str, data: pa.Buffer) -> None:
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

    def _index(self, files: Sequence[tuple[str, int, Sequence[Entry]]]) -> None:
        """Index the segments just written (name, bytes, entries), in one transaction."""
        now = time.time()
        with self._db() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    "INSERT INTO segments (name, bytes, created) VALUES (?, ?, ?)",
                    [(name, size, now) for name, size, _ in files],
                )
                replaced: set[str] = set()
                for name, _, some in files:
                    for entry in some:
                        replaced |= self._segments_of(db, entry.series, list(entry.chunks))
                        db.executemany(
                            "INSERT OR REPLACE INTO chunks (series, chunk, segment, rows) "
                            "VALUES (?, ?, ?, ?)",
                            [(entry.series, c, name, n) for c, (_, n) in entry.chunks.items()],
                        )
                # a file of this batch whose every chunk a later entry replaced is one too
                orphans = self._orphans(db, replaced | {name for name, _, _ in files})
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


class Reader:
    """Reads the entries of segments for one pull: a file is read and checked once however
    many of its entries are asked for (the last few files read are kept; thread-safe).

    Args:
        store: the store.
        keep: how many files to keep (None: all).
    """

    def __init__(self, store: Store, keep: int | None = 8) -> None:
        self.store = store
        self.keep = keep
        self._kept: OrderedDict[str, Segment | None] = OrderedDict()
        self._lock = threading.Lock()

    def entry(self, segment: str, series: str, chunks: Sequence[int]) -> Entry | None:
        """The entry of ``series`` holding ``chunks`` in ``segment``; None when the file is
        missing or unsound, or does not hold them (it is then dropped with a warning: the
        index said it did)."""
        with self._lock:
            known = segment in self._kept
            found = self._kept.get(segment)
            if known:
                self._kept.move_to_end(segment)
        if not known:
            found = self.store.open(segment)
            with self._lock:
                self._kept[segment] = found
                while self.keep is not None and len(self._kept) > self.keep:
                    self._kept.popitem(last=False)
        if found is None:
            return None
        entry = found.entry(series, chunks)
        if entry is None:
            self.store.drop(segment, "holds another series or other chunks than the index says")
            with self._lock:
                self._kept[segment] = None
        return entry

    def frame(
        self, segment: str, series: str, chunks: Sequence[int]
    ) -> tuple[pd.DataFrame, dict[str, Any], Any] | None:
        """:meth:`entry` as a frame: its rows, the attrs of the answer they came from and
        the request they answer (None as :meth:`entry`, or when its rows cannot be
        converted: the file is then dropped)."""
        import pyarrow as pa

        entry = self.entry(segment, series, chunks)
        if entry is None:
            return None
        try:
            frame = entry.table.to_pandas()
        except (ValueError, pa.ArrowException):
            self.store.forget(segment)
            with self._lock:
                self._kept[segment] = None
            return None
        return frame, entry.attrs, entry.request


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
