"""Atomic files: every file edgereports writes appears whole or not at all.

One writer serves every surface (the export's partitions and state, ``edgereports report
--parquet/--csv/--json``, the explorer's "Save Parquet", the demo): the bytes go to a hidden
temporary file beside the target, are flushed to disk and moved over the target with
:func:`os.replace`; on any failure the temporary file is removed.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .._dependencies import lazy_import
from .._version import __version__
from ..errors import InputError

pa = lazy_import("pyarrow")
pq = lazy_import("pyarrow.parquet")

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "METADATA_KEY",
    "atomic_write",
    "atomic_write_bytes",
    "check_writable",
    "describe_os_error",
    "fsync_dir",
    "save_parquet",
    "temporary_path",
]

#: The Parquet metadata key holding a frame's shape and request (no secret).
METADATA_KEY = b"edgereports"


def check_writable(path: str | Path, what: str = "output") -> Path:
    """Check, before any work, that a file can be written at ``path`` (its directory exists).

    Args:
        path: the file to write.
        what: names the argument in messages (e.g. ``"--csv"``).

    Returns:
        The path.

    Raises:
        InputError: ``path`` is a directory, its parent is missing or not a directory, or the
            directory is not writable (read-only file system, permissions).

    Example:
        >>> check_writable("nodir/x.json", "--json")
        Traceback (most recent call last):
        ...
        edgereports.errors.InputError: --json nodir/x.json: directory nodir does not exist
    """
    target = Path(path)
    parent = target.parent
    problem = ""
    if target.is_dir():
        problem = "it is a directory; give a file name"
    elif not parent.exists():
        problem = f"directory {parent} does not exist"
    elif not parent.is_dir():
        problem = f"{parent} is not a directory"
    elif not os.access(parent, os.W_OK | os.X_OK):
        problem = f"directory {parent} is not writable"
    if problem:
        raise InputError(f"{what} {target}: {problem}")
    return target


def describe_os_error(exc: OSError) -> str:
    """One line for a refusal of the disk: what went wrong and on which file.

    Example:
        >>> describe_os_error(OSError(28, "No space left on device", "out/_state.json"))
        'No space left on device: out/_state.json'
    """
    what = exc.strerror or type(exc).__name__
    where = exc.filename if exc.filename is not None else ""
    return f"{what}: {where}" if where else (str(exc) or what)


def temporary_path(path: Path) -> Path:
    """A fresh hidden name beside ``path`` (``.NAME.<random>.tmp``; the umask applies)."""
    return path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")


def fsync_dir(directory: Path) -> None:
    """Flush a directory entry to disk (where the platform allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(
    path: Path,
    write: Callable[[IO[bytes]], object],
    *,
    before_move: Callable[[], None] | None = None,
    make_parents: bool = True,
) -> int:
    """Write ``path`` through a temporary file in the same directory; return its size.

    Args:
        path: the file to write.
        write: writes the content to the open binary file it is given.
        before_move: called when the temporary file is complete, before it is moved.
        make_parents: create the missing parent directories (else a missing one is an error).

    Raises:
        OSError: the disk refused; no temporary file is left and ``path`` is unchanged.
    """
    if make_parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(path)
    try:
        with open(tmp, "xb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        if before_move is not None:
            before_move()
        size = os.path.getsize(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    return size


def atomic_write_bytes(path: Path, data: bytes) -> int:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_write`)."""
    return atomic_write(path, lambda fh: fh.write(data))


def save_parquet(df: pd.DataFrame, path: str | Path, *, make_parents: bool = True) -> Path:
    """Write one frame to a Parquet file atomically, with its shape and request as metadata.

    The frame's dtypes are kept (``string``, ``datetime64[us, UTC]``, ``float64``,
    ``Int64``); ``df.attrs["shape"]`` and ``df.attrs["request"]`` are stored under the
    metadata key ``edgereports``.

    Args:
        df: a normalized frame.
        path: the file to write.
        make_parents: create the missing parent directories.

    Returns:
        The path written.

    Raises:
        OSError: the file cannot be written (nothing is left behind).

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"metric": ["uplink_bytes"], "value": [12.0]})
        >>> save_parquet(df, "exports/usage.parquet")
        PosixPath('exports/usage.parquet')
    """
    target = Path(path)
    table = pa.Table.from_pandas(df, preserve_index=False)
    info: dict[str, Any] = {
        "shape": df.attrs.get("shape"),
        "request": df.attrs.get("request"),
        "rows": len(df),
        "toolkit_version": __version__,
    }
    metadata = dict(table.schema.metadata or {})
    metadata[METADATA_KEY] = json.dumps(info, default=str).encode("utf-8")
    table = table.replace_schema_metadata(metadata)
    atomic_write(
        target,
        lambda fh: pq.write_table(table, fh, compression="snappy"),
        make_parents=make_parents,
    )
    return target
