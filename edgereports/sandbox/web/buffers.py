"""Recycled body buffers: large answers are written into memory the process already touched.

Fresh memory pays a page fault per page (the allocator maps and unmaps blocks that large on
every request). The pool keeps a few buffers; a response takes one, writes its answer into it,
and gives it back once the server has sent the last byte (never earlier: a buffer is in one
response at a time; one a response abandons is left to the garbage collector).
"""

from __future__ import annotations

import threading

import numpy as np
import numpy.typing as npt

__all__ = ["BufferPool"]

U8 = npt.NDArray[np.uint8]


class BufferPool:
    """At most ``keep`` idle buffers of ``keep_bytes`` in all (the smallest go first); a buffer
    is made on demand, ``headroom`` times as large as asked (answers of a size vary a little).
    """

    def __init__(self, keep: int = 4, keep_bytes: int = 128 << 20, headroom: float = 1.25) -> None:
        self._idle: list[U8] = []
        self._keep = keep
        self._keep_bytes = keep_bytes
        self._headroom = headroom
        self._lock = threading.Lock()

    def take(self, size: int) -> U8:
        """Return a buffer of at least ``size`` bytes (the largest idle one, else a new one)."""
        with self._lock:
            if self._idle:
                largest = max(range(len(self._idle)), key=lambda i: len(self._idle[i]))
                buf = self._idle.pop(largest)
                if len(buf) >= size:
                    return buf
        return np.empty(int(size * self._headroom), dtype=np.uint8)

    def give(self, buf: U8) -> None:
        """Return a buffer nothing reads any more (the smallest are dropped past the limits)."""
        with self._lock:
            self._idle.append(buf)
            while self._idle and (
                len(self._idle) > self._keep or sum(map(len, self._idle)) > self._keep_bytes
            ):
                self._idle.pop(min(range(len(self._idle)), key=lambda i: len(self._idle[i])))

    def idle(self) -> int:
        """Return how many buffers wait to be reused."""
        with self._lock:
            return len(self._idle)
