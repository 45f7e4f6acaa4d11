"""The flags frame: the detectors run over every subscriber and site, one row per flag."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..query.timegrid import BUCKETS, floor
from .detect import GAP_SCORE, class_baseline, gaps, idle_runs, shifts
from .kinds import KINDS
from .series import hourly

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Flag", "build_flags", "empty_flags"]

_DAY = BUCKETS["DAY"]
_PROVENANCE = ("request", "shape", "source", "dropped_after_end", "cache", "empty", "failures")


@dataclass(frozen=True)
class Flag:
    """One flag, with its hours as indexes of the grid."""

    kind: str
    subject: str
    a: int
    b: int
    severity: str
    evidence: str


def _chance(score: float) -> str:
    return f"chance by its own history about 1e-{int(score)}" if score < 99 else "chance ~0"


def _sim_drops(sims: pd.DataFrame) -> list[Any]:
    """The days (UTC midnights) on which the account's active SIMs fell."""
    import pandas as pd

    if not len(sims):
        return []
    both = sims.assign(total=sims["physical"].astype("float") + sims["esim"].astype("float"))
    daily = both.groupby("date")["total"].sum().sort_index()
    fell = daily.diff() < 0
    return [pd.Timestamp(d).tz_localize("UTC") for d in daily.index[fell.to_numpy()]]


def build_flags(
    frame: pd.DataFrame,
    sims: pd.DataFrame,
    msisdns: Sequence[str],
    first: datetime,
    start: datetime,
    stop: datetime,
    end: datetime,
    zone: tzinfo,
) -> pd.DataFrame:
    """Run the detectors over the pulled hourly report (:func:`~.series.health_report`) of
    ``msisdns`` and the account's active SIMs per day; return the flags frame.

    The history starts at ``first``; the hours judged are ``[start, stop)``, ``stop`` being the
    asked ``end`` or the service's present; hour classes are local to ``zone``.
    """
    data = hourly(frame, msisdns, first, max(stop, first), zone)
    grid = data.hours
    i0 = int(grid.searchsorted(floor(start, BUCKETS["HOUR"]), side="left"))
    i0 = min(max(i0, 0), len(grid))
    days = round(i0 / 24)
    cls = data.cls
    online = data.seconds > 0
    traffic = data.bytes > 0
    found: list[Flag] = []
    dark: dict[str, list[tuple[int, int]]] = {}
    by_site: dict[str, list[int]] = {}
    for i, site in enumerate(data.sites):
        if site is not None:
            by_site.setdefault(site, []).append(i)
    for site, members in sorted(by_site.items()):
        lit: npt.NDArray[np.bool_] = np.asarray(online[members].any(axis=0), dtype=bool)
        site_gaps, base = gaps(lit, cls, i0)
        for g in site_gaps:
            dark_hours, seen = base.seen(cls[g.a : g.b])
            found.append(Flag("site_dark", site, g.a, g.b, "high",
                              f"all {len(members)} devices offline for {g.b - g.a} h; the site "
                              f"was dark in {dark_hours} of {seen} hours at these hours of day "
                              f"over its last {days} days; {_chance(g.score)}"))  # fmt: skip
            dark.setdefault(site, []).append((g.a, g.b))
    drops = _sim_drops(sims)
    deactivated: list[dict[str, str]] = []
    history_mask = np.zeros(len(grid), dtype=bool)
    history_mask[:i0] = True
    for i, number in enumerate(data.msisdns):
        site = data.sites[i]
        dev_gaps, base = gaps(online[i], cls, i0)
        cost = -np.log10(base.per_class[cls])
        for g in dev_gaps:
            inside = np.zeros(len(grid), dtype=bool)
            for a, b in dark.get(site or "", []):
                inside[a:b] = True
            rest = float(cost[g.a : g.b][~inside[g.a : g.b]].sum())
            if inside[g.a : g.b].any() and rest < GAP_SCORE:
                continue  # the site went dark: its flag says it
            began = grid[g.a]
            if g.b == len(grid) and any(
                began - _DAY <= day <= began + 2 * _DAY for day in drops
            ):  # silent to the end from (up to two days before) the SIM count fell
                deactivated.append({"msisdn": number, "silent_from": began.isoformat()})
                continue
            off, seen = base.seen(cls[g.a : g.b])
            hours = g.b - g.a
            found.append(Flag("device_offline", number, g.a, g.b,
                              "high" if hours >= 24 else "medium",
                              f"no time online for {hours} h; online in {seen - off} of {seen} "
                              f"hours at these hours of day over its last {days} days; "
                              f"{_chance(g.score)}"))  # fmt: skip
        for g in idle_runs(online[i], traffic[i], cls, i0)[0]:
            idle = int((online[i, g.a : g.b] & ~traffic[i, g.a : g.b]).sum())
            quiet = class_baseline(~traffic[i], cls, history_mask & online[i])
            silent, online_hours = int(quiet.hits.sum()), int(quiet.counts.sum())
            found.append(Flag("sim_idle", number, g.a, g.b, "low",
                              f"no bytes for {g.b - g.a} h though online in {idle} of those "
                              f"hours; {silent} of its {online_hours} online hours over its last "
                              f"{days} days passed no byte"))  # fmt: skip
        sampled = (data.seconds[i] >= 60) & traffic[i]
        rate = np.where(sampled, data.bytes[i] / np.maximum(data.seconds[i], 1.0), 0.0)
        for s in shifts(rate, sampled, cls, i0):
            hours = s.b - s.a
            if s.direction < 0:
                kind, severity = "usage_drop", "high" if hours >= 48 else "medium"
            else:
                kind, severity = "usage_spike", "high" if s.ratio >= 10 else "medium"
            found.append(Flag(kind, number, s.a, s.b, severity,
                              f"{s.ratio:.2g}x its usual bytes per second online over "
                              f"{s.samples} online hours in {hours} h (median against the "
                              f"same hours of its last {days} days)"))  # fmt: skip
    out = _frame(found, data.hours, start, end, stop, first, msisdns, sorted(by_site), frame)
    out.attrs["deactivated"] = deactivated
    out.attrs["reports"].append(_provenance(sims, 1))
    return out


def _provenance(pulled: pd.DataFrame, requests: int) -> dict[str, Any]:
    out: dict[str, Any] = {k: pulled.attrs[k] for k in _PROVENANCE if k in pulled.attrs}
    out["rows"] = len(pulled)
    out["requests"] = requests
    return out


def empty_flags() -> pd.DataFrame:
    """A flags frame without rows (the full schema)."""
    import pandas as pd

    return pd.DataFrame(
        {
            "kind": pd.Series([], dtype="string"),
            "subject": pd.Series([], dtype="string"),
            "start": pd.Series([], dtype="datetime64[us, UTC]"),
            "end": pd.Series([], dtype="datetime64[us, UTC]"),
            "severity": pd.Series([], dtype="string"),
            "evidence": pd.Series([], dtype="string"),
        }
    )


def _frame(
    found: list[Flag],
    hours: pd.DatetimeIndex,
    start: datetime,
    end: datetime,
    stop: datetime,
    first: datetime,
    msisdns: Sequence[str],
    sites: list[str],
    pulled: pd.DataFrame,
) -> pd.DataFrame:
    import pandas as pd

    step = pd.Timedelta(BUCKETS["HOUR"])
    edge = hours[0] if len(hours) else pd.Timestamp(first)
    order = {k: n for n, k in enumerate(KINDS)}
    found = sorted(found, key=lambda f: (f.a, order[f.kind], f.subject, f.b))
    out = empty_flags()
    if found:
        rows = [
            (f.kind, f.subject, edge + f.a * step, edge + f.b * step, f.severity, f.evidence)
            for f in found
        ]
        out = pd.DataFrame(rows, columns=out.columns).astype(out.dtypes.to_dict())
    out.attrs = {
        "shape": "health",
        "range": [start.isoformat(), end.isoformat()],
        "history_start": first.isoformat(),
        "judged_until": stop.isoformat(),
        "subjects": len(msisdns),
        "sites": sites,
        "reports": [_provenance(pulled, len(msisdns))],
    }
    return out
