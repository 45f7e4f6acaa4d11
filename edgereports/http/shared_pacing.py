"""``SharedPacer``: one request budget shared by the processes of one host, through a file.

:class:`~edgereports.http.Pacer`'s schedule, kept in a small file instead of memory: the next start
as a wall-clock time, read and moved under an exclusive :func:`fcntl.flock`. Every process that
paces with the same file (the units of one export job on one machine) shares the budget: N
processes at ``rate_limit`` send ``rate_limit`` requests per second between them, not N times it. A
start that comes late never keeps the old schedule (the next one counts from it), so any second
holds at most ``per_second + 1`` starts. No server is involved; machines do not share a file
(across hosts the orchestrator's own limits divide the budget).
"""

from __future__ import annotations

import contextlib
import os
import struct
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from .pacing import Pacer

__all__ = ["SharedPacer"]

_FORMAT = struct.Struct("<d")


class SharedPacer(Pacer):
    """A :class:`Pacer` whose schedule lives in ``path``, shared by every process using it.

    Args:
        per_second: requests per second (a number, or ``"10/s"``, ``"600/min"``).
        path: the schedule file (created when missing; it holds one number, no secret).
        clock: wall-clock seconds (for tests).
        sleep: the wait (for tests).

    Raises:
        ConfigError: ``per_second`` is not a positive rate.

    Example:
        >>> import tempfile, pathlib
        >>> pacer = SharedPacer("600/min", pathlib.Path(tempfile.mkdtemp()) / "budget")
        >>> pacer.per_second, pacer.acquire()
        (10.0, 0.0)
    """

    def __init__(
        self,
        per_second: float | str,
        path: Path,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(per_second, clock=clock, sleep=sleep)
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"SharedPacer(per_second={self.per_second:g}, path={str(self.path)!r})"

    def acquire(self) -> float:
        """Wait for this start (all processes of the file take turns); the seconds slept."""
        slept = 0.0
        with self._turn:  # this process's threads one at a time; processes through the file
            while True:
                with self._file() as fd:
                    now = self._clock()
                    wait = _read(fd) - now
                    if wait <= 0:
                        _write(fd, now + self._interval)
                        return slept
                self._sleep(wait)  # outside the file lock: other processes read meanwhile
                slept += wait

    def pause(self, seconds: float) -> None:
        """Hold every start of every process for ``seconds`` from now (a 429's ``Retry-After``)."""
        if seconds <= 0:
            return
        with self._file() as fd:
            _write(fd, max(_read(fd), self._clock() + seconds))

    @contextlib.contextmanager
    def _file(self) -> Iterator[int]:
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd
        finally:
            os.close(fd)  # closing drops the lock


def _read(fd: int) -> float:
    data = os.pread(fd, _FORMAT.size, 0)
    return _FORMAT.unpack(data)[0] if len(data) == _FORMAT.size else float("-inf")


def _write(fd: int, value: float) -> None:
    os.pwrite(fd, _FORMAT.pack(value), 0)
