"""What the subcommands share in their set-up: a parser with its help page, ``--progress``,
the settings with the flags that override them."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from typing import Any

from ..config import Settings

__all__ = ["add_command", "add_progress", "settings_from"]


def add_command(
    subparsers: Any, name: str, handler: Callable[[argparse.Namespace], int], **texts: str
) -> argparse.ArgumentParser:
    """Add the subcommand ``name`` to what ``ArgumentParser.add_subparsers()`` returned.

    ``handler`` runs it and returns the exit status; ``texts`` are its ``help`` (its line in
    the list of commands), ``description`` and ``epilog`` (its help page, shown as written).
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, formatter_class=argparse.RawDescriptionHelpFormatter, **texts
    )
    parser.set_defaults(handler=handler)
    return parser


def add_progress(parser: Any, help: str) -> None:
    """Add ``--progress/--no-progress`` (None when neither is given) to a parser or group."""
    parser.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None, help=help
    )


def settings_from(args: argparse.Namespace, names: tuple[str, ...]) -> Settings:
    """The settings of the environment, with the flags of ``names`` given overriding them."""
    settings = Settings.from_env()
    changes = {name: getattr(args, name) for name in names if getattr(args, name, None)}
    return dataclasses.replace(settings, **changes) if changes else settings
