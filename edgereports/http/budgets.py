"""Where shared request budgets live: one file per API key and service host.

The service counts its budget per key, so every process that uses one key against one host
(whatever its job file, working directory or temporary directory) paces through one file of
:class:`~edgereports.http.SharedPacer`. The files are in the per-user cache directory
(``platformdirs``, e.g. ``~/.cache/edgereports/budgets``) unless a directory is given: name one
that every process and container sharing the key sees (a shared volume), and they share the
budget. A file is named by a salted fingerprint of the key and the host (HMAC-SHA256 under a
random salt kept in the directory, so processes that share the directory agree on the name); the
key is never written anywhere. Opening a budget removes the budget files nobody has used for a
day: what they hold (a schedule, a pace) says nothing about the service by then.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import ConfigError

__all__ = ["PREFIX", "STALE_AFTER", "budget_file", "default_directory", "remove_stale"]

#: Budget files untouched for this many seconds are removed when a budget is opened.
STALE_AFTER = 24 * 3600.0
#: The start of every budget file's name.
PREFIX = "budget-"
_SALT = "salt"
_LEGACY = "edgereports-budget-"  # files of earlier versions, in the temporary directory
_PORTS = {"http": 80, "https": 443}


def default_directory() -> Path:
    """The per-user directory of budget files (``platformdirs``: e.g.
    ``~/.cache/edgereports/budgets``)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("edgereports")) / "budgets"


def budget_file(api_key: str, url: str, directory: str | os.PathLike[str] | None = None) -> Path:
    """The budget file of ``api_key`` at the host of ``url``; stale budget files are removed.

    Args:
        api_key: the key the budget belongs to (only its salted fingerprint is used).
        url: the service's address; its scheme, host and port count, not its path.
        directory: where the files live; None for :func:`default_directory`.

    Returns:
        The file's path (created by the first pacer that uses it).

    Raises:
        ConfigError: the directory cannot be created or written.

    Example:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> one = budget_file("k3y-secret", "https://r.example/v1", folder)
        >>> one == budget_file("k3y-secret", "https://R.example:443/v2", folder)  # one host
        True
        >>> one == budget_file("other-key", "https://r.example", folder)
        False
        >>> "k3y" in one.name
        False
    """
    folder = Path(directory).expanduser() if directory is not None else default_directory()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        salt = _salt(folder)
    except OSError as exc:
        raise ConfigError(
            f"budget directory {folder} cannot be used: {exc.strerror or exc}; name a writable "
            "directory (budget_dir in the job file, or EDGEREPORTS_BUDGET_DIR)"
        ) from None
    message = f"{_host(url)}\n{api_key}".encode()
    path = folder / (PREFIX + hmac.new(salt, message, hashlib.sha256).hexdigest()[:32])
    remove_stale(folder, keep=path)
    remove_stale(Path(tempfile.gettempdir()), prefix=_LEGACY)
    return path


def remove_stale(
    folder: Path,
    *,
    keep: Path | None = None,
    prefix: str = PREFIX,
    now: float | None = None,
    older: float = STALE_AFTER,
) -> list[Path]:
    """Remove the budget files in ``folder`` untouched for ``older`` seconds; the ones removed.

    A file in use (locked by a pacer now) is left, as is ``keep``.
    """
    import fcntl

    now = time.time() if now is None else now
    removed: list[Path] = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if not entry.name.startswith(prefix) or (keep is not None and entry.name == keep.name):
                continue
            with contextlib.suppress(OSError):
                if now - entry.stat(follow_symlinks=False).st_mtime < older or not entry.is_file(
                    follow_symlinks=False
                ):
                    continue
                fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # in use: BlockingIOError
                    info = os.fstat(fd)
                    if now - info.st_mtime >= older and os.stat(entry.path).st_ino == info.st_ino:
                        os.unlink(entry.path)
                        removed.append(Path(entry.path))
                finally:
                    os.close(fd)
    return removed


def _salt(folder: Path) -> bytes:
    """The directory's salt, made (once, atomically) by the first process that needs it."""
    path = folder / _SALT
    with contextlib.suppress(FileNotFoundError):
        found = path.read_bytes().strip()
        if len(found) >= 32:
            return found
    draft = folder / f".{_SALT}-{secrets.token_hex(8)}"
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, secrets.token_hex(32).encode())
    finally:
        os.close(fd)
    try:
        if path.exists():  # unreadable as a salt (cut short): replaced
            os.replace(draft, path)
        else:
            os.link(draft, path)  # fails if another process made it first: its salt counts
    except FileExistsError:
        pass
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(draft)
    return path.read_bytes().strip()


def _host(url: str) -> str:
    """``scheme://host:port`` of ``url``, lower-cased (never its user, password or path)."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{scheme}://{(parts.hostname or '').lower()}:{port or _PORTS.get(scheme, 0)}"
