"""A griffe extension for the API reference: read ``Example:`` sections as ``Examples:``.

The package's docstrings head their doctests with ``Example:``, which griffe's Google parser
does not know and renders as an admonition of plain Markdown, so ``>>>`` lines lose their code
formatting and outputs such as ``[1, 1]`` read as reference links. This renames the heading
before the docstring is parsed; the package itself is unchanged.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_HEADING = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    """Rename ``Example:`` section headings to ``Examples:`` in every docstring."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _HEADING.sub(r"\1Examples:", obj.docstring.value)
