"""The report page: a job file's reports over the last N days, as one self-contained HTML file.

Made for cron and mail: charts are inline PNG images, nothing is fetched when it is opened; a
report that fails is a section that names it, and the rest of the page is still written.
Sections are pluggable: a section maker takes the :class:`PageContext` and returns
:class:`Section` objects (:func:`health_sections` adds the health flags,
:func:`availability_sections` each site's availability this month against the last).

Example:
    >>> from edgereports.page import build_page
    >>> page = build_page(job_file, last="7d", compare="previous_period")
    >>> page.write("weekly.html"), len(page.failures)
    (PosixPath('weekly.html'), 0)
"""

from __future__ import annotations

from .availability import availability_sections
from .build import Page, build_page, check_compare, check_last, page_range
from .compared import comparison_table
from .html import Section, chart_img, png_img, render_document, table_html
from .sections import (
    PageContext,
    SectionMaker,
    failed_section,
    health_sections,
    load_health,
    period_notes,
    report_section,
)
from .summary import change_text, summary_table

__all__ = [
    "Page",
    "PageContext",
    "Section",
    "SectionMaker",
    "availability_sections",
    "build_page",
    "change_text",
    "chart_img",
    "check_compare",
    "check_last",
    "comparison_table",
    "failed_section",
    "health_sections",
    "load_health",
    "page_range",
    "period_notes",
    "png_img",
    "render_document",
    "report_section",
    "summary_table",
    "table_html",
]
