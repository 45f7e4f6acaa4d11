"""The ``edgereports`` command: one module per command group.

``main`` parses and dispatches; ``query`` holds the flags that describe a report (and the
``presets`` and ``query`` commands); ``report``, ``export``, ``content``, ``campaigns`` and
``demo`` are the other groups; ``_content_campaigns`` is what the content and campaigns groups
share.
"""

from __future__ import annotations

from .main import build_parser, main

__all__ = ["build_parser", "main"]
