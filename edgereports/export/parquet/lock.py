"""The export lock: one writer per report directory or per day, failing fast otherwise.

Each report directory holds a lock file ``_lock``. A run takes an exclusive, non-blocking
:func:`fcntl.flock` on the lock file of every report it writes, then writes its holder (pid,
host, start time, job) into it. A second run of the same job (or another job writing the same
report) fails at once with :class:`~edgereports.errors.ExportLocked` naming that holder. The
kernel drops the lock when the process ends, even on SIGKILL, so a crashed run never leaves a
stale lock. The lock file itself is never deleted (deleting flock files races). flock works
between processes of one machine; do not share an output root between machines over NFS.

A unit of work (``--from``/``--until``) locks less: a shared lock on ``_lock`` (so no whole
run of the report goes at once) and an exclusive lock per UTC day it writes
(``_locks/YYYY-MM-DD``), so units of disjoint days run side by side and overlapping ones fail
fast naming the holder. Saving the state is serialized by a short blocking lock
(:func:`state_lock`): each unit merges its watermark into the one on disk.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from types import TracebackType

from ..._dependencies import lazy_import
from ...errors import ExportLocked, redact

# POSIX only (flock): loaded when a lock is first taken
fcntl = lazy_import("fcntl")


__all__ = ["DAY_LOCKS", "LOCK_FILE", "ExportLock", "describe_holder", "state_lock"]

LOCK_FILE = "_lock"
#: The directory of a report's per-day lock files (units).
DAY_LOCKS = "_locks"
_STATE_LOCK = "_state.lock"
_UNITS = "export units (--from/--until) of this report"
_HOLDER_LIMIT = 300


def describe_holder(text: str) -> str:
    """Render what a lock file says of its holder as one line (redacted, bounded)."""
    text = text.strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and "pid" in data:
        out = f"pid {data.get('pid')} on {data.get('host', '?')} since {data.get('started', '?')}"
        if data.get("job"):
            out += f" (job {data['job']})"
    else:
        out = " ".join(text.split()) or "unknown holder (empty lock file)"
    out = redact(out)
    return out if len(out) <= _HOLDER_LIMIT else out[: _HOLDER_LIMIT - 3] + "..."


class ExportLock:
    """Exclusive locks on report directories, taken all at once or not at all.

    Args:
        directories: the report directories to lock (created when missing).
        job: the job's name or file, written into the lock files for the holder message.
        days: for a unit of work: the UTC days it writes, by directory (a shared lock on
            each directory, an exclusive one per day); ``None`` locks whole directories.

    Example:
        >>> with ExportLock([Path("out/usage")], job="nightly.toml"):
        ...     ExportLock([Path("out/usage")], job="another.toml").acquire()
        Traceback (most recent call last):
        ...
        edgereports.errors.ExportLocked: ...
    """

    def __init__(
        self,
        directories: Iterable[Path],
        *,
        job: str = "",
        days: Mapping[Path, Iterable[date]] | None = None,
    ) -> None:
        self._dirs = sorted({Path(d) for d in directories})
        self._job = job
        self._days = None if days is None else {Path(k): sorted(set(v)) for k, v in days.items()}
        self._fds: list[int] = []
        self._shared: list[int] = []

    def acquire(self) -> None:
        """Take every lock, or none.

        Raises:
            ExportLocked: another process holds one of them; names the holder.
            OSError: a directory or lock file cannot be made or written (read-only, not a
                directory, disk full); it names the file, and no lock stays taken.
        """
        holder = json.dumps(
            {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "started": datetime.now(UTC).isoformat(timespec="seconds"),
                "job": self._job,
            }
        )
        try:
            for directory in self._dirs:
                directory.mkdir(parents=True, exist_ok=True)
                if self._days is None:
                    self._take(directory / LOCK_FILE, holder)
                    continue
                self._take(directory / LOCK_FILE, holder, shared=True)
                (directory / DAY_LOCKS).mkdir(exist_ok=True)
                for day in self._days.get(directory, ()):
                    self._take(directory / DAY_LOCKS / day.isoformat(), holder)
        except BaseException:
            self.release()
            raise

    def _take(self, path: Path, holder: str, *, shared: bool = False) -> None:
        """Lock one file without waiting (exclusive: and write the holder into it)."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.pread(fd, 4096, 0).decode("utf-8", "replace")
            os.close(fd)
            who = describe_holder(other) if other.strip() else _UNITS
            raise ExportLocked(
                f"another export run holds {path}: {who}; it fails fast instead of "
                "waiting (the lock goes away when that process ends)",
                holder=who,
            ) from None
        if shared:
            self._shared.append(fd)
            return
        self._fds.append(fd)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, holder.encode("utf-8"), 0)
        except OSError as exc:  # a full disk: say which file
            exc.filename = exc.filename or str(path)
            raise

    def release(self) -> None:
        """Drop every lock taken (the lock files stay)."""
        for fds, exclusive in ((self._fds, True), (self._shared, False)):
            while fds:
                fd = fds.pop()
                try:
                    if exclusive:  # its holder goes with it
                        os.ftruncate(fd, 0)
                    fcntl.flock(fd, fcntl.LOCK_UN)
                finally:
                    os.close(fd)

    def __enter__(self) -> ExportLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


@contextlib.contextmanager
def state_lock(report_dir: Path) -> Iterator[None]:
    """Hold the report's state lock (waiting for it: held only while a state is saved)."""
    report_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(report_dir / _STATE_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing drops the lock
