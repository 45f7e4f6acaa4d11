"""The cache's index: which segment holds each stored chunk of a series, the segments' sizes,
and the keys seen to work (SQLite in WAL mode, so two processes can share the directory).

The index has one row per *entry* (the chunks of one series in one segment file, with each
chunk's rows), not one per chunk: storing a pull adds a row per part. An entry that a later
one replaces in part keeps the chunks it still serves; one replaced whole is removed, and a
segment no entry points to any more is dropped.
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import threading
import time
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from ...errors import EdgeReportsWarning

__all__ = ["INDEX", "Index", "Placed"]

INDEX = "index.sqlite"
#: How long a process waits for another one holding the index.
_BUSY_SECONDS = 30.0
_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    series TEXT NOT NULL, segment TEXT NOT NULL, first INTEGER NOT NULL, last INTEGER NOT NULL,
    chunks TEXT NOT NULL, count INTEGER NOT NULL, rows INTEGER NOT NULL,
    PRIMARY KEY (series, segment)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_segment ON entries (segment);
CREATE TABLE IF NOT EXISTS segments (
    name TEXT PRIMARY KEY, bytes INTEGER NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS keys (
    scope TEXT NOT NULL, fingerprint TEXT NOT NULL, seen REAL NOT NULL,
    PRIMARY KEY (scope, fingerprint));
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
#: the table of the first layout (a row per chunk): an index holding it is rebuilt
_FIRST_LAYOUT = "chunks"

#: A segment to index: its name, size (bytes), when it was made, and its entries (series ->
#: chunk start -> rows).
Placed = tuple[str, int, float, Sequence[tuple[str, Mapping[int, int]]]]


def while_busy(call: Callable[[], object]) -> None:
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


def _chunks(listed: object, *, typed: bool = True) -> dict[int, int] | None:
    """An entry's chunks (start -> rows) from their JSON form (the starts, then the rows);
    None when the column holds anything else (a garbage row: its entry is dropped).

    ``typed=False`` checks the form but not that every value is an integer: for a lookup,
    which only matches the starts against integers (a hit reads one row per part, and the
    check would cost more than the parse).
    """
    try:
        starts, rows = orjson.loads(listed)  # type: ignore[arg-type]
    except (TypeError, ValueError):  # not text, not JSON (orjson's error is a ValueError)
        return None
    if type(starts) is not list or type(rows) is not list or len(starts) != len(rows):
        return None
    if typed and ({type(v) for v in starts} | {type(v) for v in rows}) - {int}:
        return None
    return dict(zip(starts, rows, strict=True))


class Index:
    """The index file of a cache directory (thread-safe: a connection per thread).

    An index set aside gets a new generation: every thread's connection to the old file is
    then closed on its next use, and the thread opens the new file (no write goes on into
    the file set aside).
    """

    def __init__(self, path: Path, unlink: Callable[[str], None] = lambda segment: None) -> None:
        self.path = path
        self.unlink = unlink  # removes a segment's file (one no entry points to any more)
        self._local = threading.local()
        self._generation = 0

    @contextlib.contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection (made on first use, and anew after a set-aside)."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is not None and self._local.generation != self._generation:
            self.reconnect()
            db = None
        if db is None:
            db = sqlite3.connect(self.path, timeout=_BUSY_SECONDS, isolation_level=None)
            # WAL is kept in the file: only its creator switches, and processes opening a new
            # index at once may find it busy without waiting, so they try again
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                while_busy(lambda: db.execute("PRAGMA journal_mode=WAL"))
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
            self._local.generation = self._generation
        yield db

    def reconnect(self) -> None:
        """Close this thread's connection (the next use opens the file again)."""
        db = getattr(self._local, "db", None)
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()
            self._local.db = None

    def healthy(self) -> bool:
        """The file reads as a sound index on a connection of its own (a query that failed
        on one connection may have met another's write half-way)."""
        try:
            db = sqlite3.connect(self.path, timeout=_BUSY_SECONDS)
        except sqlite3.Error:
            return False
        try:
            db.execute("SELECT COUNT(*) FROM entries").fetchone()
            return bool(db.execute("PRAGMA quick_check").fetchone()[0] == "ok")
        except sqlite3.Error:
            return False
        finally:
            db.close()

    def create(self) -> bool:
        """Make the tables; True when the index was of the first layout (its entries are
        then gone: the caller indexes the segments again).

        Raises:
            sqlite3.DatabaseError: the file is not an index SQLite can read.
        """
        with self.connection() as db:
            while_busy(lambda: db.executescript(_SCHEMA))
            first = db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (_FIRST_LAYOUT,)
            ).fetchone()
            if first is not None:
                script = f"BEGIN IMMEDIATE; DROP TABLE IF EXISTS {_FIRST_LAYOUT}; "
                while_busy(lambda: db.executescript(script + "DELETE FROM segments; COMMIT;"))
            db.execute("SELECT COUNT(*) FROM entries").fetchone()
        return first is not None

    def set_aside(self) -> Path:
        """Rename the index (and its WAL files) out of the way; returns the new name."""
        self._generation += 1
        self.reconnect()
        aside = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
        return aside

    # -- reading --------------------------------------------------------------------------

    def lookup(self, series: str, chunks: Sequence[int]) -> dict[int, str]:
        """The segment of each stored chunk of ``series`` among ``chunks`` (chunk start, epoch
        seconds → segment)."""
        if not chunks:
            return {}
        wanted = set(chunks)
        with self.connection() as db:
            rows = db.execute(
                "SELECT segment, chunks FROM entries WHERE series = ? AND last >= ? AND first <= ?",
                (series, min(chunks), max(chunks)),
            ).fetchall()
        found: dict[int, str] = {}
        for segment, listed in rows:
            held = _chunks(listed, typed=False)
            if held is None:
                self._drop_garbage(series, segment)
                continue
            found.update((c, segment) for c in held if c in wanted)
        return found

    def held(self, series: Collection[str]) -> set[str]:
        """Those of ``series`` the index holds a chunk of."""
        with self.connection() as db:
            return distinct_in(
                db, "SELECT DISTINCT series FROM entries WHERE series IN ({})", series
            )

    def stored(self, series: str) -> list[tuple[int, str, int]]:
        """The stored chunks of ``series``: (chunk, segment, rows), in time order."""
        with self.connection() as db:
            rows = db.execute(
                "SELECT segment, chunks FROM entries WHERE series = ?", (series,)
            ).fetchall()
        out: list[tuple[int, str, int]] = []
        for segment, listed in rows:
            held = _chunks(listed)
            if held is None:
                self._drop_garbage(series, segment)
                continue
            out += [(c, segment, n) for c, n in held.items()]
        return sorted(out)

    def _drop_garbage(self, series: str, segment: str) -> None:
        """Drop an entry whose row cannot be read (its chunks are misses, fetched again), with
        its segment when no other entry points to it, and say so."""
        with self.connection() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                _delete_entry(db, series, segment)
                gone = self._orphans(db, {segment})
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        for name in gone:
            self.unlink(name)
        _warn_garbage(self.path, segment)

    # -- writing --------------------------------------------------------------------------

    def add(
        self,
        placed: Sequence[Placed],
        max_bytes: int | None = None,
        keys: Sequence[tuple[str, str]] = (),
    ) -> list[str]:
        """Index new segments in one transaction: each entry replaces the chunks of its
        series it holds; ``keys`` (scope, fingerprint) are recorded as seen to work now.
        Returns the segments to remove: those no entry points to any more, and the oldest
        past ``max_bytes`` (evicted)."""
        with self.connection() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                now = time.time()
                db.executemany(
                    "INSERT OR REPLACE INTO keys (scope, fingerprint, seen) VALUES (?, ?, ?)",
                    [(scope, fingerprint, now) for scope, fingerprint in keys],
                )
                db.executemany(
                    "INSERT OR REPLACE INTO segments (name, bytes, created) VALUES (?, ?, ?)",
                    [(name, size, created) for name, size, created, _ in placed],
                )
                touched: set[str] = set()
                for name, _, _, entries in placed:
                    for series, chunks in entries:
                        touched |= self._place(db, series, name, chunks)
                # a new segment whose every chunk a later entry replaced is one too
                gone = self._orphans(db, touched | {name for name, _, _, _ in placed})
                gone += self._evict(db, max_bytes)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return gone

    def _place(
        self, db: sqlite3.Connection, series: str, segment: str, chunks: Mapping[int, int]
    ) -> set[str]:
        """Add the entry of ``series`` in ``segment``, taking its chunks from the entries that
        held them; returns the segments of those entries."""
        if not chunks:
            return set()
        first, last = min(chunks), max(chunks)
        touched: set[str] = set()
        for other, listed in db.execute(
            "SELECT segment, chunks FROM entries WHERE series = ? AND last >= ? AND first <= ?",
            (series, first, last),
        ).fetchall():
            held = _chunks(listed)
            if held is None:  # a garbage row: dropped (its segment too, if no entry is left)
                _delete_entry(db, series, other)
                touched.add(other)
                _warn_garbage(self.path, other)
                continue
            left = {c: n for c, n in held.items() if c not in chunks}
            if len(left) == len(held):
                continue
            touched.add(other)
            if left:
                db.execute(
                    "UPDATE entries SET first = ?, last = ?, chunks = ?, count = ?, rows = ? "
                    "WHERE series = ? AND segment = ?",
                    (*_columns(left), series, other),
                )
            else:
                _delete_entry(db, series, other)
        db.execute(
            "INSERT OR REPLACE INTO entries (series, segment, first, last, chunks, count, rows) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (series, segment, *_columns(chunks)),
        )
        return touched

    @staticmethod
    def _orphans(db: sqlite3.Connection, candidates: set[str]) -> list[str]:
        """Those of ``candidates`` no entry points to any more, dropped: only the segments
        a write touched are looked at, so a write costs the same in a full cache."""
        names = [
            n
            for n in sorted(candidates)
            if db.execute("SELECT 1 FROM entries WHERE segment = ? LIMIT 1", (n,)).fetchone()
            is None
        ]
        db.executemany("DELETE FROM segments WHERE name = ?", [(n,) for n in names])
        return names

    @staticmethod
    def _evict(db: sqlite3.Connection, max_bytes: int | None) -> list[str]:
        """The oldest segments past ``max_bytes``, dropped with their entries."""
        if max_bytes is None:
            return []
        total = db.execute("SELECT COALESCE(SUM(bytes), 0) FROM segments").fetchone()[0]
        evicted: list[str] = []
        if total <= max_bytes:
            return evicted
        for name, size in db.execute(
            "SELECT name, bytes FROM segments ORDER BY created"
        ).fetchall():
            if total <= max_bytes:
                break
            evicted.append(name)
            total -= size
        db.executemany("DELETE FROM entries WHERE segment = ?", [(n,) for n in evicted])
        db.executemany("DELETE FROM segments WHERE name = ?", [(n,) for n in evicted])
        return evicted

    def forget(self, segment: str) -> None:
        """Drop a segment and its entries."""
        with self.connection() as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM entries WHERE segment = ?", (segment,))
            db.execute("DELETE FROM segments WHERE name = ?", (segment,))
            db.execute("COMMIT")

    def clear(self) -> None:
        """Drop every entry and segment (the keys seen stay)."""
        with self.connection() as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM entries")
            db.execute("DELETE FROM segments")
            db.execute("COMMIT")

    def info(self) -> dict[str, Any]:
        """Series, chunks, rows, segments and bytes."""
        with self.connection() as db:
            chunks, rows, series = db.execute(
                "SELECT COALESCE(SUM(count), 0), COALESCE(SUM(rows), 0), "
                "COUNT(DISTINCT series) FROM entries"
            ).fetchone()
            segments, size = db.execute(
                "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM segments"
            ).fetchone()
        return {"series": series, "chunks": chunks, "rows": rows, "segments": segments,
                "bytes": size}  # fmt: skip

    # -- keys -----------------------------------------------------------------------------

    def salt(self, new: str) -> str:
        """This cache's salt (``new`` the first time)."""
        query = "SELECT value FROM meta WHERE name = 'salt'"
        with self.connection() as db:
            found = db.execute(query).fetchone()  # a read: no write transaction once salted
            if found is None:
                db.execute("INSERT OR IGNORE INTO meta (name, value) VALUES ('salt', ?)", (new,))
                found = db.execute(query).fetchone()
        return str(found[0])

    def key_seen(self, scope: str, fingerprint: str, since: float) -> bool:
        """A key of this fingerprint was seen to work in ``scope`` after ``since``."""
        with self.connection() as db:
            found = db.execute(
                "SELECT 1 FROM keys WHERE scope = ? AND fingerprint = ? AND seen > ?",
                (scope, fingerprint, since),
            ).fetchone()
        return found is not None

    def see_key(self, scope: str, fingerprint: str) -> None:
        """Record that a key of this fingerprint worked in ``scope`` now."""
        with self.connection() as db:
            db.execute(
                "INSERT OR REPLACE INTO keys (scope, fingerprint, seen) VALUES (?, ?, ?)",
                (scope, fingerprint, time.time()),
            )


def _delete_entry(db: sqlite3.Connection, series: str, segment: str) -> None:
    """Delete the entry of ``series`` in ``segment``."""
    db.execute("DELETE FROM entries WHERE series = ? AND segment = ?", (series, segment))


def _warn_garbage(index: Path, segment: str) -> None:
    """Say that an entry of ``segment`` in ``index`` could not be read and was dropped."""
    warnings.warn(
        f"a row of the cache index {str(index)!r} (segment {segment}) cannot be read; "
        "dropped, its chunks are fetched again",
        EdgeReportsWarning,
        stacklevel=5,
    )


def _columns(chunks: Mapping[int, int]) -> tuple[int, int, str, int, int]:
    """An entry's columns: first and last chunk, the chunks as JSON (the starts, then the
    rows), their count and rows."""
    starts = sorted(chunks)
    rows = [chunks[c] for c in starts]
    return starts[0], starts[-1], orjson.dumps([starts, rows]).decode(), len(starts), sum(rows)


def distinct_in(
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
