"""``edgereports cache info|clear``: what the reporting client's cache holds, and emptying it."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..config import ENV_VARS, Settings

__all__ = ["add_parser"]

EPILOG = f"""\
The cache keeps the final chunks of report answers (a UTC day of HOUR buckets, a UTC month of
DAY buckets) as rows on disk, so re-running a pull sends requests only for what it lacks and
for recent data the service may still revise. Clients use it when given cache=PATH or
cache=True, and the CLI and notebooks when {ENV_VARS["cache"]} is set (a directory, or 1 for
the per-user directory).

examples:
  edgereports cache info
  edgereports cache info --dir ~/reports-cache --json
  edgereports cache clear --dir ~/reports-cache
"""


def _cache(args: argparse.Namespace) -> Any:
    from ..reporting.cache import Cache, open_cache

    if args.dir:
        return Cache(args.dir)
    return open_cache(Settings.from_env().cache) or Cache(None)


def _cmd_info(args: argparse.Namespace) -> int:
    info = _cache(args).info()
    if args.json:
        print(json.dumps(info))
    else:
        for name, value in info.items():
            print(f"{name}: {value}")
    return 0


def _cmd_clear(args: argparse.Namespace) -> int:
    cache = _cache(args)
    removed = cache.clear()
    print(f"removed {removed} segment file(s) from {cache.path}")
    return 0


def add_parser(subparsers: Any) -> None:
    """Add the ``cache`` group (``info``, ``clear``) to an ``add_subparsers()`` object."""
    parser = subparsers.add_parser(
        "cache",
        help="show or clear the reporting client's on-disk cache",
        description="Show or clear the on-disk cache of report answers.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="cache_command", metavar="ACTION", required=True)
    where = (
        f"the cache directory (default: {ENV_VARS['cache']} if it names one, else the per-user "
        "cache directory)"
    )
    info = sub.add_parser(
        "info",
        help="where the cache is, its entries, rows and size",
        description="Show where the cache is, its entries (chunks), rows, segments and size.",
    )
    info.add_argument("--dir", help=where)
    info.add_argument("--json", action="store_true", help="print one JSON object")
    info.set_defaults(handler=_cmd_info)
    clear = sub.add_parser(
        "clear", help="remove every entry", description="Remove every entry of the cache."
    )
    clear.add_argument("--dir", help=where)
    clear.set_defaults(handler=_cmd_clear)
