"""The demo's ``index.html``: a report page (:mod:`edgereports.page`) of the eleven presets.

One section per preset with its chart (inline, as on every report page), summary and first
rows, plus a link to the preset's Parquet file beside the page.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import TYPE_CHECKING

from .._version import __version__
from ..export.files import atomic_write_bytes
from ..health import flags_html
from ..page import Section, failed_section, png_img, render_document, report_section
from ._result import incident_text

if TYPE_CHECKING:
    from ._result import DemoResult, ReportOutcome

__all__ = ["render_index", "write_index"]


def _section(outcome: ReportOutcome, out: Path) -> Section:
    plan = outcome.plan
    anchor, title = plan.slug, f"{plan.number}. {plan.name}"
    if plan.skipped:
        body = (
            f'<p class="purpose">{html.escape(plan.purpose)}</p>'
            f'<p class="skipped">Skipped: {html.escape(plan.skipped)}</p>'
        )
        return Section(anchor, title, body)
    facts = [f"fetched in {outcome.seconds:.2f} s"]
    if outcome.parquet is not None:
        rel = html.escape(outcome.parquet.relative_to(out).as_posix())
        facts.append(f'frame: <a href="{rel}">{rel}</a>')
    if len(plan.reports) > 1:
        facts.append(f"{len(plan.reports)} requests (one per device)")
    extra = f'<p class="meta">{" · ".join(facts)}</p>'
    if plan.reports:
        body = html.escape(json.dumps(plan.reports[0].to_request(), indent=2))
        extra += f"<details><summary>Request</summary><pre>{body}</pre></details>"
    chart = None
    if outcome.chart is not None:
        chart = png_img(outcome.chart.read_bytes(), f"chart of {plan.name}")
    return report_section(
        anchor,
        title,
        outcome.frame,
        purpose=plan.purpose,
        error=outcome.error,
        chart=chart or "",
        extra=extra,
    )


def _health_section(result: DemoResult) -> Section:
    """The account's health flags over the daily presets' range, or why there are none."""
    anchor, title = "health", "Health flags of the account's devices"
    if result.health is None:
        return failed_section(anchor, title, result.health_error or "not judged")
    purpose = "Each device and site judged against its own history over the last 7 days."
    body = flags_html(result.health, title=None)
    if result.incidents:
        listed = "".join(f"<li>{html.escape(incident_text(i))}</li>" for i in result.incidents)
        body += (
            '<p class="meta">Injected into the sandbox (the ground truth to hold these flags '
            f"against; a flag may start or end a few hours apart, where the device's own "
            f"habits make the gap longer):</p><ul>{listed}</ul>"
        )
    return Section(anchor, title, f'<p class="purpose">{purpose}</p>{body}')


def render_index(result: DemoResult) -> str:
    """The HTML page of a demo run (self-contained but for the frames' links)."""
    sections = [_section(o, result.out) for o in result.outcomes]
    sections.append(_health_section(result))
    clock = "unknown (no answer)"
    if result.clock is not None:
        clock = f"{result.clock:%Y-%m-%d %H:%M:%S} UTC"
    facts = [
        f"Data from {result.source}",
        f"Service clock (the Date of its last answer): {clock}",
        f"edgereports {__version__}",
    ]
    return render_document("edgereports demo: the eleven report presets", facts, sections)


def write_index(result: DemoResult) -> Path:
    """Write ``index.html`` atomically into the run's output directory; returns its path."""
    atomic_write_bytes(result.index, render_index(result).encode("utf-8"))
    return result.index
