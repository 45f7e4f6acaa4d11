"""The ``edgereports`` command: one module per command group, dispatched by ``main``."""

from __future__ import annotations

from .main import build_parser, main

__all__ = ["build_parser", "main"]
