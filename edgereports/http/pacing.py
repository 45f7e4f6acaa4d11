"""``Pacer``: one request budget (requests per second) shared by every thread of a client.

Starts are spaced evenly, ``1 / per_second`` apart, with no burst: whatever the number of
threads, no one-second window holds more than ``per_second`` (rounded up) starts. A 429 pauses
the whole budget: :meth:`Pacer.pause` moves the next start past the ``Retry-After``, and a thread
already waiting for a slot when the pause begins takes a new one after it.

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
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next = float("-inf")  # the earliest start of the next request
        self._pauses = 0  # pauses that moved the next start so far

    def __repr__(self) -> str:
        return f"Pacer(per_second={self.per_second:g})"

    def acquire(self) -> float:
        """Wait for this thread's slot; returns the seconds waited."""
        waited = 0.0
        while True:
            with self._lock:
                now = self._clock()
                slot = max(now, self._next)
                self._next = slot + self._interval
                pauses = self._pauses
            if slot > now:
                self._sleep(slot - now)
                waited += slot - now
            with self._lock:
                if self._pauses == pauses:
                    return waited
            # a pause began while this thread waited: its slot is void, take one after it

    def pause(self, seconds: float) -> None:
        """Hold every start for ``seconds`` from now (a 429's ``Retry-After``)."""
        if seconds <= 0:
            return
        with self._lock:
            until = self._clock() + seconds
            if until > self._next:
                self._next = until
                self._pauses += 1
