"""Flags as text: an HTML fragment for a report page and a table for a terminal."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["flags_html", "flags_table"]

_SEVERITY_COLOURS = {"high": "#b3261e", "medium": "#a05a00", "low": "#44546a"}


def _when(value: object) -> str:
    text = str(value)
    return text[:16].replace("T", " ") if text not in ("NaT", "None") else ""


def flags_html(flags: pd.DataFrame, *, title: str | None = "Health flags") -> str:
    """Render a flags frame (from :func:`~edgereports.health.health`) as an HTML fragment.

    A ``<section>`` with a heading, a sentence saying how many flags (or that there are none)
    and one table row per flag (times in UTC); every text is escaped. No script, no external
    style: a page includes it as it is.

    Args:
        flags: the flags frame.
        title: the heading (None: none).

    Returns:
        The fragment.

    Example:
        >>> from edgereports.health.flags import empty_flags
        >>> "no flags" in flags_html(empty_flags())
        True
    """
    head = f"<h2>{html.escape(title)}</h2>\n" if title else ""
    span = flags.attrs.get("range") or []
    when = f" from {html.escape(span[0])} to {html.escape(span[1])}" if len(span) == 2 else ""
    if not len(flags):
        return f'<section class="health">\n{head}<p>no flags{when}.</p>\n</section>\n'
    rows = []
    for rec in flags.itertuples(index=False):
        colour = _SEVERITY_COLOURS.get(str(rec.severity), "inherit")
        cells = [
            html.escape(str(rec.kind)),
            html.escape(str(rec.subject)),
            _when(rec.start),
            _when(rec.end),
            f'<span style="color:{colour};font-weight:600">{html.escape(str(rec.severity))}</span>',
            html.escape(str(rec.evidence)),
        ]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    header = "".join(
        f"<th>{h}</th>"
        for h in ("kind", "subject", "start (UTC)", "end (UTC)", "severity", "evidence")
    )
    count = f"{len(flags)} flag{'s' if len(flags) != 1 else ''}{when}."
    return (
        f'<section class="health">\n{head}<p>{html.escape(count)}</p>\n'
        f'<table class="health-flags">\n<thead><tr>{header}</tr></thead>\n<tbody>\n'
        + "\n".join(rows)
        + "\n</tbody>\n</table>\n</section>\n"
    )


def flags_table(flags: pd.DataFrame) -> str:
    """Render a flags frame as a plain text table (times in UTC), or one line when empty.

    Example:
        >>> from edgereports.health.flags import empty_flags
        >>> flags_table(empty_flags())
        'no flags'
    """
    if not len(flags):
        span = flags.attrs.get("range") or []
        return "no flags" + (f" from {span[0]} to {span[1]}" if len(span) == 2 else "")
    shown = flags.assign(
        start=[_when(v) for v in flags["start"]], end=[_when(v) for v in flags["end"]]
    )
    text: str = shown.to_string(index=False)
    return text
