"""The sandbox's clock: the real time, a shifted real time, or a fixed instant you move by hand.

Everything in the sandbox that depends on "now" reads this clock. Tests pass a fixed clock so
that answers are deterministic, and move it with :meth:`Clock.set` or :meth:`Clock.advance`.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

__all__ = ["Clock", "iso_ms", "parse_instant"]


def parse_instant(value: datetime | str) -> datetime:
    """Return ``value`` as an aware UTC datetime.

    Args:
        value: an aware datetime, or an ISO 8601 string with a UTC offset (``Z`` allowed).

    Returns:
        The same instant in UTC.

    Raises:
        ValueError: the string is not ISO 8601 or the value has no UTC offset.
    """
    when = datetime.fromisoformat(value) if isinstance(value, str) else value
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValueError(f"instant {value!s} has no UTC offset")
    return when.astimezone(UTC)


def iso_ms(epoch: float) -> str:
    """Return ``YYYY-MM-DDTHH:MM:SS.mmmZ`` for epoch seconds."""
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


class Clock:
    """A thread-safe clock that is either fixed (moved by hand) or the real time plus a shift.

    Args:
        now: a fixed instant (aware datetime or ISO 8601 string with offset); ``None`` follows
            the real time.
        shift: added to the real time when ``now`` is ``None`` (e.g. ``timedelta(days=-1)``).

    Example:
        >>> clock = Clock("2022-07-08T10:00:00+05:30")
        >>> clock.advance(300).isoformat()
        '2022-07-08T04:35:00+00:00'
    """

    def __init__(
        self, now: datetime | str | None = None, *, shift: timedelta | float = 0.0
    ) -> None:
        self._lock = threading.Lock()
        self._fixed: datetime | None = None if now is None else parse_instant(now)
        self._shift = shift if isinstance(shift, timedelta) else timedelta(seconds=shift)

    @property
    def fixed(self) -> bool:
        """Whether the clock stands still until it is moved."""
        with self._lock:
            return self._fixed is not None

    def now(self) -> datetime:
        """Return the current instant, aware, in UTC."""
        with self._lock:
            if self._fixed is not None:
                return self._fixed
            return datetime.now(UTC) + self._shift

    def timestamp(self) -> float:
        """Return the current instant as POSIX seconds."""
        return self.now().timestamp()

    def set(self, when: datetime | str) -> datetime:
        """Fix the clock at ``when``.

        Args:
            when: an aware datetime or an ISO 8601 string with a UTC offset.

        Returns:
            The new current instant, in UTC.

        Raises:
            ValueError: ``when`` has no UTC offset or does not parse.
        """
        instant = parse_instant(when)
        with self._lock:
            self._fixed = instant
        return instant

    def advance(self, delta: timedelta | float) -> datetime:
        """Move the clock forward by ``delta`` (seconds or a timedelta; negative moves back).

        A fixed clock moves its instant; a real-time clock grows its shift.

        Args:
            delta: how far to move.

        Returns:
            The new current instant, in UTC.
        """
        step = delta if isinstance(delta, timedelta) else timedelta(seconds=delta)
        with self._lock:
            if self._fixed is not None:
                self._fixed = self._fixed + step
            else:
                self._shift = self._shift + step
        return self.now()

    def follow_real_time(self, shift: timedelta | float = 0.0) -> None:
        """Make the clock follow the real time again, plus ``shift``.

        Args:
            shift: added to the real time (seconds or a timedelta).
        """
        with self._lock:
            self._fixed = None
            self._shift = shift if isinstance(shift, timedelta) else timedelta(seconds=shift)

    def __repr__(self) -> str:
        mode = "fixed" if self.fixed else "real"
        return f"Clock({mode}, now={self.now().isoformat()})"
