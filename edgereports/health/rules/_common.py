"""What the rules share: the dark runs of a group of devices, and how evidence names history."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..context import Flag, Site
from ..detect import GAP_SCORE, REST_SCORE, Baseline, chance, class_baseline, gaps

__all__ = ["dark_flags", "device_baseline", "learnt", "unexplained_score"]

I64 = npt.NDArray[np.int64]
B1 = npt.NDArray[np.bool_]


def learnt(site: Site, row: int | None = None) -> str:
    """The history a subject was judged against: its judged hours before the range (of one
    device, or of any device of the site)."""
    grid = site.grid
    judged = site.judged[:, : grid.i0].any(axis=0) if row is None else site.judged[row, : grid.i0]
    first = int(np.argmax(judged)) if judged.any() else grid.i0
    return grid.learnt(first)


def device_baseline(site: Site, i: int) -> Baseline:
    """Device ``i``'s chance of being offline per class, from its judged history (once)."""
    key = ("offline", i)
    if key not in site.memo:
        history = site.judged[i].copy()
        history[site.grid.i0 :] = False
        site.memo[key] = class_baseline(~site.online[i], site.grid.cls, history)
    found: Baseline = site.memo[key]
    return found


def _score_of(site: Site, members: I64, open_hours: B1, explained: B1, a: int, b: int) -> float:
    """The score of ``[a, b)`` by the history of these devices alone (those active in the run:
    a device that left, or came, since does not make the group's history say otherwise)."""
    grid = site.grid
    judged_m = site.judged[members]
    lit = np.asarray((site.online[members] & judged_m).any(axis=0), dtype=bool)
    judged = open_hours & (judged_m.sum(axis=0) >= min(2, len(members)))
    history = judged.copy()
    history[grid.i0 :] = False
    base = class_baseline(~lit, grid.cls, history)
    return base.score(grid.cls[a:b][~explained[a:b] & judged[a:b]], exact=True)


def _rest(
    site: Site, members: I64, open_hours: B1, explained: B1, span: tuple[int, int], report: bool
) -> float | None:
    """With the group's most unusual device over ``[a, b)`` left out (the one whose own
    silence scores most by its own history), the score of the rest's silence by the rest's
    own history: the site's report less that device (``report``), or the other devices. None
    when no device of the group is judged in the run."""
    a, b = span
    grid = site.grid
    cls = grid.cls[a:b]
    mine = []
    for j in members.tolist():
        hours = site.judged[j, a:b] & ~explained[a:b]
        if hours.any():
            mine.append((device_baseline(site, j).score(cls[hours], exact=True), j))
    if not mine:
        return None
    top = max(mine)[1]
    others = members[members != top]
    if report:
        lit = (site.report - site.seconds[top]) > 0.5
        judged = open_hours
    else:
        lit = np.asarray((site.online[others] & site.judged[others]).any(axis=0), dtype=bool)
        judged = open_hours & site.judged[others].any(axis=0)
    history = judged.copy()
    history[grid.i0 :] = False
    base = class_baseline(~lit, grid.cls, history)
    hours = judged[a:b] & ~explained[a:b] & ~lit[a:b]
    return base.score(cls[hours], exact=True)


def unexplained_score(base: Baseline, cls: I64, explained: B1, a: int, b: int) -> float:
    """A run's score over its hours that no dark site or eNodeB explains."""
    return base.score(cls[a:b][~explained[a:b]])


def dark_flags(
    site: Site, kind: str, subject: str, members: I64, open_hours: B1, enodeb: str | None
) -> list[Flag]:
    """Runs in which a group of devices (a site, an eNodeB) had no time online, judged from
    its own report (a site, when pulled) or from its judged devices (at least two).

    Every flag names its basis: the site's own report; every active device of a complete
    inventory (``high``); or ``k`` of the ``n`` devices a partial inventory knows there
    (``medium``: others may have been online). A run is a common outage only when no single
    known device explains it: with its most unusual device left out, the rest's silence (the
    report less that device, or the other devices) still scores :data:`REST_SCORE` by the
    rest's own history. The hours flagged are marked as explained for the group's devices.
    """
    grid = site.grid
    judged_m = site.judged[members]
    count = judged_m.sum(axis=0)
    what = "site" if enodeb is None else "eNodeB"
    if site.report is not None and enodeb is None:
        lit = site.report > 0
        judged = open_hours.copy()
        basis = "the site's own report"
    else:
        lit = np.asarray((site.online[members] & judged_m).any(axis=0), dtype=bool)
        judged = open_hours & (count >= 2)
        basis = "devices"
    explained = np.asarray((site.explained[members] | ~judged_m).all(axis=0), dtype=bool)
    found, base = gaps(~lit, judged, grid.cls, grid.i0)
    flags = []
    for run in found:
        a, b = run.a, run.b
        score = unexplained_score(base, grid.cls, explained, a, b)
        present = members[judged_m[:, a:b].any(axis=1)]
        if basis == "devices" and len(present) < len(members):  # judge the devices there
            score = min(score, _score_of(site, present, open_hours, explained, a, b))
        if score < GAP_SCORE:
            continue
        others = _rest(site, present, open_hours, explained, (a, b), basis != "devices")
        if others is not None and others < REST_SCORE:
            continue  # one device out, the others as usual: no common outage shown
        during = judged_m[:, a:b].any(axis=1)
        devices = tuple(int(m) for m in members[during])
        k = len(devices)
        dark, seen = base.seen(grid.cls[a:b])
        history = (f"the {what} was dark in {dark} of {seen} hours at these hours of day over "
                   f"{learnt(site)}; {chance(score)}")  # fmt: skip
        if others is not None:
            rest = int(min(others, 99))
            history += (f"; with its most unusual device left out, the rest's silence has a "
                        f"chance by its own history of about 1e-{rest}")  # fmt: skip
        if basis != "devices":
            head = f"no time online at any device of the site for {b - a} h ({basis}"
            head += f"; {k} known active devices there)" if not site.complete else ")"
            severity = "high"
        elif site.complete:
            head = f"all {k} active devices offline for {b - a} h"
            severity = "high"
        else:
            head = (f"all {k} known active devices offline for {b - a} h (judged from {k} of "
                    f"{len(members)} known devices: the inventory is partial)")  # fmt: skip
            severity = "medium"
        flags.append(Flag(kind, subject, a, b, severity, f"{head}; {history}", devices,
                          gap=True, enodeb=enodeb))  # fmt: skip
        site.explained[np.asarray(devices, dtype=np.int64), a:b] = True
    return flags
