"""Progress bars (``tqdm.auto``: terminal and notebook), shown only where someone watches.

One rule for every long job of the package (a pull's requests, an export's windows, content
waiting to sync): a bar when forced, else when stderr is a terminal or the code runs in a
Jupyter kernel, never in scripts and cron. tqdm is imported only when a bar is shown.
"""

from __future__ import annotations

import sys
from typing import Any, Protocol

from ._dependencies import lazy_import

tqdm_auto = lazy_import("tqdm.auto")

__all__ = ["Progress", "open_progress", "wants_progress"]


class Progress(Protocol):
    """What a job needs of a bar: count items done, then close."""

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


def wants_progress(setting: bool | None, items: int, *, min_items: int = 2) -> bool:
    """Whether to show a bar: forced by ``setting``, else for at least ``min_items`` items
    when stderr is a terminal or the code runs in a notebook (off in scripts and cron).
    """
    if setting is not None:
        return setting
    if items < min_items:
        return False
    stream = sys.stderr
    try:
        tty = stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty or _in_notebook()


def open_progress(
    setting: bool | None,
    total: int,
    desc: str,
    *,
    unit: str = "req",
    min_items: int = 2,
    position: int | None = None,
) -> Progress:
    """A bar over ``total`` items, or a silent stand-in when none is wanted.

    Args:
        setting: ``True``/``False`` force the bar on or off; ``None`` decides as
            :func:`wants_progress` says.
        unit: what an item is (``req``, ``window``, ``content``).
        min_items: with ``setting=None``, the fewest items that get a bar.
        position: the bar's line when several bars show at once.
    """
    if not wants_progress(setting, total, min_items=min_items):
        return _Silent()
    bar: Progress = tqdm_auto.tqdm(
        total=total, desc=desc, unit=unit, position=position, dynamic_ncols=True
    )
    return bar
