"""``Pace``: when the next request may start, and how the pace follows the service's 429s.

The state of one request budget and its rules, with no clock, lock or sleep of its own:
:class:`~edgereports.http.Pacer` keeps a ``Pace`` in memory, :class:`~edgereports.http.SharedPacer`
in a file (:meth:`Pace.pack`). The pace follows the service (additive increase, multiplicative
decrease):

- A 429 cuts the pace by the share of the latest answers that were 429s: one among eight leaves
  seven eighths of it; half or more leave half. A 429 to a request that started before the
  previous cut's ``Retry-After`` had passed says nothing the cut did not hear: one cut per
  ``Retry-After``.
- When half or more of the latest answers are 429s, the service refuses the key rather than a
  request: every start waits for the ``Retry-After``. A 429 among answers that mostly pass holds
  only its own request (the retry waits for its ``Retry-After``).
- Each accepted answer adds a tenth of the peak (the pace the latest cut started from): after a
  cut of half, five accepted answers bring the pace back, never past the ceiling
  (``rate_limit``). Cuts that follow one another before the pace is back lower the peak by a
  tenth each at most, so the pace comes back within seconds even after a long run of 429s.
- A budget with no ceiling has no pace until half of its latest eight answers are 429s (the
  service refusing the key; a 429 now and then among answers that pass is the service refusing
  a request, not the pace). Then it keeps to the rate the service accepted in the last second
  (over the time the answers took, the ``Retry-After`` included), less a tenth; while the
  service refuses the key and for two seconds after, cuts go at least that low and the pace
  grows to at most that rate; then it grows as any pace does, and once the service has not
  refused the key for four seconds the budget drops its pace (sends as fast as its threads go).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

__all__ = ["Pace"]

#: The latest answers a cut and a hold look at.
WINDOW = 8
#: The share of the peak that each accepted answer adds back.
STEP = 0.1
#: The least share of the pace a cut keeps.
LEAST_KEPT = 0.5
#: The least share of the peak a cut keeps as the peak.
PEAK_KEPT = 0.9
#: The slowest pace (requests per second).
SLOWEST = 0.2
#: The share of the measured accepted rate a budget with no ceiling starts at.
MARGIN = 0.9
#: A budget with no pace takes one when at least this share of its latest answers are 429s.
LEARN_SHARE = 0.5
#: A budget with no ceiling grows its pace past what the service took once it has not refused
#: the key for this many seconds, and drops its pace after twice as long.
CALM = 2.0

_FORMAT = struct.Struct("<5d2i")


@dataclass
class Pace:
    """One budget's schedule and pace (seconds on the clock of whoever keeps it).

    Attributes:
        ceiling: the most requests per second (``rate_limit``); None for none.
        next: the earliest next start.
        rate: the pace in requests per second; None for none (every start goes at once).
        peak: the pace the latest cut started from (or a tenth less than the previous peak).
        quiet: a 429 to a request started before this time does not cut the pace again.
        refusing_at: when the service last refused the key (half the latest answers 429s).
        answers: the latest answers, one bit each (1: a 429), the newest lowest.
        seen: how many of those bits count (at most :data:`WINDOW`).

    Example:
        >>> pace = Pace(10.0)
        >>> pace.take(0.0, keep_schedule=True), pace.take(0.0, keep_schedule=True)
        (0.0, 0.1)
        >>> pace.refuse(0.05, started=0.0, retry_after=0.5)  # one 429 in one answer: held
        >>> pace.rate, pace.next
        (5.0, 0.55)
        >>> for _ in range(5):
        ...     pace.accept(1.0)
        >>> pace.rate  # five accepted answers later: back at the ceiling
        10.0
    """

    ceiling: float | None
    next: float = -math.inf
    rate: float | None = None
    peak: float = 0.0
    quiet: float = -math.inf
    refusing_at: float = -math.inf
    answers: int = 0
    seen: int = 0

    def __post_init__(self) -> None:
        if self.rate is None and self.ceiling is not None:
            self.rate = self.peak = self.ceiling

    def take(self, now: float, *, keep_schedule: bool) -> float:
        """Book a start at ``now`` and return 0.0, or return the seconds still to wait.

        With ``keep_schedule``, a start up to half an interval late keeps the schedule (the
        next one is due an interval after the one it missed); otherwise, and after a longer
        hold-up, the next start counts from ``now``.
        """
        wait = self.next - now
        if wait > 0:
            return wait
        rate = self.rate
        if rate is not None:
            interval = 1.0 / rate
            late = now - self.next
            self.next = (self.next if keep_schedule and late <= interval / 2 else now) + interval
        return 0.0

    def hold(self, now: float, seconds: float) -> None:
        """No start before ``seconds`` from ``now``."""
        if seconds > 0:
            self.next = max(self.next, now + seconds)

    def refuse(
        self, now: float, started: float, retry_after: float, accepted_rate: float | None = None
    ) -> None:
        """A 429 at ``now`` to a request that started at ``started``.

        Args:
            now: when the 429 came.
            started: when its request started.
            retry_after: the seconds the service asked to wait.
            accepted_rate: the rate the service accepted lately (requests per second), None
                when unknown: a budget with no ceiling keeps to less than it.
        """
        self._answer(refused=True)
        refused = self.answers.bit_count()
        if self._refusing(refused):
            self.refusing_at = now
        if self.rate is None or started >= self.quiet:
            if self.rate is not None:
                self.peak = max(self.rate, self.peak * PEAK_KEPT)
                kept = self.rate * max(LEAST_KEPT, 1.0 - refused / self.seen)
                if self.ceiling is None and accepted_rate is not None and self._refusing(refused):
                    kept = min(kept, accepted_rate * MARGIN)  # below what the service took
                self.rate = max(kept, SLOWEST)
            elif accepted_rate is not None and self._refusing(refused):
                self.rate = self.peak = max(accepted_rate * MARGIN, SLOWEST)
            self.quiet = now + retry_after
        if 2 * refused >= self.seen:
            self.hold(now, retry_after)

    def accept(self, now: float, accepted_rate: float | None = None) -> None:
        """An answer at ``now`` that is not a 429: the pace grows by a tenth of its peak.

        Args:
            now: when the answer came.
            accepted_rate: the rate the service accepted in the last second (requests per
                second), if known: a budget with no ceiling that the service refused lately
                grows its pace to at most that.
        """
        self._answer(refused=False)
        if self.rate is None:
            return
        grown = self.rate + STEP * self.peak
        if self.ceiling is not None:
            self.rate = min(grown, self.ceiling)
            return
        if accepted_rate is not None and now - self.refusing_at < CALM:
            grown = min(grown, max(self.rate, accepted_rate))  # no more than the service took
        self.rate = None if now - self.refusing_at >= 2 * CALM else grown

    def _refusing(self, refused: int) -> bool:
        """Whether ``refused`` 429s among the latest answers (eight of them at least) are
        the service refusing the key."""
        return self.seen == WINDOW and refused >= LEARN_SHARE * WINDOW

    def _answer(self, *, refused: bool) -> None:
        self.answers = ((self.answers << 1) | refused) & ((1 << WINDOW) - 1)
        self.seen = min(self.seen + 1, WINDOW)

    def pack(self) -> bytes:
        """The state as bytes (no ceiling: each user of a file brings its own)."""
        rate = 0.0 if self.rate is None else self.rate
        floats = (self.next, rate, self.peak, self.quiet, self.refusing_at)
        return _FORMAT.pack(*floats, self.answers, self.seen)

    @classmethod
    def unpack(cls, data: bytes, ceiling: float | None) -> Pace:
        """The state :meth:`pack` wrote, paced within ``ceiling``; a fresh one for any other
        bytes (an empty file, or one an older version wrote)."""
        if len(data) != _FORMAT.size:
            return cls(ceiling)
        *values, answers, seen = _FORMAT.unpack(data)
        if any(math.isnan(v) for v in values) or not 0 <= seen <= WINDOW or values[1] < 0:
            return cls(ceiling)
        next_, rate, peak, quiet, refusing_at = values
        pace = cls(ceiling, next_, rate or None, peak, quiet, refusing_at)
        pace.answers, pace.seen = answers, seen
        if ceiling is not None:
            pace.rate = min(pace.rate or ceiling, ceiling)
            pace.peak = min(pace.peak or ceiling, ceiling)
        return pace

    @staticmethod
    def size() -> int:
        """The length of :meth:`pack`'s bytes."""
        return _FORMAT.size
