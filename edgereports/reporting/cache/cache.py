"""``Cache``: the on-disk cache a :class:`~edgereports.ReportingClient` keeps its answers in."""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
import uuid
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ...errors import ConfigError, EdgeReportsWarning
from .store import Store

__all__ = ["Cache", "default_directory", "open_cache"]

#: Pulls storing at once into one cache (each pull's writer takes one thread while it runs).
_WRITERS = 4


def default_directory() -> Path:
    """The per-user cache directory (``platformdirs``: e.g. ``~/.cache/edgereports``)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("edgereports"))


class Cache:
    """A cache directory: final chunks of answers as normalized rows.

    Args:
        path: the directory (created if missing); None for the per-user default.
        max_bytes: the bound on the segments' total size; past it the oldest segments are
            evicted first. None: unbounded.

    Raises:
        ConfigError: ``path`` is not a writable directory, or ``max_bytes`` is not positive.

    Example:
        >>> import tempfile
        >>> cache = Cache(tempfile.mkdtemp())
        >>> cache.info()["chunks"]
        0
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, max_bytes: int | None = None):
        if max_bytes is not None and (
            isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0
        ):
            raise ConfigError(f"max_bytes must be a positive number of bytes, got {max_bytes!r}")
        root = check_directory(default_directory() if path is None else path)
        try:
            self._store = Store(root, max_bytes)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cache {str(root)!r} cannot be opened: {exc}") from None
        self.path = root
        self.max_bytes = max_bytes
        self._off = threading.Event()
        self._writers: ThreadPoolExecutor | None = None
        self._writers_pid = 0
        self._writers_lock = threading.Lock()

    def __repr__(self) -> str:
        bound = f", max_bytes={self.max_bytes}" if self.max_bytes is not None else ""
        return f"Cache({str(self.path)!r}{bound})"

    @property
    def store(self) -> Store:
        """The segments and their index."""
        return self._store

    @property
    def enabled(self) -> bool:
        """False once the directory could not be written (the client then pulls without it)."""
        return not self._off.is_set()

    def writers(self) -> ThreadPoolExecutor:
        """The threads pulls store their rows on: made on first use and kept (a thread
        started and joined per pull costs more than storing a small pull); a forked child,
        which inherits no thread, makes its own."""
        with self._writers_lock:
            if self._writers is None or self._writers_pid != os.getpid():
                self._writers = ThreadPoolExecutor(_WRITERS, "edgereports-cache")
                self._writers_pid = os.getpid()
            return self._writers

    def disable(self, error: BaseException) -> None:
        """Stop using the cache after a failed write, with one warning."""
        if self._off.is_set():
            return
        self._off.set()
        warnings.warn(
            f"the cache directory {str(self.path)!r} {_why(error)} "
            f"({type(error).__name__}: {error}); going on without a cache",
            EdgeReportsWarning,
            stacklevel=2,
        )

    def info(self) -> dict[str, Any]:
        """What the cache holds: ``path``, ``series``, ``chunks``, ``rows``, ``segments``,
        ``bytes``, ``max_bytes``."""
        return self._store.info()

    def clear(self) -> int:
        """Remove every entry; returns the number of segment files removed."""
        return self._store.clear()


def _why(error: BaseException) -> str:
    """What went wrong, in words: a full disk, a read-only one, no permission, or else."""
    code = getattr(error, "errno", None)
    text = str(error).lower()
    if code == errno.ENOSPC or "disk is full" in text or "no space left" in text:
        return "is full: no space is left on its disk"
    if code == errno.EROFS or "read-only" in text or "readonly" in text:
        return "cannot be written: its file system is read-only"
    if code in (errno.EACCES, errno.EPERM):
        return "cannot be written: permission denied"
    return "cannot be written"


def check_directory(path: str | os.PathLike[str]) -> Path:
    """The cache directory, created if missing.

    Raises:
        ConfigError: ``path`` is not a directory this process can write to.
    """
    root = Path(path).expanduser()
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = root / f".probe-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(
            f"cache must be a writable directory, got {str(root)!r} ({exc.strerror or exc})"
        ) from None
    return root


def open_cache(option: object, max_bytes: int | None = None) -> Cache | None:
    """The cache ``ReportingClient(cache=...)`` names: a path, True (the per-user default),
    a :class:`Cache`, or None/False (none).

    Raises:
        ConfigError: anything else, or a path that is not a writable directory.
    """
    if option is None or option is False:
        return None
    if isinstance(option, Cache):
        return option
    if option is True:
        return Cache(None, max_bytes=max_bytes)
    if isinstance(option, str | os.PathLike) and str(option).strip():
        return Cache(option, max_bytes=max_bytes)
    raise ConfigError(
        f"cache must be a directory path, True (the per-user cache), None/False or a Cache, "
        f"got {option!r}"
    )
