"""``Pacer``: one request budget (requests per second) shared by every thread of a client.

Starts are spaced evenly, ``1 / per_second`` apart, with no burst: whatever the number of
threads, a one-second window holds about ``per_second`` starts, never a clump of them. A 429
pauses the whole budget: :meth:`Pacer.pause` moves the next start past the ``Retry-After``,
for the thread waiting for its turn as for those behind it.

The hook in the transport: :class:`~edgereports.http.HttpClient` calls :meth:`Pacer.acquire`
before its first attempt and before each of its own retries, the session's urllib3 retry policy
before each of its retries, and both call :meth:`Pacer.pause` on a 429.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ..config import check_rate_limit

__all__ = ["Pacer"]


class Pacer:
    """Evenly spaced request starts at ``per_second``, shared by threads; 429s pause them all.

    Threads pass one at a time on a schedule ``1 / per_second`` apart. A start up to half an
    interval late (a sleep wakes late, the machine is busy) keeps the schedule, so the pace
    holds; a later one (or the first after idle time) starts a new schedule from now. So any
    second holds at most ``per_second + 1.5`` starts, whatever the number of threads. A thread
    held up (the interpreter busy, the machine loaded) does not leave at once with the others
    that were held up with it: the spacing counts from the time they really leave.

    Args:
        per_second: requests per second (a number, or ``"10/s"``, ``"600/min"``).
        clock: seconds, monotonic (for tests).
        sleep: the wait (for tests).

    Raises:
        ConfigError: ``per_second`` is not a positive rate.

    Example:
        >>> pacer = Pacer("600/min")
        >>> pacer.per_second, pacer.acquire()
        (10.0, 0.0)
    """

    def __init__(
        self,
        per_second: float | str,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        rate = check_rate_limit(per_second, "rate_limit")
        assert rate is not None
        self.per_second = rate
        self._interval = 1.0 / rate
        self._slack = self._interval / 2
        self._clock = clock
        self._sleep = sleep
        self._turn = threading.Lock()  # one thread waits for the next start at a time
        self._lock = threading.Lock()  # guards _next (pause() does not wait for the turn)
        self._next = float("-inf")  # the earliest next start

    def __repr__(self) -> str:
        return f"Pacer(per_second={self.per_second:g})"

    def acquire(self) -> float:
        """Wait for this thread's start; returns the seconds slept for it (0.0 when none)."""
        slept = 0.0
        with self._turn:
            while True:
                with self._lock:
                    now = self._clock()
                    wait = self._next - now
                if wait <= 0:
                    break
                self._sleep(wait)  # a pause that begins meanwhile moves _next: loop again
                slept += wait
            with self._lock:
                # the schedule through a sleep's small lateness; after a longer hold-up (or
                # idle time) the spacing counts from now, so no clump of starts follows it
                late = now - self._next
                self._next = (self._next if late <= self._slack else now) + self._interval
        return slept

    def pause(self, seconds: float) -> None:
        """Hold every start for ``seconds`` from now (a 429's ``Retry-After``)."""
        if seconds <= 0:
            return
        with self._lock:
            self._next = max(self._next, self._clock() + seconds)
