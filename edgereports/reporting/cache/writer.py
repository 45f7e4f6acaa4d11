"""Storing a pull's rows: behind the pull, in batches, then merged per series.

The parts of a pull hand their rows to one writer thread as they arrive; once the oldest has
waited a moment (:data:`GATHER`) it builds the entries of the final chunks of those at hand
and stores them together: one segment file per schema and one transaction of the index. What
is left when the pull ends is built and stored on the pull's own thread, which builds the
answers' tables for its frame there anyway. A cold pull whose answers arrive at once writes
one file, not one per part, and a pull killed half-way resumes from what was stored before.
When the pull ends, the series it stored into in several segments are merged into one
segment each, so that a hit on one reads one file.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from .cache import Cache
from .grid import Chunk, chunk_of
from .rows import rows_and_stamps_within, rows_per_chunk, within
from .segments import Entry
from .store import Reader

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

__all__ = ["GATHER", "Writer", "entry_of"]

#: How long (seconds) the writer holds the first rows of a batch for more to arrive: a pull
#: whose answers come at once is stored in one batch, and a pull killed loses at most this
#: much of what it fetched.
GATHER = 0.05

#: builds the entry a part stores (on the writer thread); None: nothing to store
Prepare = Callable[[], Entry | None]


def entry_of(
    series: str,
    got: pa.Table,
    stamps: np.ndarray,
    final: list[Chunk],
    starts: Sequence[int],
    request: Any,
) -> Entry:
    """The entry of the ``final`` chunks of a run, contiguous (``got``: the rows of the run,
    answering ``request``, and their bucket starts ``stamps``; ``starts``: the final chunks'
    starts, epoch seconds; its pandas metadata holds the answer's attrs)."""
    end = int(final[-1][1].timestamp())
    kept, stamps = rows_and_stamps_within(got, stamps, final)
    attrs = (got.schema.pandas_metadata or {}).get("attributes") or {}
    ends = [*starts[1:], end]
    counts = rows_per_chunk(stamps, starts, end)
    chunks = dict(zip(starts, zip(ends, counts, strict=True), strict=True))
    return Entry(series, chunks, kept, attrs, request)


class Writer:
    """The writer of one pull (thread-safe)."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache
        #: the reports (by number) some rows of which could not be stored
        self.unstored: set[int] = set()
        #: the entries stored, by series (a series stored once needs no merging)
        self.stored: Counter[str] = Counter()
        #: the chunks stored, by series (the merge takes these, not what earlier pulls stored)
        self.chunks: dict[str, set[int]] = {}
        self._lock = threading.Condition()
        self._queue: list[tuple[int, Prepare]] = []  # handed over, not stored yet
        #: (scope, fingerprint) of keys seen to work
        self._keys: list[tuple[str, Callable[[], str]]] = []
        self._fingerprints: list[Callable[[], str]] = []  # not computed yet
        self._oldest = 0.0  # when the oldest of them was handed over
        self._running = False  # a drain is on a writer thread
        self._closing = False
        self._drains: list[Future[None]] = []

    def submit(self, report: int, prepare: Prepare) -> None:
        """Store the entry ``prepare`` builds, behind the caller (:meth:`wait` waits)."""
        with self._lock:
            self._queue.append((report, prepare))
            self._start()

    def see_key(self, scope: str, fingerprint: Callable[[], str]) -> None:
        """Record that a key worked in ``scope``, with the next entries stored (``fingerprint``
        gives the key's fingerprint, then: off the part's thread)."""
        with self._lock:
            self._keys.append((scope, fingerprint))
            self._fingerprints.append(fingerprint)
            self._start()
            self._lock.notify_all()  # computed at once

    def _start(self) -> None:
        """Start the drain, unless one runs (the lock held); it sleeps until the oldest of
        what was handed over is due."""
        if len(self._queue) + len(self._keys) == 1:
            self._oldest = time.monotonic()
        if self._running or self._closing:
            return
        self._running = True
        self._drains.append(self.cache.writers().submit(self._drain))

    def wait(self) -> None:
        """Store everything handed over (or fail it) now, on the calling thread (the pull
        waits for it anyway: no thread to wake)."""
        with self._lock:
            self._closing = True
            self._lock.notify_all()
            while self._running:  # the drain ends once its current step is done
                self._lock.wait()
            batch, keys = self._queue, self._keys
            self._queue, self._keys = [], []
            drains, self._drains = self._drains, []
        for drain in drains:
            drain.result()
        ready = self._prepare(batch)
        if ready or keys:
            self._write(ready, keys)

    def _drain(self) -> None:
        """Store what was handed over once the oldest of it has waited :data:`GATHER`
        seconds, building the entries then (a pull that ends sooner builds and stores them
        in :meth:`wait`, on its own thread, where its assembly finds the tables built); a
        key's fingerprint is computed as soon as the key is seen to work."""
        try:
            while True:
                with self._lock:
                    batch: list[tuple[int, Prepare]] = []
                    keys: list[tuple[str, Callable[[], str]]] = []
                    fingerprints, self._fingerprints = self._fingerprints, []
                    while not fingerprints:
                        if self._closing or not (self._queue or self._keys):
                            return
                        due = self._oldest + GATHER - time.monotonic()
                        if due <= 0:
                            batch, keys, self._queue, self._keys = self._queue, self._keys, [], []
                            break
                        self._lock.wait(due)
                        fingerprints, self._fingerprints = self._fingerprints, []
                for fingerprint in fingerprints:  # computed now, not when the pull ends
                    with contextlib.suppress(Exception):  # (if it fails, it fails then)
                        fingerprint()
                ready = self._prepare(batch)
                if ready or keys:
                    self._write(ready, keys)
        finally:
            with self._lock:
                self._running = False
                self._lock.notify_all()

    def _failed(self, report: int) -> None:
        with self._lock:
            self.unstored.add(report)

    def _prepare(self, batch: list[tuple[int, Prepare]]) -> list[tuple[int, Entry]]:
        """The entries of ``batch`` (those that cannot be built are reported failed; a
        ``prepare`` that returns None has nothing to store)."""
        entries: list[tuple[int, Entry]] = []
        for report, prepare in batch:
            try:
                entry = prepare()
            except Exception as exc:  # an Arrow error: no cache rather than no pull
                self.cache.disable(exc)
                self._failed(report)
                continue
            if entry is None:
                continue
            if self.cache.enabled:
                entries.append((report, entry))
            else:
                self._failed(report)
        return entries

    def _write(
        self, entries: list[tuple[int, Entry]], keys: list[tuple[str, Callable[[], str]]]
    ) -> None:
        """Store ``entries`` and record ``keys`` together (each report failed if they cannot
        be)."""
        try:
            if not self.cache.enabled:
                raise _Off
            seen = [(scope, fingerprint()) for scope, fingerprint in keys]
            self.cache.store.write_entries([entry for _, entry in entries], keys=seen)
        except Exception as exc:  # a disk or index error: no cache rather than no pull
            if not isinstance(exc, _Off):
                self.cache.disable(exc)
            for report, _ in entries:
                self._failed(report)
            return
        with self._lock:
            self.stored.update(entry.series for _, entry in entries)
            for _, entry in entries:
                self.chunks.setdefault(entry.series, set()).update(entry.chunks)

    def merge(self, buckets: Mapping[str, timedelta]) -> None:
        """For each series of ``buckets`` (series -> bucket length), the chunks this writer
        stored in one segment, in the order of one answer, all in one transaction (a failure
        leaves the cache as it was). Each segment file is read once, whatever the series it
        holds. What earlier pulls stored stays where it is: a pull's cost does not grow with
        the cache."""
        merged: list[Entry] = []
        reader = Reader(self.cache.store, keep=None)
        try:
            for series, bucket in buckets.items():
                if self.cache.enabled:
                    entry = _merged(reader, series, bucket, self.chunks.get(series, set()))
                    if entry is not None:
                        merged.append(entry)
            if merged and self.cache.enabled:
                self.cache.store.write_entries(merged, shared=False)
        except (OSError, sqlite3.Error) as exc:
            self.cache.disable(exc)


class _Off(Exception):
    """The cache was turned off (another write failed): nothing is written."""


def _merged(
    reader: Reader, series: str, bucket: timedelta, chunks: Collection[int]
) -> Entry | None:
    """The stored ``chunks`` of ``series`` as one entry, in the order of one answer; None
    when they are in one segment already, one cannot be read, or their rows hold several
    echoed series (their order, by first appearance, depends on the range)."""
    import pyarrow as pa

    from ...normalize.stitching import canonical_order, concat_frames
    from ...schema import schema_for, shape_of

    held = [h for h in reader.store.index.stored(series) if h[0] in chunks]
    segments = list(dict.fromkeys(segment for _, segment, _ in held))
    if len(segments) < 2:
        return None
    frames: list[pd.DataFrame] = []
    attrs: dict[str, Any] = {}
    request = None
    for segment in segments:
        mine = [c for c, seg, _ in held if seg == segment]
        found = reader.frame(segment, series, mine)
        if found is None:
            return None
        starts = [datetime.fromtimestamp(c, UTC) for c in mine]
        frames.append(within(found[0], [chunk_of(start, bucket) for start in starts]))
        attrs, request = found[1], found[2]
    frame = concat_frames(frames)
    dims = schema_for(shape_of(frame)).dimensions_of(frame)
    if any(frame[d].nunique(dropna=False) > 1 for d in ("account_id", *dims) if d in frame):
        return None
    frame = canonical_order(frame, request)
    bounds = {
        c: (int(chunk_of(datetime.fromtimestamp(c, UTC), bucket)[1].timestamp()), n)
        for c, _, n in held
    }
    table: pa.Table = pa.Table.from_pandas(frame, preserve_index=False, nthreads=1)
    return Entry(series, bounds, table, attrs, request)
