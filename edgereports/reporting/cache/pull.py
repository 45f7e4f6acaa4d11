"""One pull through the cache: each planned part (window x fan-out value) is served from the
final chunks it covers, and only the missing chunks are fetched (in runs aligned to the grid),
handed to the pull's writer as they arrive (see :mod:`.writer`: a pull killed half-way
resumes from what it stored), then trimmed to the part's window by the one range rule.

A chunk is stored as final only when the present the service stated is one the cache can
trust (see :func:`.trust.final_chunks`); cached rows are served only to a key seen to work for
the account at that address (see :mod:`.trust`).
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import functools
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, overload

from ...errors import EdgeReportsError
from ...normalize.parts import Rows
from ..plan import Part, Window
from .cache import Cache
from .grid import Chunk, horizon_for
from .keys import Facts, facts_of
from .rows import assemble, contiguous_runs, in_run, newest, rows_within
from .segments import Entry
from .store import Reader
from .trust import CLOCK_SKEW, KeyBinding, final_chunks
from .writer import Writer, entry_of

if TYPE_CHECKING:
    import pyarrow as pa

    #: a run's answer, claimed by the part that fetches it, awaited by the others
    Claim = Future[Rows]

__all__ = ["CacheStats", "CachedPull"]

_UNWRITABLE = "the cache directory could not be written"

#: fetches a part: its rows (their table built when asked for)
Fetch = Callable[[Part], Rows]


@dataclass
class CacheStats:
    """What the cache did for one report of a pull (``df.attrs["cache"]``)."""

    hits: int = 0
    misses: int = 0
    provisional: int = 0
    refresh: bool = False
    not_cached: list[str] = field(default_factory=list)

    def to_dict(self, path: str) -> dict[str, Any]:
        """JSON-ready: chunks served (``hits``), fetched (``misses``), fetched but not stored
        because the service may still revise them (``provisional``), and why parts were not
        cached (``not_cached``, one reason each)."""
        return {
            "path": path,
            "hits": self.hits,
            "misses": self.misses,
            "provisional": self.provisional,
            "refresh": self.refresh,
            "not_cached": sorted(set(self.not_cached)),
        }


class CachedPull:
    """The cache's side of one pull (thread-safe: parts run in the client's pool)."""

    def __init__(
        self,
        cache: Cache,
        *,
        reports: int,
        accept: str,
        service: str,
        api_version: str,
        horizon: timedelta | None,
        clock: Callable[[], datetime | None],
        data_lag: timedelta = timedelta(0),
        fingerprint: str | Callable[[], str],
        refresh: bool = False,
        local_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        skew: timedelta = CLOCK_SKEW,
    ) -> None:
        self.cache = cache
        self.accept = accept
        self.service = service
        self.api_version = api_version
        self.horizon = horizon
        self.clock = clock
        self.data_lag = data_lag
        self.local_clock = local_clock
        self.skew = skew
        self.refresh = refresh
        self.stats = [CacheStats(refresh=refresh) for _ in range(reports)]
        self._lock = threading.Lock()
        self._written: dict[str, timedelta] = {}  # the bucket of each series handed to store
        self._writer = Writer(cache)
        # the key is recorded with the next rows stored (one transaction), off the part's thread
        self.keys = KeyBinding(
            cache.store, fingerprint, service, api_version, record=self._writer.see_key
        )
        self._reader = Reader(cache.store)
        self._known: dict[int, Facts] = {}  # by id() of the part (parts live through the pull)
        #: the stored chunks the index listed for a part, by id() of the part
        self._looked: dict[int, dict[int, str]] = {}
        #: series the index held nothing of when the pull began (a key not bound yet reads
        #: nothing, so its parts fetch without asking the index again)
        self._empty: set[str] = set()
        #: the chunks a part of this pull fetches (or fetched), by series: one fetch each
        self._fetching: dict[str, dict[Chunk, Claim]] = {}

    def attrs(self, report: int) -> dict[str, Any]:
        """``df.attrs["cache"]`` of report number ``report``."""
        return self.stats[report].to_dict(str(self.cache.path))

    def finish(self) -> None:
        """Wait for the rows still being written, then put what this pull stored of each
        series in several segments into one, so that a hit on those chunks reads one file (a
        failure to do so leaves the cache as it was)."""
        with self._lock:
            self._fetching.clear()
        self._writer.wait()
        for report in self._writer.unstored:
            self.stats[report].not_cached.append(_UNWRITABLE)
        if not self.cache.enabled:
            return
        stored = self._writer.stored
        # a series stored once is in one segment already (other processes' writes wait)
        self._writer.merge({s: bucket for s, bucket in self._written.items() if stored[s] > 1})

    def _count(self, report: int, **counts: int) -> None:
        with self._lock:
            stats = self.stats[report]
            for name, n in counts.items():
                setattr(stats, name, getattr(stats, name) + n)

    def whole_hits(self, parts: Sequence[Part]) -> dict[int, Rows]:
        """The parts (by position) held whole in one stored segment each, every row of which
        lies in the part's range: their rows (with their runs), read on the caller's thread
        (a thread would only add cost)."""
        self._note_empty(parts)
        out: dict[int, Rows] = {}
        for i, part in enumerate(parts):
            whole = self._whole(part)
            if whole is not None:
                rows, chunks_held = whole
                self._count(part.report, hits=chunks_held)
                out[i] = rows
        return out

    def _note_empty(self, parts: Sequence[Part]) -> None:
        """Note the series of ``parts`` the index holds nothing of (one query, on the
        caller's thread): their parts need not ask it again before fetching."""
        if self.refresh or not self.cache.enabled:
            return
        series = {f.series for f in map(self._facts, parts) if f.reason is None and f.names}
        if not series:
            return
        try:
            held = self.cache.store.index.held(series)
        except sqlite3.Error:
            return  # each part asks for itself
        with self._lock:
            self._empty.update(series - held)

    def _facts(self, part: Part) -> Facts:
        """The facts of ``part``, computed on first use."""
        known = self._known.get(id(part))
        if known is not None:
            return known
        known = facts_of(part, self.accept, self.service, self.api_version, scope=self.keys.scope)
        self._known[id(part)] = known
        return known

    def _whole(self, part: Part) -> tuple[Rows, int] | None:
        """``part``'s rows and its chunk count, when one segment holds the whole part and
        nothing outside its range (else None: the part goes the usual way)."""
        import pyarrow.compute as pc

        facts = self._facts(part)
        if self.refresh or not self.cache.enabled or facts.reason or not facts.names:
            return None
        if facts.series in self._empty or not self.keys.bound(facts.scope):
            return None
        span, names, series = facts.span, facts.names, facts.series
        assert span is not None
        stored = self._lookup(series, names)
        with self._lock:
            self._looked[id(part)] = stored
        if len(stored) != len(names) or len(set(stored.values())) != 1:
            return None
        segment = next(iter(stored.values()))
        got = self._reader.entry(segment, series, names)
        if got is None or "time_stamp" not in got.table.column_names or not got.table.num_rows:
            return None
        table = got.table
        ends = pc.min_max(table["time_stamp"]).as_py()
        if ends["min"] < span[0] or ends["max"] >= span[1]:
            return None
        rows = Rows.of(table, self._reader.runs(segment, series))
        return rows, len(names)

    def hit(self, part: Part) -> Rows | None:
        """The owned rows of ``part`` when the cache holds every chunk of it, else None (and
        nothing counted): a whole hit costs no thread of the pool."""
        if self.refresh or self._facts(part).reason is not None:
            return None
        return self.part(part, None)

    @overload
    def part(self, part: Part, fetch: Fetch) -> Rows: ...
    @overload
    def part(self, part: Part, fetch: None) -> Rows | None: ...
    def part(self, part: Part, fetch: Fetch | None) -> Rows | None:
        """The owned rows of ``part``, from the cache where it holds them (with no ``fetch``:
        None unless it holds them all)."""
        facts = self._facts(part)
        reason = facts.reason
        if reason is None and not self.cache.enabled:
            reason = _UNWRITABLE
        if reason is not None:
            if fetch is None:
                return None
            with self._lock:
                self.stats[part.report].not_cached.append(reason)
            return fetch(part)
        scope = facts.scope
        if facts.series in self._empty:  # nothing to read: the key need not be known yet
            return self._part(part, fetch, scope) if fetch is not None else None
        if self.keys.bound(scope) or self.refresh:
            return self._part(part, fetch, scope)
        if fetch is None:
            return None
        # a key not seen to work here reads nothing: a part the cache holds rows of is fetched
        # whole (a wrong key gets its AuthError) by one thread at a time, the others waiting
        # to read the cache once the key has worked; a part the cache holds nothing of waits
        # for nobody
        if facts.series in self._empty or not self._lookup(facts.series, facts.names):
            return self._part(part, fetch, scope)
        with self.keys.proving:
            return self._part(part, fetch, scope)

    def _part(self, part: Part, fetch: Fetch | None, scope: str) -> Rows | None:
        facts = self._facts(part)
        span, grid, series = facts.span, facts.grid, facts.series
        assert span is not None
        names = dict(zip(grid, facts.names, strict=True))
        read = not self.refresh and series not in self._empty and self.keys.bound(scope)
        stored: dict[int, str] = {}
        if read:
            # what the pull's thread found of the part already (a segment gone since is a
            # miss, fetched again), else asked now
            looked = self._looked.get(id(part))
            stored = dict(looked) if looked is not None else self._lookup(series, facts.names)
        by_segment: dict[str, list[Chunk]] = {}
        for chunk in grid:
            if names[chunk] in stored:
                by_segment.setdefault(stored[names[chunk]], []).append(chunk)
        pieces: list[pa.Table] = []
        for segment, mine in by_segment.items():
            entry = self._reader.entry(segment, series, [names[c] for c in mine])
            if entry is None:  # damaged or gone: a miss, fetched again below
                for chunk in mine:
                    del stored[names[chunk]]
                continue
            pieces.append(rows_within(entry.table, mine))
        missing = [c for c in grid if names[c] not in stored]
        if fetch is None and missing:
            return None
        self._count(part.report, hits=len(stored))
        runs, theirs = self._claim(series, missing)
        fetched: list[tuple[list[Chunk], Rows]] = []
        for run, claim in runs:
            assert fetch is not None
            try:
                got = self._fetch_run(part, run, fetch, series)
            except BaseException as exc:
                claim.set_exception(exc)
                raise
            claim.set_result(got)
            self.keys.bind(scope)
            fetched.append((run, got))
        if not pieces and not theirs and len(runs) == 1 and (grid[0][0], grid[-1][1]) == span:
            return fetched[0][1]  # the whole part in one answer: as the client would have it
        pieces += [in_run(got.table(), run)[0] for run, got in fetched]
        for claim, held in theirs.items():  # fetched by another part of this pull
            pieces.append(rows_within(claim.result().table(), held))
        rows = Rows.of(assemble(pieces, part, span))
        return rows

    def _claim(
        self, series: str, missing: list[Chunk]
    ) -> tuple[
        list[tuple[list[Chunk], Claim]],
        dict[Claim, list[Chunk]],
    ]:
        """Split ``missing`` into the runs this part fetches (each with the future the other
        parts wait on) and the chunks another part of the pull fetches already (by its
        future): parts whose windows share a chunk (DAY buckets, windows shorter than a
        month) fetch it once."""
        mine: list[Chunk] = []
        theirs: dict[Claim, list[Chunk]] = {}
        with self._lock:
            fetching = self._fetching.setdefault(series, {})
            if fetching.keys().isdisjoint(missing):  # the usual case: none claimed yet
                mine = missing
            else:
                for chunk in missing:
                    claim = fetching.get(chunk)
                    if claim is None:
                        mine.append(chunk)
                    else:
                        theirs.setdefault(claim, []).append(chunk)
            runs: list[tuple[list[Chunk], Claim]] = [
                (run, Future()) for run in contiguous_runs(mine)
            ]
            for run, claim in runs:
                fetching.update(dict.fromkeys(run, claim))
        return runs, theirs

    def _lookup(self, series: str, keys: list[int]) -> dict[int, str]:
        try:
            return self.cache.store.index.lookup(series, keys)
        except sqlite3.DatabaseError as exc:
            if not isinstance(exc, sqlite3.OperationalError):  # damaged: set aside, rebuilt
                with contextlib.suppress(sqlite3.Error, OSError):
                    self.cache.store.recover(exc)
                    return self.cache.store.index.lookup(series, keys)
            self.cache.disable(exc)
            return {}
        except sqlite3.Error as exc:
            self.cache.disable(exc)
            return {}

    def _fetch_run(self, part: Part, run: list[Chunk], fetch: Fetch, series: str) -> Rows:
        """Fetch the chunks of ``run`` as one request (or the client's pieces), and hand its
        rows to the writer, which keeps the rows of the run's final chunks when it stores
        them (its table is built once, for the writer and the pull's assembly alike)."""
        facts = self._facts(part)
        start, end = run[0][0], run[-1][1]
        span, bucket = facts.span, facts.bucket
        assert span is not None and bucket is not None
        window = Window(start, end)
        if part.window == window and span == (start, end):
            answer = fetch(part)  # the part is the run: sent as it is
        else:
            zone = span[0].tzinfo
            sent = part.sent.between(start.astimezone(zone), end.astimezone(zone))
            answer = fetch(dataclasses.replace(part, window=window, sent=sent))
        got = Rows(_Once(answer.make))  # built once: by the writer or the assembly
        # finality by the clocks of the answer just received, judged when the rows are stored
        stated, local = self.clock(), self.local_clock()
        self._count(part.report, misses=len(run))
        prepare = functools.partial(self._entry, part, run, got, series, stated, local)
        self._writer.submit(part.report, prepare)
        return got

    def _entry(
        self,
        part: Part,
        run: list[Chunk],
        got: Rows,
        series: str,
        stated: datetime | None,
        local: datetime,
    ) -> Entry | None:
        """The entry of the final chunks of ``run`` (``got``: its answer, received when the
        service stated ``stated`` and the local clock read ``local``); None when none is final
        (the chunks are counted provisional) or the answer's rows cannot be built (the pull's
        assembly reports that)."""
        facts = self._facts(part)
        bucket = facts.bucket
        assert bucket is not None
        try:
            table, stamps = in_run(got.table(), run)
        except EdgeReportsError:
            return None
        final = final_chunks(
            run,
            newest(stamps),
            bucket,
            stated=stated,
            local=local,
            horizon=horizon_for(bucket, self.horizon),
            lag=self.data_lag,
            skew=self.skew,
        )
        self._count(part.report, provisional=len(run) - len(final))
        if not final:
            return None
        with self._lock:
            self._written[series] = bucket
        # the run's chunk starts, from the part's grid (a run is contiguous, its final chunks
        # the first of it)
        at = bisect.bisect_left(facts.names, int(run[0][0].timestamp()))
        starts = facts.names[at : at + len(final)]
        return entry_of(series, table, stamps, final, starts, facts.request)


class _Once:
    """Builds an answer's rows once (:attr:`Rows.make`: the table and its runs' lengths), for
    whichever thread asks first (the writer or the assembly)."""

    def __init__(self, make: Callable[[], tuple[pa.Table, list[int] | None]]) -> None:
        self._make = make
        self._built: tuple[pa.Table, list[int] | None] | None = None
        self._lock = threading.Lock()

    def __call__(self) -> tuple[pa.Table, list[int] | None]:
        with self._lock:
            if self._built is None:
                self._built = self._make()
            return self._built
