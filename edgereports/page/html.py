"""The page's HTML: one self-contained document (styles and charts inline, nothing fetched).

A page is a header (what, when, which version), the failures if any, a table of contents and
one ``<section>`` per :class:`Section`. Charts are PNG images inlined as ``data:`` URIs, so
the file can be mailed or opened anywhere without the network.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..plotting import figure_png

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = ["STYLE", "Section", "chart_img", "png_img", "render_document", "table_html"]

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
       color: #1f2933; background: #f5f7fa; }
header { background: #1f3a5f; color: white; padding: 1.2rem 2rem; }
header h1 { margin: 0 0 .3rem 0; font-size: 1.5rem; }
header p { margin: .1rem 0; opacity: .9; }
nav { padding: .8rem 2rem; background: white; border-bottom: 1px solid #d9e2ec;
      display: flex; flex-wrap: wrap; gap: .3rem 1.2rem; }
nav a { color: #1f3a5f; text-decoration: none; white-space: nowrap; }
nav a.failed { color: #b42318; }
main { max-width: 1180px; margin: 0 auto; padding: 1rem 2rem 3rem; }
section { background: white; border: 1px solid #d9e2ec; border-radius: 8px;
          margin: 1.2rem 0; padding: 1rem 1.4rem; }
section h2 { margin: .2rem 0; font-size: 1.15rem; }
section section { border: none; padding: 0; margin: .4rem 0; }
.purpose { color: #52606d; margin: 0 0 .8rem 0; }
.meta { color: #7b8794; font-size: .85rem; }
.note { color: #52606d; font-size: .9rem; margin: .3rem 0; }
.error { color: #b42318; font-weight: 600; }
.problems { background: #fef3f2; border: 1px solid #fda29b; border-radius: 8px;
            padding: .6rem 1.2rem; margin: 1.2rem 0; }
.skipped { color: #8a6d00; }
img { max-width: 100%; height: auto; border: 1px solid #eef2f6; }
table { border-collapse: collapse; font-size: .82rem; margin: .6rem 0; }
th, td { border-bottom: 1px solid #e4e7eb; padding: .25rem .6rem; text-align: right; }
th { background: #f0f4f8; }
td:first-child, th:first-child { text-align: left; }
details { margin: .5rem 0; }
pre { background: #f0f4f8; padding: .6rem; overflow-x: auto; font-size: .8rem; }
"""


@dataclass(frozen=True)
class Section:
    """One section of a page.

    Attributes:
        id: the anchor (letters, digits, ``_.-``), unique on the page.
        title: the heading (plain text).
        body: the section's HTML fragment (already escaped).
        failed: one line saying what failed (plain text), or None.
    """

    id: str
    title: str
    body: str
    failed: str | None = None


def png_img(data: bytes, alt: str) -> str:
    """An ``<img>`` holding ``data`` (PNG bytes) inline as a ``data:`` URI."""
    encoded = base64.b64encode(data).decode("ascii")
    return f'<img src="data:image/png;base64,{encoded}" alt="{html.escape(alt)}">'


def chart_img(ax: Axes, alt: str, *, dpi: int = 90) -> str:
    """Render the figure of ``ax`` as an inline PNG ``<img>`` and close the figure."""
    return png_img(figure_png(ax, dpi=dpi), alt)


def table_html(frame: pd.DataFrame) -> str:
    """A frame as an HTML table (no index; nulls blank; text escaped)."""
    text: str = frame.to_html(index=False, border=0, na_rep="", escape=True)
    return text


def render_document(
    title: str, facts: Sequence[str], sections: Sequence[Section], *, intro: str = ""
) -> str:
    """The whole page.

    Args:
        title: the page's title (plain text).
        facts: lines of the header (plain text): range, clock, version, ...
        sections: the sections, in order.
        intro: an HTML fragment placed before the sections (e.g. a note).

    Returns:
        The document's text.
    """
    failed = [s for s in sections if s.failed]
    nav = "".join(
        f'<a href="#{html.escape(s.id)}"{" class=failed" if s.failed else ""}>'
        f"{html.escape(s.title)}</a>"
        for s in sections
    )
    problems = ""
    if failed:
        items = "".join(
            f'<li><a href="#{html.escape(s.id)}">{html.escape(s.title)}</a>: '
            f"{html.escape(s.failed or '')}</li>"
            for s in failed
        )
        problems = (
            f'<div class="problems" id="failures"><p class="error">{len(failed)} of '
            f"{len(sections)} sections failed; the page shows what was fetched.</p>"
            f"<ul>{items}</ul></div>"
        )
    body = "".join(_section(s) for s in sections)
    lines = "".join(f"<p>{html.escape(line)}</p>" for line in facts)
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<header><h1>{html.escape(title)}</h1>{lines}</header>"
        f"<nav>{nav}</nav><main>{problems}{intro}{body}</main></body></html>\n"
    )


def _section(section: Section) -> str:
    error = ""
    if section.failed:
        error = f'<p class="error">Failed: {html.escape(section.failed)}</p>'
    return (
        f'<section id="{html.escape(section.id)}"><h2>{html.escape(section.title)}</h2>'
        f"{error}{section.body}</section>"
    )
