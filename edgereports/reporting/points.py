"""The points budget: how many points (buckets x metrics) one request may ask for.

Not the request budget (``rate_limit``: requests per second). A pull plans its windows from the
points budget (:data:`~edgereports.reporting.plan.DEFAULT_POINTS` unless the caller sets one).
The service documents no range limit, so an answer saying that a request is too large (HTTP
413, or a 400 whose body says so, as the sandbox's documented limits do) makes the client split
that part in halves on bucket boundaries and keep the smaller points budget for the parts still
waiting, for the rest of the client's life.
"""

from __future__ import annotations

import re
import threading

from ..errors import ApiError, ConfigError

__all__ = ["PointsBudget", "says_too_large"]

# what a 400 says when the request asked for too much (the sandbox: "the answer would hold N
# points ...", "the range spans more than N days; split it")
_TOO_LARGE = re.compile(r"(?i)too (?:large|big|long|many)|would hold \d+ points|split it")


def says_too_large(error: BaseException) -> bool:
    """Whether ``error`` is an answer saying the request asked for too much."""
    if not isinstance(error, ApiError):
        return False
    if error.status_code == 413:
        return True
    return error.status_code == 400 and bool(_TOO_LARGE.search(f"{error} {error.body_excerpt}"))


class PointsBudget:
    """Points per request, shared by every thread of a client; it only ever shrinks.

    Args:
        points: the starting budget (a whole number >= 1).

    Raises:
        ConfigError: ``points`` is not a whole number >= 1.

    Example:
        >>> b = PointsBudget(100_000)
        >>> b.shrink(5_000)
        2500
        >>> b.points
        2500
    """

    def __init__(self, points: int) -> None:
        if isinstance(points, bool) or not isinstance(points, int) or points < 1:
            raise ConfigError(f"points_per_request must be a whole number >= 1, got {points!r}")
        self._points = points
        self._lock = threading.Lock()

    @property
    def points(self) -> int:
        """The current budget."""
        return self._points

    def shrink(self, refused: int) -> int:
        """A request of ``refused`` points was too large: keep at most half of it."""
        with self._lock:
            self._points = max(1, min(self._points, refused // 2))
            return self._points
