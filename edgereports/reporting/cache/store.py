"""The cache on disk: normalized rows in Arrow IPC segment files and a SQLite index.

A pull's writer stores the rows it has at hand as one segment file (:mod:`.segments`) indexed
in one transaction of the index (:mod:`.index`), which maps each chunk of a series to its
segment; a pull reads each segment once. A segment that fails its checks is dropped with a
warning (its chunks are misses); an index SQLite cannot read is set aside
(``*.damaged-<time>``) and rebuilt from the segments that pass. Keys are bound to a scope by
salted fingerprint only (:mod:`.trust`). With ``max_bytes``, the oldest segments go first.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import sqlite3
import threading
import time
import uuid
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import EdgeReportsWarning
from .index import INDEX, Index, Placed
from .segments import Entry, Segment, encode, group, name_of

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["INDEX", "KEPT", "KEY_PROOF_SECONDS", "SEGMENTS", "Kept", "Reader", "Store"]

SEGMENTS = "segments"
#: How much of the segments read this process keeps for its next pulls (their tables' bytes).
KEEP_BYTES = 128 * 2**20
#: How long a key seen to work reads the cache before it must work again (a revoked key is
#: refused by its next answer at the latest a day after it was last seen working).
KEY_PROOF_SECONDS = 24 * 3600.0


class Store:
    """Segments and their index in one directory (thread- and process-safe)."""

    def __init__(self, root: Path, max_bytes: int | None = None) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.index = Index(root / INDEX, unlink=self._unlink)
        self._salt: str | None = None  # read once: a thread that stores opens no connection
        (root / SEGMENTS).mkdir(exist_ok=True)
        try:
            if self.index.create():  # the first layout: index the segments again
                self._rebuild()
            self._salt = self.index.salt(uuid.uuid4().hex)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise
            self._set_aside(exc)

    def recover(self, error: BaseException) -> None:
        """A query found the index damaged: unless it reads as sound on a connection of its
        own (then this thread's connection is opened again), set it aside and rebuild it."""
        if self.index.healthy():
            self.index.reconnect()
            return
        self._set_aside(error)

    def _set_aside(self, error: BaseException) -> None:
        """Rename a damaged index out of the way, and rebuild it from the sound segments."""
        aside = self.index.set_aside()
        self._salt = None  # the new index has a salt of its own
        self.index.create()
        rebuilt = self._rebuild()
        warnings.warn(
            f"the cache index {str(self.root / INDEX)!r} could not be read "
            f"({type(error).__name__}: {error}); it was set aside as {aside.name} and rebuilt "
            f"from {rebuilt} sound segment(s)",
            EdgeReportsWarning,
            stacklevel=4,
        )

    def _rebuild(self) -> int:
        """Index the segments whose bytes and identity check out, oldest first (a newer
        entry replaces the chunks an older one holds); returns how many."""
        import pyarrow as pa

        found: list[tuple[float, str, Placed]] = []
        for path in (self.root / SEGMENTS).glob("*.arrow"):
            name = path.stem
            try:
                segment = Segment(name, path.read_bytes())
                created = path.stat().st_mtime
            except (OSError, KeyError, TypeError, ValueError, pa.ArrowException):
                self._unlink(name)
                continue
            entries = [
                (series, {c: n for c, (_, n) in chunks.items()})
                for series, chunks in segment.chunks().items()
            ]
            found.append((created, name, (name, segment.size, created, entries)))
        for _, _, placed in sorted(found):
            for gone in self.index.add([placed]):
                self._unlink(gone)
        return len(found)

    # -- access ---------------------------------------------------------------------------

    def fingerprint(self, key: str) -> str:
        """A salted fingerprint of ``key`` (HMAC-SHA256 under this cache's salt): what binds
        entries to a key, never the key itself. Keys are long random strings, so one keyed
        hash is as strong as a slow one; the salt keeps a fingerprint from matching across
        caches."""
        salt = self._salt
        if salt is None:
            salt = self._salt = self.index.salt(uuid.uuid4().hex)
        return hmac.new(salt.encode(), key.encode("utf-8"), hashlib.sha256).hexdigest()

    def key_seen(self, scope: str, fingerprint: str, within: float = KEY_PROOF_SECONDS) -> bool:
        """A key of this fingerprint has been seen to work in ``scope`` in the last ``within``
        seconds (a key revoked since must prove itself again)."""
        return self.index.key_seen(scope, fingerprint, time.time() - within)

    def see_key(self, scope: str, fingerprint: str) -> None:
        """Record that a key of this fingerprint worked in ``scope``."""
        self.index.see_key(scope, fingerprint)

    # -- segments -------------------------------------------------------------------------

    def open(self, segment: str) -> Segment | None:
        """A segment read and checked; None (it is dropped, its chunks misses: with a
        warning unless the file is gone) when it is missing or unreadable, or its bytes fail
        the checksum its name carries."""
        import pyarrow as pa

        path = str(self.root / SEGMENTS / f"{segment}.arrow")
        try:
            with open(path, "rb") as file:
                stamp = _stamp(os.fstat(file.fileno()))
                kept = KEPT.get(path, stamp)
                if kept is not None:
                    return kept
                data = file.read()
        except OSError:
            self.forget(segment)
            return None
        try:
            found = Segment(segment, data)
        except (KeyError, TypeError, ValueError, pa.ArrowException) as exc:
            damaged = isinstance(exc, ValueError) and str(exc) == "checksum"
            self.drop(segment, "fails its checksum (damaged or replaced)" if damaged else
                      "cannot be read")  # fmt: skip
            return None
        KEPT.put(path, stamp, found)
        return found

    def drop(self, segment: str, why: str) -> None:
        """Drop a segment found unsound, with a warning saying ``why``."""
        warnings.warn(
            f"cache segment {segment} {why}; dropped, its chunks are fetched again",
            EdgeReportsWarning,
            stacklevel=5,
        )
        self.forget(segment)

    def forget(self, segment: str) -> None:
        """Drop a segment and its entries (a damaged one: its chunks become misses)."""
        with contextlib.suppress(sqlite3.Error):
            self.index.forget(segment)
        self._unlink(segment)

    def write_entries(
        self,
        entries: Sequence[Entry],
        *,
        shared: bool = True,
        keys: Sequence[tuple[str, str]] = (),
    ) -> None:
        """Store ``entries`` in one transaction of the index: in one segment file per schema
        (``shared``; at most one entry of a series in each), or one file each. An entry
        replaces the chunks of its series it holds. ``keys``: (scope, fingerprint) of keys
        seen to work, recorded in the same transaction.

        Raises:
            OSError, sqlite3.Error: the directory cannot be written.
        """
        placed: list[Placed] = []
        now = time.time()
        try:
            for some in group(entries) if shared else [group([e])[0] for e in entries]:
                data = encode(some)
                name = name_of(data)
                self._write_file(name, data)
                listed = [(e.series, {c: n for c, (_, n) in e.chunks.items()}) for e in some]
                placed.append((name, data.size, now, listed))
            gone = self.index.add(placed, self.max_bytes, keys)
        except BaseException:
            for name, _, _, _ in placed:  # not indexed: no reader will look for them
                self._unlink(name)
            raise
        for old in gone:
            self._unlink(old)

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

    def _unlink(self, segment: str) -> None:
        path = self.root / SEGMENTS / f"{segment}.arrow"
        KEPT.drop(str(path))
        with contextlib.suppress(OSError):
            path.unlink()

    # -- the whole cache ------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """Entries (chunks), segments, bytes, rows and the bound."""
        return {"path": str(self.root), **self.index.info(), "max_bytes": self.max_bytes}

    def clear(self) -> int:
        """Remove every entry and segment; returns the number of segment files removed.

        Works whatever state the index is in: one SQLite cannot read is set aside first.
        """
        try:
            self.index.clear()
        except sqlite3.DatabaseError as exc:
            self._set_aside(exc)
            return self.clear()
        removed = 0
        KEPT.drop_under(str(self.root / SEGMENTS))
        for path in (self.root / SEGMENTS).iterdir():
            with contextlib.suppress(OSError):
                path.unlink()
                removed += path.suffix == ".arrow"
        return removed


#: A file's identity and version: its inode, size and modification time (nanoseconds).
Stamp = tuple[int, int, int]


def _stamp(status: os.stat_result) -> Stamp:
    return status.st_ino, status.st_size, status.st_mtime_ns


class Kept:
    """The segments this process read and checked, kept for its next pulls: the most recently
    used, up to ``max_bytes`` of their tables (thread-safe).

    A segment's name carries the checksum of its bytes and no file is written twice, so a
    segment kept is as good as its file; one whose file changed since (another inode, size
    or modification time) is read again, and one dropped from its cache is forgotten here.
    """

    def __init__(self, max_bytes: int = KEEP_BYTES) -> None:
        self.max_bytes = max_bytes
        self._held: OrderedDict[str, tuple[Stamp, Segment, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, path: str, stamp: Stamp) -> Segment | None:
        """The segment read from ``path`` when the file was as ``stamp`` says, else None."""
        with self._lock:
            held = self._held.get(path)
            if held is None or held[0] != stamp:
                return None
            self._held.move_to_end(path)
            return held[1]

    def put(self, path: str, stamp: Stamp, segment: Segment) -> None:
        """Keep ``segment``, read from ``path`` (as ``stamp``); the least recently used go
        past the bound (one larger than the bound is not kept)."""
        size = segment.table.get_total_buffer_size()
        with self._lock:
            self._pop(path)
            if size > self.max_bytes:
                return
            self._held[path] = (stamp, segment, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                self._pop(next(iter(self._held)))

    def drop(self, path: str) -> None:
        """Forget the segment of ``path``."""
        with self._lock:
            self._pop(path)

    def drop_under(self, directory: str) -> None:
        """Forget every segment of ``directory``."""
        with self._lock:
            for path in [p for p in self._held if os.path.dirname(p) == directory]:
                self._pop(path)

    def _pop(self, path: str) -> None:
        held = self._held.pop(path, None)
        if held is not None:
            self._bytes -= held[2]


#: The segments this process keeps read.
KEPT = Kept()


class Reader:
    """Reads the entries of segments for one pull: a file is read and checked once however
    many of its entries are asked for (the last ``keep`` files read are kept, None: all;
    thread-safe).
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

    def runs(self, segment: str, series: str) -> list[int] | None:
        """The lengths of the runs of rows of one series and metric entry of ``series``'
        entry in ``segment``, read by :meth:`entry` (None when it was not)."""
        with self._lock:
            found = self._kept.get(segment)
        return None if found is None else found.runs(series)

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
