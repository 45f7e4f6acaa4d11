"""One line on stderr for an error: no colour codes off a terminal, no raw XML, no line breaks.

Errors from below (an object store's answer through ``deltalake``, an OS error) may span lines,
carry ANSI colour codes and an S3 XML document; the command prints each as one line.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import NoReturn

__all__ = ["ShortErrors", "one_line", "say"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_XML_DECLARATION = re.compile(r"<\?xml[^>]*\?>")
_XML_ERROR = re.compile(r"<Error>(?P<body>.*?)</Error>", re.DOTALL)
_TAG = re.compile(r"<(?P<name>Code|Message)>(?P<text>[^<]*)</(?P=name)>")
_ANY_TAG = re.compile(r"</?[A-Za-z][^<>]*>")


def _xml_error(match: re.Match[str]) -> str:
    found = {m["name"]: m["text"].strip() for m in _TAG.finditer(match["body"])}
    return ": ".join(v for v in (found.get("Code"), found.get("Message")) if v)


def one_line(text: str, *, colour: bool) -> str:
    """``text`` on one line (and its ``hint:`` on a second): an S3 ``<Error>`` document as
    ``Code: Message``, other tags dropped, chained causes (``↳``) and other lines joined with
    ``; ``, colour codes kept only with ``colour``.

    Example:
        >>> one_line("Generic S3 error\\n  \\x1b[31m↳\\x1b[0m 404 Not Found", colour=False)
        'Generic S3 error; 404 Not Found'
    """
    if not colour:
        text = _ANSI.sub("", text)
    text = _XML_DECLARATION.sub("", text)
    text = _XML_ERROR.sub(_xml_error, text)
    text = _ANY_TAG.sub(" ", text)
    out: list[list[str]] = [[]]
    for line in text.splitlines():
        words = " ".join(line.replace("↳", " ").split())
        if words.startswith("hint:") and out[-1]:
            out.append([])  # a hint keeps its own line
        if words:
            out[-1].append(words)
    return "\n".join("; ".join(group) for group in out if group)


def say(prefix: str, text: object) -> None:
    """Print ``prefix`` and ``text`` as one line on stderr (colour only on a terminal)."""
    colour = bool(getattr(sys.stderr, "isatty", lambda: False)())
    print(f"{prefix}{one_line(str(text), colour=colour)}", file=sys.stderr)


class ShortErrors(argparse.ArgumentParser):
    """An argument parser whose errors are one line and a pointer to ``--help`` (not the
    whole usage, fifteen lines for ``edgereports report``); its subcommands' parsers too."""

    def error(self, message: str) -> NoReturn:
        """Print ``prog: error: message`` and where the options are told; exit with 2."""
        say(f"{self.prog}: error: ", f"{message} (see '{self.prog} --help')")
        raise SystemExit(2)
