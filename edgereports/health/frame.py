"""The flags frame: one row per flag, and in ``df.attrs`` what was judged and from what.

:func:`merge` puts the frames of the shards of one run back together (a shard holds whole
sites, so their flags and episodes are disjoint).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from .rules import KINDS

if TYPE_CHECKING:
    import pandas as pd

    from .context import Flag, Site

__all__ = ["COLUMNS", "empty_flags", "flags_frame", "merge"]

#: The columns of the flags frame.
COLUMNS = ("kind", "subject", "start", "end", "severity", "evidence", "episode")
_LISTS = ("episodes", "deactivated", "unjudged", "maintenance", "suppressed", "reports")


def empty_flags() -> pd.DataFrame:
    """A flags frame without rows (the full schema)."""
    import pandas as pd

    stamps = ("start", "end")
    return pd.DataFrame(
        {
            c: pd.Series([], dtype="datetime64[us, UTC]" if c in stamps else "string")
            for c in COLUMNS
        }
    )


def _order(row: tuple[Any, ...]) -> tuple[Any, ...]:
    kind, subject, start, end = row[:4]
    return (start, KINDS.index(kind) if kind in KINDS else len(KINDS), subject, end)


def flags_frame(found: Sequence[tuple[Flag, Site]], attrs: dict[str, Any]) -> pd.DataFrame:
    """The frame of ``found`` flags (times from each flag's grid) with ``attrs``."""
    import pandas as pd

    rows = []
    for flag, site in found:
        hours = site.grid.hours
        step = pd.Timedelta(hours=1)
        rows.append((flag.kind, flag.subject, hours[flag.a], hours[flag.b - 1] + step,
                     flag.severity, flag.evidence, flag.episode))  # fmt: skip
    out = empty_flags()
    if rows:
        rows.sort(key=_order)
        out = pd.DataFrame(rows, columns=list(COLUMNS)).astype(out.dtypes.to_dict())
    out.attrs = {"shape": "health"}
    out.attrs.update(attrs)
    return out


def merge(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The flags of the shards of one run as one frame: rows in order, ``attrs`` combined
    (lists joined and ordered, counts added), ``shard`` saying which shards were merged.

    Raises:
        InputError: the frames are not the shards of one run (another range, a shard missing
            or twice).

    Example:
        >>> from edgereports.sandbox import serve
        >>> with serve(seed=0, clock="2024-03-15T12:00:00+05:30") as sb:
        ...     inv = er.Inventory.from_sandbox(sb)
        ...     with er.ReportingClient(sb.api_key, sb.reporting_url, progress=False) as c:
        ...         parts = [er.health(c, inventory=inv, start="7d", end="today", shard=(i, 2))
        ...                  for i in (1, 2)]  # on two machines, say
        >>> [p.attrs["shard"] for p in parts], merge(parts).attrs["shard"]
        (['1/2', '2/2'], 'merged 2')
    """
    import pandas as pd

    if not frames:
        raise InputError("merge needs the flags of at least one shard")
    first = frames[0].attrs
    shards = [f.attrs.get("shard") for f in frames]
    counts = {s.split("/")[1] for s in shards if isinstance(s, str)}
    for f in frames:
        if f.attrs.get("shape") != "health" or f.attrs.get("range") != first.get("range"):
            raise InputError("merge takes the flags of the shards of one run (one range)")
    if None in shards or len(counts) != 1:
        raise InputError(f"merge takes shards of one split (i/n), got {shards}")
    total = int(next(iter(counts)))
    got = sorted(int(str(s).split("/")[0]) for s in shards)
    if got != list(range(1, total + 1)):
        raise InputError(
            f"merge needs shards 1 to {total} once each, got {', '.join(map(str, got))}"
        )
    rows = (
        pd.concat([f for f in frames if len(f)], ignore_index=True)
        if any(len(f) for f in frames)
        else empty_flags()
    )
    if len(rows):
        keys = [_order(tuple(r)) for r in rows.itertuples(index=False)]
        rows = rows.iloc[sorted(range(len(rows)), key=keys.__getitem__)].reset_index(drop=True)
    attrs = {k: v for k, v in first.items() if k not in _LISTS}
    for key in _LISTS:
        joined = [item for f in frames for item in f.attrs.get(key, [])]
        if key not in ("reports", "maintenance"):
            joined.sort(key=lambda d: (str(d.get("start", d.get("from", ""))), str(d)))
        attrs[key] = joined
    attrs["maintenance"] = list({str(w): w for w in attrs["maintenance"]}.values())
    attrs["subjects"] = sum(int(f.attrs.get("subjects", 0)) for f in frames)
    attrs["sites"] = sorted({s for f in frames for s in f.attrs.get("sites", [])})
    attrs["bases"] = {k: v for f in frames for k, v in f.attrs.get("bases", {}).items()}
    attrs["shard"] = f"merged {total}"
    rows.attrs = {"shape": "health"}
    rows.attrs.update(attrs)
    return rows
