"""``Pacer``: one request budget (requests per second) shared by every thread of a client.

Starts are spaced evenly, ``1 / per_second`` apart, with no burst; a 429 pauses the whole budget
past its ``Retry-After``. A pacer made with no rate (``Pacer(None)``, what a client without
``rate_limit=`` gets) holds no start until the service answers 429, then keeps to the pace the
service accepted (:meth:`Pacer.pause`), so a pull against a service that limits its rate slows down
instead of spending its retries and failing.

The hook in the transport: :class:`~edgereports.http.HttpClient` calls :meth:`Pacer.acquire`
before its first attempt and before each of its own retries, the session's urllib3 retry policy
before each of its retries, and both call :meth:`Pacer.pause` on a 429.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

from ..config import check_rate_limit

__all__ = ["Pacer"]

#: The slowest pace an adaptive pacer settles on (requests per second).
_SLOWEST = 0.2
#: The share of the measured accepted rate an adaptive pacer keeps to.
_MARGIN = 0.9


class Pacer:
    """Evenly spaced request starts at ``per_second``, shared by threads; 429s pause them all.

    Threads pass one at a time on a schedule ``1 / per_second`` apart. A start up to half an
    interval late (a sleep wakes late, the machine is busy) keeps the schedule, so the pace
    holds; a later one (or the first after idle time) starts a new schedule from now. So any
    second holds at most ``per_second + 1.5`` starts, whatever the number of threads. A thread
    held up (the interpreter busy, the machine loaded) does not leave at once with the others
    that were held up with it: the spacing counts from the time they really leave.

    Args:
        per_second: requests per second (a number, or ``"10/s"``, ``"600/min"``); None for
            no budget until a 429, then the pace the service accepted (``adaptive``).
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
        per_second: float | str | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        rate = check_rate_limit(per_second, "rate_limit")
        #: True when no rate was given: the pace is learnt from the service's 429s
        self.adaptive = rate is None
        self.per_second: float | None = None
        self._interval = self._slack = 0.0
        if rate is not None:
            self._set(rate)
        self._starts: deque[float] = deque(maxlen=4096)  # an adaptive pacer's recent starts
        self._refused: deque[float] = deque(maxlen=4096)  # and its recent 429s
        self._clock = clock
        self._sleep = sleep
        self._turn = threading.Lock()  # one thread waits for the next start at a time
        self._lock = threading.Lock()  # guards _next (pause() does not wait for the turn)
        self._next = float("-inf")  # the earliest next start

    def __repr__(self) -> str:
        rate = "None" if self.per_second is None else f"{self.per_second:g}"
        return f"Pacer(per_second={rate})"

    def _set(self, rate: float) -> None:
        self.per_second = rate
        self._interval = 1.0 / rate
        self._slack = self._interval / 2

    def acquire(self) -> float:
        """Wait for this thread's start; returns the seconds slept for it (0.0 when none)."""
        if self.adaptive:
            with self._lock:
                self._starts.append(self._clock())
                if self.per_second is None and self._next <= self._clock():
                    return 0.0  # no 429 yet and no pause: no budget
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
                # within the slack the schedule holds; after a hold-up it counts from now
                late = now - self._next
                self._next = (self._next if late <= self._slack else now) + self._interval
        return slept

    def pause(self, seconds: float) -> None:
        """Hold every start for ``seconds`` from now (a 429's ``Retry-After``); an adaptive
        pacer also slows to the pace the service accepted."""
        with self._lock:
            now = self._clock()
            if self.adaptive:
                self._refused.append(now)
                self._learn(now)
            if seconds > 0:
                self._next = max(self._next, now + seconds)

    def _learn(self, now: float) -> None:
        """Slow to the pace the service accepted in the last second, less a tenth (a 429 just
        came); when it accepted nothing there is no pace to learn: the ``Retry-After`` alone
        holds."""
        starts = sum(1 for t in self._starts if t > now - 1.0)
        refused = sum(1 for t in self._refused if t > now - 1.0)
        accepted = starts - refused
        if accepted < 1:
            return
        rate = accepted * _MARGIN
        if self.per_second is not None:
            rate = min(rate, self.per_second * _MARGIN)
        self._set(max(rate, _SLOWEST))
