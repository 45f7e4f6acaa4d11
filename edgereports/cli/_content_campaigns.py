"""Plumbing shared by the ``content`` and ``campaigns`` command groups.

The connection comes from :meth:`Settings.from_env() <edgereports.config.Settings.from_env>`,
with ``--base-url`` and ``--partner-name`` overriding; the API key only ever comes from
``EDGEREPORTS_API_KEY`` (no flag that would echo it into shell history). Results print as a
table, or ``--json`` / ``--csv``.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..campaigns import CampaignClient
from ..content import ContentClient
from ._command import settings_from

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Handler",
    "Leaf",
    "add_group",
    "campaigns_client",
    "content_client",
    "emit",
    "emit_value",
    "records",
]

Handler = Callable[[argparse.Namespace], int]
#: Adds one action (name, help text, handler) to a command group; returns its parser.
Leaf = Callable[[str, str, Handler], argparse.ArgumentParser]
_CONNECTION = ("base_url", "partner_name")  # the flags that override the settings


def content_client(args: argparse.Namespace) -> ContentClient:
    return ContentClient.from_settings(settings_from(args, _CONNECTION))


def campaigns_client(args: argparse.Namespace) -> CampaignClient:
    return CampaignClient.from_settings(settings_from(args, _CONNECTION))


def emit(df: pd.DataFrame, args: argparse.Namespace, columns: tuple[str, ...] = ()) -> int:
    """Print a frame as a table (``columns`` only, when given), JSON records or CSV."""
    if getattr(args, "json", False):
        print(df.to_json(orient="records", date_format="iso", indent=2))
    elif getattr(args, "csv", False):
        sys.stdout.write(df.to_csv(index=False))
    elif df.empty:
        print("(no rows)")
    else:
        shown = df[[c for c in columns if c in df.columns]] if columns else df
        print(shown.to_string(index=False))
    return 0


def records(items: list[Any], args: argparse.Namespace) -> int:
    """Print a few small records (dataclasses or dicts) as a table, JSON or CSV, without pandas."""
    rows: list[dict[str, Any]] = [
        dataclasses.asdict(item)
        if dataclasses.is_dataclass(item) and not isinstance(item, type)
        else dict(item)
        for item in items
    ]
    names = list(rows[0]) if rows else []
    if getattr(args, "json", False):
        print(json.dumps(rows, indent=2, default=str))
    elif getattr(args, "csv", False):
        writer = csv.DictWriter(sys.stdout, fieldnames=names, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    elif not rows:
        print("(no rows)")
    else:
        cells = [names, *([str(row[n]) for n in names] for row in rows)]
        widths = [max(len(line[i]) for line in cells) for i in range(len(names))]
        for line in cells:
            print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
    return 0


def emit_value(name: str, text: str, args: argparse.Namespace) -> int:
    if getattr(args, "json", False):
        print(json.dumps({name: text}))
    elif getattr(args, "csv", False):
        print(f"{name}\n{text}")
    else:
        print(text)
    return 0


def add_group(sub: Any, name: str, helptext: str, description: str) -> Leaf:
    """Add the command group ``name``; return the function that adds one action to it.

    Each action gets the connection flags, the output flags and its ``handler``.
    """
    conn = argparse.ArgumentParser(add_help=False)
    g = conn.add_argument_group("connection (the key comes from EDGEREPORTS_API_KEY only)")
    g.add_argument("--base-url", help="address of the APIs (default: EDGEREPORTS_BASE_URL)")
    g.add_argument(
        "--partner-name", help="subscription Service ID (default: EDGEREPORTS_PARTNER_NAME)"
    )
    group = sub.add_parser(name, help=helptext, description=description)
    leaves = group.add_subparsers(dest=f"{name}_command", metavar="ACTION", required=True)

    def leaf(action: str, text: str, handler: Handler) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = leaves.add_parser(
            action, help=text, description=text, parents=[conn]
        )
        output = p.add_mutually_exclusive_group()
        output.add_argument("--json", action="store_true", help="print JSON records")
        output.add_argument("--csv", action="store_true", help="print CSV")
        p.set_defaults(handler=handler)
        return p

    return leaf
