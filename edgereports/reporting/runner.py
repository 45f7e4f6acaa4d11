"""Running a pull's parts: the worker threads, and one part's request and rows.

A part (:mod:`.plan`) is one window of one fan-out value. Each runs on one of the client's
worker threads, at most ``max_workers`` at once on every pull: its request is sent (in pieces
when its window holds more points than the budget, or when the service answers that it is too
large, which also lowers the budget for the parts still waiting) and its answer is read into its
rows (:func:`~.assemble.answer_rows`), an Arrow table built on the assembling thread.
:mod:`.assemble` then keeps the rows each part owns and makes one frame of them.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..errors import AuthError, EdgeReportsError
from ..normalize.parts import Rows, in_order, load_readers, owned
from ..progress import open_progress
from ..query import Report
from .assemble import answer_rows
from .plan import Part, Window, bucket_of, split_window, window_points
from .points import PointsBudget, says_too_large

if TYPE_CHECKING:
    import requests

    from .cache import CachedPull

__all__ = ["CSV", "JSON", "PartRunner"]

JSON = "application/json"
CSV = "text/csv"
#: Seconds between two updates of a pull's progress bar.
_TICK = 0.1

#: Sends one request: ``post(request, accept, what)`` gives the 2xx response, body read.
Post = Callable[[dict[str, Any], str, str], "requests.Response"]


class PartRunner:
    """Runs the parts of a client's pulls, in worker threads kept between pulls.

    ``budget`` is shared with the client's planning: a part that learns a smaller one lowers
    it for every part still waiting.
    """

    def __init__(self, post: Post, budget: PointsBudget, redact: Callable[[object], str]) -> None:
        self._post = post
        self._budget = budget
        self._redact = redact
        self._workers: ThreadPoolExecutor | None = None  # made on the first concurrent pull
        self._workers_size = 0
        self._workers_pid = 0
        self._workers_lock = threading.Lock()

    def run(
        self,
        parts: Sequence[Part],
        accept: str,
        *,
        max_workers: int,
        progress: bool | None,
        pull: CachedPull | None = None,
    ) -> list[Any]:
        """Run every part (through the cache, with one); returns per part its rows or its
        error (AuthError aborts)."""
        run: Callable[[Part, str], Rows] = self._part
        if pull is not None:
            run = functools.partial(self._cached_part, pull)
        outcomes: list[Any] = [None] * len(parts)
        bar = open_progress(progress, len(parts), "edgereports")
        try:
            todo = list(enumerate(parts))
            if pull is not None:  # whole hits are read here: a thread would only add cost
                todo = []
                held = pull.whole_hits(parts)
                bar.update(len(held))
                for i, part in enumerate(parts):
                    if i in held:
                        outcomes[i] = held.pop(i)
                        continue
                    outcomes[i] = self._outcome(functools.partial(_hit, pull, part))
                    if outcomes[i] is None:
                        todo.append((i, part))
                    else:
                        bar.update(1)

            def work(item: tuple[int, Part]) -> None:
                outcomes[item[0]] = self._outcome(functools.partial(run, item[1], accept))

            if len(todo) <= 1 or max_workers == 1:
                for item in todo:
                    work(item)
                    bar.update(1)
                return outcomes

            pool = self._pool(max_workers)
            futures = [pool.submit(work, item) for item in todo]
            # the readers load on this thread while the first answers travel, rather than in
            # a worker whose answer is in while the others wait on that import
            load_readers()
            self._join(futures, bar.update)
            return outcomes
        finally:
            bar.close()

    @staticmethod
    def _join(futures: list[Future[None]], tick: Callable[[int], None]) -> None:
        """Wait for every part, ticking the progress bar; the first exception a part raises
        (an AuthError) cancels the parts not started, waits for those running and is raised."""
        pending: set[Future[None]] = set(futures)
        try:
            while pending:
                done, pending = wait(pending, _TICK, FIRST_EXCEPTION)
                if done:
                    tick(len(done))
                for future in done:
                    future.result()  # the first failure ends the pull
        finally:
            if pending:
                for future in pending:
                    future.cancel()  # a part still queued never starts
                wait(pending)

    def _pool(self, max_workers: int) -> ThreadPoolExecutor:
        """The worker threads: made on the first concurrent pull and kept until
        :meth:`close` (threads started and joined per pull would cost CPU on every pull); a
        forked child, which inherits no thread, and a new ``max_workers`` make new ones."""
        with self._workers_lock:
            workers = self._workers
            pid = os.getpid()
            if workers is None or self._workers_pid != pid or self._workers_size != max_workers:
                if workers is not None and self._workers_pid == pid:
                    workers.shutdown(wait=False)  # parts another pull queued on it still run
                workers = self._workers = ThreadPoolExecutor(max_workers, "edgereports")
                self._workers_size, self._workers_pid = max_workers, pid
            return workers

    def close(self) -> None:
        """Stop the worker threads (a later pull starts new ones)."""
        with self._workers_lock:
            workers, self._workers = self._workers, None
        if workers is not None and self._workers_pid == os.getpid():
            workers.shutdown(wait=True)

    @staticmethod
    def _outcome(call: Callable[[], Rows | None]) -> Any:
        try:
            return call()
        except AuthError:
            raise
        except EdgeReportsError as exc:
            return exc

    def _cached_part(self, pull: CachedPull, part: Part, accept: str) -> Rows:
        """``part`` served from the cache's chunks, its missing chunks fetched."""
        return pull.part(part, lambda missing: self._part(missing, accept))

    def _part(self, part: Part, accept: str) -> Rows:
        return self._window_rows(part.sent, part.window, accept, str(part))

    def _window_rows(self, sent: Report, window: Window | None, accept: str, what: str) -> Rows:
        """One window's rows, as the service answered them; a window over the budget is
        fetched in pieces."""
        bucket = bucket_of(sent) if window is not None else None
        # a window of more than one bucket can be cut in pieces: over the budget, it is
        points = 0
        if window is not None and bucket is not None:
            points = window_points(sent, window, bucket)
            if points > self._budget.points and points > len(sent.metrics):
                return self._pieces(sent, window, bucket, accept, what)
        request = sent.to_request()
        try:
            body = self._post(request, accept, what).content  # the response goes with its body
        except EdgeReportsError as exc:
            if points <= len(sent.metrics) or not says_too_large(exc):
                raise  # not about size, or one bucket is already too large
            assert window is not None and bucket is not None
            self._budget.shrink(points)
            return self._pieces(sent, window, bucket, accept, what)
        return answer_rows(body, sent, accept == CSV, what, self._redact)

    def _pieces(
        self, sent: Report, window: Window, bucket: timedelta, accept: str, what: str
    ) -> Rows:
        """``window`` fetched as pieces within the budget: the rows each piece owns, sorted
        as one answer for the window would be."""
        buckets = max(1, self._budget.points // max(1, len(sent.metrics)))
        pieces = split_window(window, bucket, bucket * buckets)
        tables, runs, owners = [], [], []
        for i, piece in enumerate(pieces):
            start = sent.start if i == 0 else piece.start
            end = sent.end if i == len(pieces) - 1 else piece.end
            assert start is not None and end is not None
            table, lengths = self._window_rows(
                sent.between(start, end), piece, accept, what
            ).built()
            tables.append(table)
            runs.append(lengths)
            owners.append(
                (piece.start, piece.end, piece.index == 0, piece.index == piece.count - 1)
            )
        joined, _, starts = owned(tables, owners, at_end=sent.stamps_at_end, runs=runs)
        return Rows.of(in_order(joined, sent.to_request(), starts))


def _hit(pull: CachedPull, part: Part) -> Rows | None:
    """The rows of ``part`` when the cache holds all of them, else None."""
    return pull.hit(part)
