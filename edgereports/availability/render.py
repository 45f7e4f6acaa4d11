"""A ledger as text: one line per row, the hours of each state and the percentage."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .columns import place_columns

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ledger_table", "pct_text"]

_SHOWN = (("available_hours", "available"), ("unavailable_hours", "unavailable"),
          ("maintenance_hours", "maintenance"), ("inactive_hours", "inactive"),
          ("unknown_hours", "unknown"), ("hours", "hours"))  # fmt: skip


def pct_text(value: object) -> str:
    """A percentage as tables print it (two decimals), or ``-`` when none is decided.

    Example:
        >>> pct_text(99.5), pct_text(float("nan"))
        ('99.50%', '-')
    """
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "-"
    return "-" if number != number else f"{number:.2f}%"


def ledger_table(ledger: pd.DataFrame) -> str:
    """The ledger as a text table: a header (what, over which hours, from what), one line per
    row (the subject, the bucket when there are several, the percentage and the hours of each
    state), and what the unavailable hours rest on."""
    attrs = ledger.attrs
    by = str(attrs.get("by") or "customer_site_id")
    span = attrs.get("range") or ["?", "?"]
    inventory = attrs.get("inventory") or {}
    kind = "complete" if inventory.get("complete", True) else "partial: a list of subscribers"
    lines = [
        f"availability by {by} from {span[0]} to {span[1]} (whole UTC hours, judged until "
        f"{attrs.get('judged_until')}); inventory {kind}",
    ]
    subject = place_columns(by)[0]
    buckets = ledger["time_stamp"].nunique() > 1
    head = [subject, *(["bucket (UTC)"] if buckets else []), "availability",
            *(name for _, name in _SHOWN)]  # fmt: skip
    rows = [head]
    for row in ledger.to_dict(orient="records"):
        cells = [str(row[subject])]
        if buckets:
            grain = attrs.get("granularity")
            form = {"HOUR": "%Y-%m-%d %H:00", "MONTH": "%Y-%m"}.get(str(grain), "%Y-%m-%d")
            cells.append(row["time_stamp"].strftime(form))
        cells.append(pct_text(row["availability_pct"]))
        cells += [str(int(row[column])) for column, _ in _SHOWN]
        rows.append(cells)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    left = 2 if buckets else 1
    for r in rows:
        pairs = enumerate(zip(r, widths, strict=True))
        lines.append("  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in pairs))
    if not len(ledger):
        lines.append("(no subject)")
    bases = sorted(set(ledger["basis"].dropna().astype(str)))
    if len(bases) == 1:
        lines.append(f"judged from {bases[0]}")
    outages = attrs.get("outages") or []
    windows = attrs.get("maintenance") or []
    lines.append(
        f"unavailable hours rest on {len(outages)} outage(s) health found; "
        f"{len(windows)} maintenance window(s) excluded; availability = available / "
        "(available + unavailable), unknown hours left out"
    )
    return "\n".join(lines)
