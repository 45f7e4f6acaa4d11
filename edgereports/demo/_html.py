"""The demo's ``index.html``: one section per preset with its chart, summary and first rows."""

from __future__ import annotations

import html
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .._version import __version__
from ..export.files import atomic_write_bytes
from ._summary import summary_table

if TYPE_CHECKING:
    from ._result import DemoResult, ReportOutcome

__all__ = ["render_index", "write_index"]

_HEAD_ROWS = 8

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
       color: #1f2933; background: #f5f7fa; }
header { background: #1f3a5f; color: white; padding: 1.2rem 2rem; }
header h1 { margin: 0 0 .3rem 0; font-size: 1.5rem; }
header p { margin: 0; opacity: .85; }
nav { padding: .8rem 2rem; background: white; border-bottom: 1px solid #d9e2ec;
      display: flex; flex-wrap: wrap; gap: .3rem 1.2rem; }
nav a { color: #1f3a5f; text-decoration: none; white-space: nowrap; }
main { max-width: 1180px; margin: 0 auto; padding: 1rem 2rem 3rem; }
section { background: white; border: 1px solid #d9e2ec; border-radius: 8px;
          margin: 1.2rem 0; padding: 1rem 1.4rem; }
section h2 { margin: .2rem 0; font-size: 1.15rem; }
.purpose { color: #52606d; margin: 0 0 .8rem 0; }
.meta { color: #7b8794; font-size: .85rem; }
.error { color: #b42318; font-weight: 600; }
.skipped { color: #8a6d00; }
img { max-width: 100%; height: auto; border: 1px solid #eef2f6; }
table { border-collapse: collapse; font-size: .82rem; margin: .6rem 0; }
th, td { border-bottom: 1px solid #e4e7eb; padding: .25rem .6rem; text-align: right; }
th { background: #f0f4f8; }
td:first-child, th:first-child { text-align: left; }
details { margin: .5rem 0; }
pre { background: #f0f4f8; padding: .6rem; overflow-x: auto; font-size: .8rem; }
"""


def _table(outcome: ReportOutcome) -> str:
    frame = outcome.frame
    if frame is None:
        return ""
    summary = summary_table(frame).to_html(index=False, border=0)
    head = frame.head(_HEAD_ROWS).to_html(index=False, border=0, na_rep="")
    return (
        f"<h3>Summary</h3>{summary}"
        f"<details><summary>First {min(_HEAD_ROWS, len(frame))} of {len(frame)} rows"
        f"</summary>{head}</details>"
    )


def _section(outcome: ReportOutcome, out: Path) -> str:
    plan = outcome.plan
    parts = [
        f'<section id="{html.escape(plan.slug)}">',
        f"<h2>{plan.number}. {html.escape(plan.name)}</h2>",
        f'<p class="purpose">{html.escape(plan.purpose)}</p>',
    ]
    if plan.skipped:
        parts.append(f'<p class="skipped">Skipped: {html.escape(plan.skipped)}</p></section>')
        return "".join(parts)
    if outcome.error:
        parts.append(f'<p class="error">{html.escape(outcome.error)}</p>')
    if outcome.chart is not None:
        src = html.escape(outcome.chart.relative_to(out).as_posix())
        parts.append(f'<img src="{src}" alt="chart of {html.escape(plan.name)}">')
    parts.append(_table(outcome))
    facts = [f"fetched in {outcome.seconds:.2f} s"]
    if outcome.parquet is not None:
        rel = html.escape(outcome.parquet.relative_to(out).as_posix())
        facts.append(f'frame: <a href="{rel}">{rel}</a>')
    if len(plan.reports) > 1:
        facts.append(f"{len(plan.reports)} requests (one per device)")
    parts.append(f'<p class="meta">{" · ".join(facts)}</p>')
    requests = [r.to_request() for r in plan.reports[:1]]
    if requests:
        body = html.escape(json.dumps(requests[0], indent=2))
        parts.append(f"<details><summary>Request</summary><pre>{body}</pre></details>")
    parts.append("</section>")
    return "".join(parts)


def render_index(result: DemoResult) -> str:
    """Return the HTML page of a demo run (charts by relative path, tables inline).

    Args:
        result: the run.

    Returns:
        The page's text.
    """
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    nav = "".join(
        f'<a href="#{html.escape(o.plan.slug)}">{o.plan.number}. {html.escape(o.plan.name)}</a>'
        for o in result.outcomes
    )
    sections = "".join(_section(o, result.out) for o in result.outcomes)
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width, initial-scale=1'>"
        f"<title>edgereports demo</title><style>{_STYLE}</style></head><body>"
        "<header><h1>edgereports demo: the eleven report presets</h1>"
        f"<p>Data from {html.escape(result.source)} · written {when} · "
        f"edgereports {html.escape(__version__)}</p></header>"
        f"<nav>{nav}</nav><main>{sections}</main></body></html>\n"
    )


def write_index(result: DemoResult) -> Path:
    """Write ``index.html`` atomically into the run's output directory.

    Args:
        result: the run.

    Returns:
        The page's path.
    """
    atomic_write_bytes(result.index, render_index(result).encode("utf-8"))
    return result.index
