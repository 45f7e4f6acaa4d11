"""How many threads run a pull's parts: few while answers come back at once, more while they
wait on the network.

Threads that wait on the network cost nothing, but threads whose answers are in take turns on
Python's GIL, which each socket operation hands over: sixteen threads reading answers that come
back at once spend about a third more CPU per small part than one (``docs/fetching.md``). So a
pull's parts run on *lanes*, threads of the client's pool that take the pull's parts one after
another. A client's first pull starts on ``max_workers`` lanes, as nothing is known of the
service yet; each later pull starts on half the lanes the pull before it ran on
(:func:`next_start`), and a pull that would start on one runs on the calling thread itself
(:func:`run_here`) until two parts in a row wait on the service. The lanes double, up to
``max_workers``, each time :meth:`Lanes._stall` seconds pass with parts waiting and no part
done: the lanes are waiting on the service then, and more of them would wait alongside.
Against the sandbox with 20 ms of latency, pulls of 50 parts ran on sixteen lanes; against one
that answers at once, pulls of small parts went from sixteen lanes to eight, four, two, and
then ran on the calling thread.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Generic, TypeVar

__all__ = ["STALL", "Lanes", "next_start", "run_here"]

#: Seconds with parts waiting and none done after which the lanes double.
STALL = 0.002

T = TypeVar("T")


class Lanes(Generic[T]):
    """``work(item)`` for every item, on up to ``most`` threads of ``pool``.

    Args:
        pool: the threads (at least ``most`` of them).
        items: what to work on, taken in order.
        work: the work on one item; an exception it raises ends the run (:meth:`join`).
        most: the most lanes at once.
        start: the lanes to start on (at most ``most``).
    """

    def __init__(
        self,
        pool: ThreadPoolExecutor,
        items: Sequence[T],
        work: Callable[[T], None],
        most: int,
        start: int,
    ) -> None:
        self._pool = pool
        self._waiting = deque(items)
        self._work = work
        self._most = most
        self._done: deque[None] = deque()  # one entry per item done (appends are atomic)
        self._stopped = False
        self._lanes: set[Future[None]] = set()
        self._count = 0
        self._started = time.perf_counter()
        self._add(max(1, min(start, most)))

    @property
    def count(self) -> int:
        """The lanes started so far."""
        return self._count

    def join(
        self,
        tick: Callable[[int], None],
        every: float,
        meanwhile: Callable[[], None] | None = None,
    ) -> None:
        """Wait for every item, adding lanes while they stall.

        Args:
            tick: called with the number of items done since its last call (at least every
                ``every`` seconds while items are done).
            every: the longest wait between two calls of ``tick``.
            meanwhile: called at most once on this thread, when the lanes no longer grow or an
                item is done: work for the time the first answers travel, which does not delay
                the lanes' growth.

        Raises:
            Exception: the first exception a ``work`` raised. Once :meth:`join` returns or
                raises, no work runs or starts.
        """
        shown = 0
        pending = set(self._lanes)
        try:
            while pending:
                growing = self._count < self._most and bool(self._waiting)
                if meanwhile is not None and (not growing or shown):
                    meanwhile()
                    meanwhile = None
                before = len(self._done)
                done, pending = wait(pending, self._stall() if growing else every, FIRST_EXCEPTION)
                now = len(self._done)
                if now > shown:
                    tick(now - shown)
                    shown = now
                for future in done:
                    future.result()  # the first failure ends the run
                if growing and now == before and self._waiting:
                    pending |= self._add(self._count)
        finally:
            self._stopped = True
            for lane in self._lanes:
                lane.cancel()  # one still queued behind another pull's lanes never starts
            wait(self._lanes)

    def _stall(self) -> float:
        """Seconds without an item done after which the lanes double.

        Before the first item is done, :data:`STALL` per lane running: the more requests a
        pull sends at once, the longer a service takes to answer the first of them. After,
        :data:`STALL` or three times the mean time per item done so far when that is longer
        (items that are done one every millisecond or two leave gaps of a few by chance).
        """
        done = len(self._done)
        if not done:
            return STALL * self._count
        return max(STALL, 3 * (time.perf_counter() - self._started) / done)

    def _add(self, count: int) -> set[Future[None]]:
        added = {
            self._pool.submit(self._lane)
            for _ in range(min(count, self._most - self._count, len(self._waiting)))
        }
        self._count += len(added)
        self._lanes |= added
        return added

    def _lane(self) -> None:
        while not self._stopped:
            try:
                item = self._waiting.popleft()
            except IndexError:
                return
            self._work(item)
            self._done.append(None)


def next_start(ran: int) -> int:
    """The lanes a pull starts on after a pull that ran on ``ran``: half of them, at least one
    (a pull that needed more doubles them again at its first stall)."""
    return max(1, ran // 2)


def run_here(items: deque[T], work: Callable[[T], None], tick: Callable[[int], None]) -> bool:
    """Work ``items`` on this thread, one after another, until two in a row wait on the service.

    For a pull whose last pull settled on one lane: one thread that hands nothing to another
    spends the least CPU per part. An item whose wall time exceeds this thread's CPU time by
    :data:`STALL` waited for its answer; after two such items in a row (one alone may be a
    pause of a loaded machine) the items left are for :class:`Lanes`.

    Returns:
        Whether it stopped on items that waited (``items`` then holds the rest, if any).
    """
    waited = 0
    while items:
        item = items.popleft()
        clock, cpu = time.perf_counter(), time.thread_time()
        work(item)
        tick(1)
        if (time.perf_counter() - clock) - (time.thread_time() - cpu) <= STALL:
            waited = 0
        elif (waited := waited + 1) == 2:
            return True
    return False
