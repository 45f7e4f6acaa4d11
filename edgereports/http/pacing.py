"""``Pacer``: one request budget (requests per second) shared by every thread of a client.

Starts are spaced evenly, ``1 / pace`` apart, with no burst. The pace follows the service (see
:mod:`~edgereports.http.pace`): a 429 cuts it, each accepted answer adds some back, up to the
budget's ``rate_limit``; a pacer made with no rate (``Pacer(None)``, what a client without
``rate_limit=`` gets) holds no start until the service answers 429, keeps to the pace the service
accepted from then on, and drops it again once its threads no longer need it. So a pull against a
service that limits its rate slows down instead of spending its retries and failing, and a burst
of 429s slows a client for a moment, not for the rest of its life.

The hooks in the transport: :class:`~edgereports.http.HttpClient` calls :meth:`Pacer.acquire`
before its first attempt and before each of its own retries, the session's urllib3 retry policy
before each of its retries; both call :meth:`Pacer.refused` on a 429, and the client calls
:meth:`Pacer.accepted` on any other answer.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

from ..config import check_rate_limit
from .pace import Pace

__all__ = ["Pacer"]


class Pacer:
    """Evenly spaced request starts at a pace that follows the service, shared by threads.

    Threads pass one at a time on a schedule ``1 / pace`` apart. A start up to half an
    interval late (a sleep wakes late, the machine is busy) keeps the schedule, so the pace
    holds; a later one (or the first after idle time) starts a new schedule from now. So any
    second holds at most ``pace + 1.5`` starts, whatever the number of threads. A thread
    held up (the interpreter busy, the machine loaded) does not leave at once with the others
    that were held up with it: the spacing counts from the time they really leave.

    Args:
        per_second: the ceiling, requests per second (a number, or ``"10/s"``, ``"600/min"``);
            None for no ceiling: no pace until a 429, then the pace the service accepted.
        clock: seconds, monotonic (for tests).
        sleep: the wait (for tests).

    Raises:
        ConfigError: ``per_second`` is not a positive rate.

    Example:
        >>> pacer = Pacer("600/min")
        >>> pacer.ceiling, pacer.per_second, pacer.acquire()
        (10.0, 10.0, 0.0)
    """

    def __init__(
        self,
        per_second: float | str | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        #: the most requests per second (``rate_limit``); None for none
        self.ceiling = check_rate_limit(per_second, "rate_limit")
        #: True when no rate was given: the pace is learnt from the service's 429s
        self.adaptive = self.ceiling is None
        self._pace = Pace(self.ceiling)
        self._accepted: deque[float] = deque()  # when the accepted answers of the last second came
        self._since = 0.0  # when the first of them came, with none in the second before
        self._clock = clock
        self._sleep = sleep
        self._local = threading.local()  # the start of this thread's latest request
        self._turn = threading.Lock()  # one thread waits for the next start at a time
        self._lock = threading.Lock()  # guards _pace (a 429 does not wait for the turn)

    def __repr__(self) -> str:
        rate = "None" if self.ceiling is None else f"{self.ceiling:g}"
        return f"{type(self).__name__}(per_second={rate})"

    @property
    def per_second(self) -> float | None:
        """The pace now, in requests per second (None: none, every start goes at once)."""
        with self._lock:
            return self._pace.rate

    def acquire(self) -> float:
        """Wait for this thread's start; returns the seconds slept for it (0.0 when none)."""
        if self.adaptive:
            with self._lock:
                now = self._clock()
                if self._pace.rate is None and self._pace.next <= now:
                    self._local.started = now
                    return 0.0  # no pace and no hold: no turn to wait for
        slept = 0.0
        with self._turn:
            while True:
                with self._lock:
                    now = self._clock()
                    wait = self._pace.take(now, keep_schedule=True)
                if wait <= 0:
                    break
                self._sleep(wait)  # a hold that begins meanwhile moves the schedule: loop again
                slept += wait
        self._local.started = now
        return slept

    def pause(self, seconds: float) -> None:
        """Hold every start for ``seconds`` from now."""
        with self._lock:
            self._pace.hold(self._clock(), seconds)

    def refused(self, retry_after: float) -> None:
        """This thread's request was answered 429 with ``retry_after`` seconds to wait: cut the
        pace, and hold every start for that long when most of the latest answers were 429s."""
        with self._lock:
            now = self._clock()
            started = getattr(self._local, "started", now)
            self._pace.refuse(now, started, retry_after, self._accepted_rate(now, retry_after))

    def accepted(self) -> None:
        """This thread's request was answered, and not with a 429: the pace grows back."""
        with self._lock:
            now = self._clock()
            if not self._trim(now):
                self._since = now
            self._accepted.append(now)
            self._pace.accept(now, self._accepted_rate(now))

    def _trim(self, now: float) -> int:
        """Forget the accepted answers older than a second; how many are left."""
        accepted = self._accepted
        while accepted and accepted[0] <= now - 1.0:
            accepted.popleft()
        return len(accepted)

    def _accepted_rate(self, now: float, retry_after: float = 0.0) -> float | None:
        """The answers the service accepted in the last second, over that second, or over the
        time since they began if that is shorter (``retry_after`` added: the service will take
        none before it): what it takes per second; None before any."""
        count = self._trim(now)
        if not count:
            return None
        return count / min(max(now - self._since + retry_after, 0.1), 1.0)
