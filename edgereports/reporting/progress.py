"""The progress bar over the requests of a pull (``tqdm.auto``: terminal and notebook)."""

from __future__ import annotations

import sys
from typing import Any, Protocol

__all__ = ["Progress", "open_progress", "wants_progress"]


class Progress(Protocol):
    """What the client needs of a bar: count one request done, then close."""

    def update(self, n: int = 1) -> Any: ...

    def close(self) -> Any: ...


class _Silent:
    def update(self, n: int = 1) -> None:
        return None

    def close(self) -> None:
        return None


def _in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython already imported by the kernel, never by us)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    get = getattr(ipython, "get_ipython", None)
    shell = get() if callable(get) else None
    return shell is not None and hasattr(shell, "kernel")


def wants_progress(setting: bool | None, requests: int) -> bool:
    """Whether to show a bar: forced by ``setting``, else for more than one request when
    stderr is a terminal or the code runs in a notebook (off in scripts and cron).
    """
    if setting is not None:
        return setting
    if requests <= 1:
        return False
    stream = sys.stderr
    try:
        tty = stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty or _in_notebook()


def open_progress(setting: bool | None, total: int, desc: str) -> Progress:
    """A bar over ``total`` requests, or a silent stand-in when none is wanted."""
    if not wants_progress(setting, total):
        return _Silent()
    from tqdm.auto import tqdm

    bar: Progress = tqdm(total=total, desc=desc, unit="req", dynamic_ncols=True)
    return bar
