"""The rate-limit mode: at most N API requests per key in any one-second window, else 429.

A sliding window with no burst, as docs/sandbox.md ("Rate-limit mode") describes it. The key
(the credential a request presents, else the client's address) is kept in memory only and
never shown.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable

__all__ = ["Throttle"]

WINDOW = 1.0


class Throttle:
    """Admits or refuses API requests per key (thread-safe).

    Args:
        per_second: requests per key per sliding second; None turns the mode off.
        clock: seconds, monotonic (for tests).

    Raises:
        ValueError: ``per_second`` is not a whole number >= 1.
    """

    def __init__(
        self, per_second: int | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._seen: dict[str, deque[float]] = {}
        self._refused = 0
        self.per_second = _checked(per_second)

    def set(self, per_second: int | None) -> None:
        """Change the limit (None: off); the window's history is kept.

        Raises:
            ValueError: ``per_second`` is not a whole number >= 1.
        """
        checked = _checked(per_second)
        with self._lock:
            self.per_second = checked

    def admit(self, key: str) -> float | None:
        """Admit one request of ``key``: None, or the seconds to wait (it is refused)."""
        with self._lock:
            limit = self.per_second
            if limit is None:
                return None
            now = self._clock()
            seen = self._seen.setdefault(key, deque())
            while seen and seen[0] <= now - WINDOW:
                seen.popleft()
            if len(seen) >= limit:
                self._refused += 1
                return max(seen[0] + WINDOW - now, 0.001)
            seen.append(now)
            return None

    @property
    def refused(self) -> int:
        """Requests answered 429 by this mode so far."""
        with self._lock:
            return self._refused

    def reset(self) -> None:
        """Forget the count of refused requests and the window."""
        with self._lock:
            self._refused = 0
            self._seen.clear()


def retry_after_header(seconds: float) -> str:
    """``seconds`` as a ``Retry-After`` value, rounded up to the millisecond."""
    return f"{math.ceil(seconds * 1000) / 1000:g}"


def _checked(per_second: int | None) -> int | None:
    if per_second is None:
        return None
    if isinstance(per_second, bool) or not isinstance(per_second, int) or per_second < 1:
        raise ValueError(f"requests_per_second must be a whole number >= 1, got {per_second!r}")
    return per_second
