"""The demo's summary tables: the report page's (:mod:`edgereports.page.summary`)."""

from __future__ import annotations

from ..page.summary import summary_table

__all__ = ["summary_table"]
