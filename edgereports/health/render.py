"""Flags as text: an HTML section for a report page and the explorer, and a terminal table.

Both show the episodes first (an outage of an eNodeB or a site, with how many devices and
subscribers it hit), then the flags, with times in the zone they were judged in (or the one
asked) and the zone named; then what was judged from what, the deactivated SIMs, the
maintenance windows and what they suppressed.
"""

from __future__ import annotations

import html
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from ..query.times import parse_tz

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["flags_html", "flags_table", "zone_of"]

_SEVERITY_COLOURS = {"high": "#b3261e", "medium": "#a05a00", "low": "#44546a"}
_SHOWN = 5


def zone_of(flags: pd.DataFrame, tz: str | tzinfo | None = None) -> tuple[tzinfo, str]:
    """The zone to show times in (``tz``, else the one the flags were judged in, else UTC) and
    its name."""
    from datetime import UTC

    name = tz if isinstance(tz, str) else flags.attrs.get("zone") if tz is None else None
    zone = tz if isinstance(tz, tzinfo) else parse_tz(name) if name and name != "UTC" else UTC
    shown = name if isinstance(name, str) else str(zone)
    return zone, shown


def _when(value: Any, zone: tzinfo) -> str:
    """An instant as ``2024-03-12 09:30+05:30`` in ``zone``."""
    import pandas as pd

    if value is None or value is pd.NaT or (isinstance(value, float)):
        return ""
    stamp = pd.Timestamp(value).tz_convert(zone)
    offset = stamp.strftime("%z")
    return stamp.strftime("%Y-%m-%d %H:%M") + (f"{offset[:3]}:{offset[3:]}" if offset else "")


def _basis(flags: pd.DataFrame) -> str:
    """One sentence: what the flags were judged from."""
    about = flags.attrs.get("inventory") or {}
    n = about.get("subscribers", flags.attrs.get("subjects", 0))
    if about.get("complete", True):
        text = f"Judged from an inventory of {n} subscribers ({about.get('source', 'given')})"
    else:
        text = (
            f"Judged from a partial list of {n} subscribers: sites from their own reports, "
            "eNodeBs from the devices listed, SIM lives from the service's evidence"
        )
    shard = flags.attrs.get("shard")
    if shard:
        text += f"; shard {shard}"
    return text + "."


def _notes(flags: pd.DataFrame, zone: tzinfo) -> list[str]:
    """Lines about what was not flagged, and why."""
    out = []
    gone = flags.attrs.get("deactivated") or []
    if gone:
        shown = ", ".join(f"{d['msisdn']} from {_when(d['from'], zone)}" for d in gone[:_SHOWN])
        more = f" and {len(gone) - _SHOWN} more" if len(gone) > _SHOWN else ""
        out.append(f"Deactivated SIMs (not flagged): {shown}{more}.")
    windows = flags.attrs.get("maintenance") or []
    if windows:
        shown = "; ".join(
            f"{w['scope']} {w['subject']} {_when(w['start'], zone)} to {_when(w['end'], zone)}"
            for w in windows[:_SHOWN]
        )
        more = f" and {len(windows) - _SHOWN} more" if len(windows) > _SHOWN else ""
        hidden = len(flags.attrs.get("suppressed") or [])
        out.append(f"Maintenance windows (not judged): {shown}{more}; {hidden} flag(s) suppressed.")
    skipped = flags.attrs.get("unjudged") or []
    if skipped:
        first = skipped[0]
        out.append(
            f"Not judged: {len(skipped)} subscriber(s), e.g. {first['msisdn']}: {first['why']}."
        )
    return out


def _episode_line(e: dict[str, Any], zone: tzinfo) -> str:
    span = f"from {_when(e['start'], zone)} to {_when(e['end'], zone)}"
    return f"{e['severity']}: {e['summary']}, {span}"


def flags_html(
    flags: pd.DataFrame, *, title: str | None = "Health flags", tz: str | tzinfo | None = None
) -> str:
    """Render a flags frame (from :func:`~edgereports.health.health`) as an HTML fragment.

    A ``<section>`` with a heading, what the flags were judged from, the episodes (a list),
    one table row per flag (times in ``tz``, by default the zone they were judged in, named in
    the header) and notes on deactivated SIMs, maintenance windows and subscribers not judged;
    every text is escaped. No script, no external style: a page includes it as it is.

    Args:
        flags: the flags frame.
        title: the heading (None: none).
        tz: the zone of the times shown.

    Returns:
        The fragment.

    Example:
        >>> from edgereports.health.frame import empty_flags
        >>> "no flags" in flags_html(empty_flags())
        True
    """
    zone, name = zone_of(flags, tz)
    head = f"<h2>{html.escape(title)}</h2>\n" if title else ""
    span = flags.attrs.get("range") or []
    when = f" from {span[0]} to {span[1]}" if len(span) == 2 else ""
    parts = [f'<section class="health">\n{head}']
    if flags.attrs.get("shape") == "health":
        parts.append(f'<p class="basis">{html.escape(_basis(flags))}</p>\n')
    episodes = flags.attrs.get("episodes") or []
    if episodes:
        items = "".join(
            f'<li><span style="color:{_SEVERITY_COLOURS.get(e["severity"], "inherit")};'
            f'font-weight:600">{html.escape(_episode_line(e, zone))}</span> '
            f"<code>{html.escape(e['episode'])}</code></li>\n"
            for e in episodes
        )
        parts.append(
            f"<h3>{len(episodes)} episode{'s' if len(episodes) != 1 else ''}</h3>\n"
            f'<ul class="health-episodes">\n{items}</ul>\n'
        )
    if not len(flags):
        parts.append(f"<p>{html.escape(f'no flags{when}.')}</p>\n")
    else:
        rows = []
        for rec in flags.itertuples(index=False):
            colour = _SEVERITY_COLOURS.get(str(rec.severity), "inherit")
            severity = html.escape(str(rec.severity))
            episode = getattr(rec, "episode", None)
            cells = [
                html.escape(str(rec.kind)),
                html.escape(str(rec.subject)),
                html.escape(_when(rec.start, zone)),
                html.escape(_when(rec.end, zone)),
                f'<span style="color:{colour};font-weight:600">{severity}</span>',
                html.escape(str(rec.evidence)),
                html.escape(str(episode)) if isinstance(episode, str) else "",
            ]
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        zone_label = html.escape(name)
        header = "".join(
            f"<th>{h}</th>"
            for h in (
                "kind",
                "subject",
                f"start ({zone_label})",
                f"end ({zone_label})",
                "severity",
                "evidence",
                "episode",
            )
        )
        count = f"{len(flags)} flag{'s' if len(flags) != 1 else ''}{when}."
        parts.append(
            f"<p>{html.escape(count)}</p>\n"
            f'<table class="health-flags">\n<thead><tr>{header}</tr></thead>\n<tbody>\n'
            + "\n".join(rows)
            + "\n</tbody>\n</table>\n"
        )
    notes = _notes(flags, zone)
    if notes:
        parts.append("".join(f'<p class="note">{html.escape(n)}</p>\n' for n in notes))
    parts.append("</section>\n")
    return "".join(parts)


def flags_table(flags: pd.DataFrame, *, tz: str | tzinfo | None = None) -> str:
    """Render a flags frame as text: the episodes, then a table of the flags (times in ``tz``,
    by default the zone they were judged in, with their offsets), or one line when there are
    none; then the notes.

    Example:
        >>> from edgereports.health.frame import empty_flags
        >>> flags_table(empty_flags())
        'no flags'
    """
    zone, _ = zone_of(flags, tz)
    lines = [f"episode {_episode_line(e, zone)}" for e in flags.attrs.get("episodes") or []]
    if not len(flags):
        span = flags.attrs.get("range") or []
        lines.append("no flags" + (f" from {span[0]} to {span[1]}" if len(span) == 2 else ""))
    else:
        shown = flags.assign(
            start=[_when(v, zone) for v in flags["start"]],
            end=[_when(v, zone) for v in flags["end"]],
        )
        if "episode" in shown.columns:
            shown["episode"] = shown["episode"].fillna("")
        lines.append(str(shown.to_string(index=False)))
    return "\n".join(lines + _notes(flags, zone))
