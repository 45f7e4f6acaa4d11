"""``SharedPacer``: one request budget shared by processes, through a file.

:class:`~edgereports.http.Pacer`'s schedule and pace (:class:`~edgereports.http.pace.Pace`), kept
in a small file instead of memory (wall-clock times), read and moved under an exclusive
:func:`fcntl.flock`. Every process that paces with the same file shares the budget: N processes
at ``rate_limit`` send ``rate_limit`` requests per second between them, not N times it, and a 429
that one of them meets slows them all. A start that comes late never keeps the old schedule (the
next one counts from it), so any second holds at most ``pace + 1`` starts. No server is involved:
processes and containers share the budget when they see the same file
(:func:`~edgereports.http.budgets.budget_file` names one per API key and service host).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import ConfigError
from .pace import Pace
from .pacing import Pacer

__all__ = ["SharedPacer"]


class SharedPacer(Pacer):
    """A :class:`Pacer` whose state lives in ``path``, shared by every process using it.

    Args:
        per_second: the ceiling, requests per second (a number, or ``"10/s"``, ``"600/min"``).
        path: the budget file (created when missing; it holds a few numbers, no secret).
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
        if self.ceiling is None:
            raise ConfigError("a shared request budget needs a rate_limit, got None")
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"SharedPacer(per_second={self.ceiling:g}, path={str(self.path)!r})"

    @property
    def per_second(self) -> float | None:
        """The pace now, as the file says (requests per second)."""
        with self._state() as pace:
            return pace.rate

    def acquire(self) -> float:
        """Wait for this start (all processes of the file take turns); the seconds slept."""
        slept = 0.0
        with self._turn:  # this process's threads one at a time; processes through the file
            while True:
                with self._state() as pace:
                    now = self._clock()
                    wait = pace.take(now, keep_schedule=False)
                if wait <= 0:
                    break
                self._sleep(wait)  # outside the file lock: other processes read meanwhile
                slept += wait
        self._local.started = now
        return slept

    def pause(self, seconds: float) -> None:
        """Hold every start of every process for ``seconds`` from now."""
        with self._state() as pace:
            pace.hold(self._clock(), seconds)

    def refused(self, retry_after: float) -> None:
        """A 429 to this thread's request: cut the pace of every process (see :class:`Pacer`)."""
        with self._state() as pace:
            now = self._clock()
            pace.refuse(now, getattr(self._local, "started", now), retry_after)

    def accepted(self) -> None:
        """Any other answer to this thread's request: the pace of every process grows back."""
        with self._state() as pace:
            pace.accept(self._clock())

    @contextlib.contextmanager
    def _state(self) -> Iterator[Pace]:
        """The file's state under its lock, written back when the block ends."""
        with self._locked() as fd:
            found = os.pread(fd, Pace.size() + 1, 0)
            pace = Pace.unpack(found, self.ceiling)
            yield pace
            os.pwrite(fd, pace.pack(), 0)
            if len(found) > Pace.size():  # written by something else: keep only the state
                os.ftruncate(fd, Pace.size())

    @contextlib.contextmanager
    def _locked(self) -> Iterator[int]:
        """The budget file, open and locked; the lock is taken again if the file was replaced
        meanwhile (a stale file removed by another process)."""
        import fcntl

        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
                except FileNotFoundError:
                    same = False
                if same:
                    yield fd
                    return
            finally:
                os.close(fd)  # closing drops the lock
