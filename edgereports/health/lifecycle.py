"""Which hours of each SIM's life are known: from the inventory, else from the service's evidence.

A SIM outside its active life is never judged. Its life comes from the inventory (activation and
deactivation dates). Where the inventory does not give it (``msisdn=``), the life starts at the
device's first hour online in the pulled data, and a silence to the end of the data counts as a
deactivation when the account's SIM counts fell by more than what is known explains, on a day
at most two days after the silence began; the deactivations found are listed with their basis,
never flagged. A silence to the end that the SIM counts do not explain stays a possible outage
(``end_known`` False): a deactivation the inventory does not record would look the same.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from ..inventory.model import Inventory
from .grid import Grid

__all__ = ["MIN_HISTORY_HOURS", "Lives", "lives_of"]

#: The least history (active hours before the range) a subject is judged from: a week.
MIN_HISTORY_HOURS = 7 * 24
#: A silence may begin up to this many days before the day the SIM count falls.
_LEAD_DAYS = 2
B1 = npt.NDArray[np.bool_]
B2 = npt.NDArray[np.bool_]


@dataclass
class Lives:
    """The known active hours of each subscriber, and what was found about their lives.

    Attributes:
        active: per subscriber and hour, whether its SIM is known to be active then.
        end_known: per subscriber, whether a silence to the end of the data can be judged as
            an outage (its SIM is known to be active to the end).
        since: per subscriber, how its life is known (for evidence), e.g. ``"inventory"``.
        deactivated: the SIMs found deactivated in the hours pulled: ``msisdn``, ``from``
            (UTC ISO 8601) and ``basis``.
        unjudged: the subscribers not judged: ``msisdn`` and ``why``.
    """

    active: B2
    end_known: npt.NDArray[np.bool_]
    since: list[str]
    deactivated: list[dict[str, str]] = field(default_factory=list)
    unjudged: list[dict[str, str]] = field(default_factory=list)


def _days(grid: Grid) -> list[str]:
    return sorted({h.strftime("%Y-%m-%d") for h in grid.hours})


def lives_of(
    inventory: Inventory,
    seconds: npt.NDArray[np.float32],
    answered: npt.NDArray[np.bool_],
    grid: Grid,
    counts: Mapping[str, int],
    *,
    everyone: Inventory | None = None,
) -> Lives:
    """The lives of the inventory's subscribers (rows in its order) on the grid.

    Args:
        inventory: the subscribers judged (a shard's, perhaps).
        seconds: their seconds online per hour, as pulled.
        answered: whether the service sent rows for each.
        grid: the hours.
        counts: the account's active SIMs per UTC day (``YYYY-MM-DD``).
        everyone: the whole inventory, whose lives explain the SIM counts (default: the same).
    """
    n, h = seconds.shape
    online = seconds > 0
    anywhere: B1 = np.asarray(online.any(axis=1), dtype=bool)
    first_on = np.where(anywhere, online.argmax(axis=1), h)
    last_on = np.where(anywhere, h - 1 - online[:, ::-1].argmax(axis=1), -1)
    known = inventory.lifecycle_known
    if known:
        active = inventory.active_mask(grid.hours)
        since = ["inventory"] * n
    else:
        active = np.arange(h)[None, :] >= first_on[:, None]
        since = ["its first hour online (the inventory does not say)"] * n
    lives = Lives(active, np.full(n, known), since)
    silent = np.flatnonzero(anywhere & (last_on < h - 1) & active[:, -1]) if h else first_on[:0]
    _deactivations(lives, inventory, everyone or inventory, silent, last_on, first_on, grid, counts)
    _unjudged(lives, inventory, answered, anywhere, grid)
    return lives


def _known_changes(whole: Inventory, days: list[str]) -> dict[str, int]:
    """Per day, the change of active SIMs that the whole inventory's known lives explain."""
    import pandas as pd

    if not whole.lifecycle_known:
        return {}
    frame = whole.to_frame()
    out = dict.fromkeys(days, 0)
    for column, sign in (("activation", 1), ("deactivation", -1)):
        for when in frame[column].dropna():
            day = pd.Timestamp(when).strftime("%Y-%m-%d")
            if day in out:
                out[day] += sign
    return out


def _deactivations(
    lives: Lives,
    inventory: Inventory,
    whole: Inventory,
    silent: npt.NDArray[np.int64],
    last_on: npt.NDArray[np.int64],
    first_on: npt.NDArray[np.int64],
    grid: Grid,
    counts: Mapping[str, int],
) -> None:
    """Silences to the end of the data that the SIM counts explain become deactivations."""
    days = _days(grid)
    known = _known_changes(whole, days)
    if not whole.lifecycle_known:  # the activations seen in the data are known changes too
        begun = first_on[(first_on > 24) & (first_on < len(grid))]
        for i in begun.tolist():
            day = grid.day(int(i))
            known[day] = known.get(day, 0) + 1
    unexplained: dict[str, int] = {}
    for before, day in itertools.pairwise(days):
        if before in counts and day in counts:
            fell = known.get(day, 0) - (counts[day] - counts[before])
            if fell > 0:
                unexplained[day] = fell
    numbers = inventory.msisdns
    order = sorted(silent.tolist(), key=lambda i: -int(last_on[i]))  # the latest silences first
    for i in order:
        began = grid.hours[int(last_on[i]) + 1]
        near = [
            d
            for d in sorted(unexplained)
            if unexplained[d] > 0
            and began.strftime("%Y-%m-%d") <= d
            and began >= _midnight(d) - timedelta(days=_LEAD_DAYS)
        ]
        if not near:
            continue
        day = near[0]
        unexplained[day] -= 1
        lives.active[i, int(last_on[i]) + 1 :] = False
        lives.end_known[i] = True
        lives.deactivated.append(
            {
                "msisdn": numbers[i],
                "from": began.isoformat(),
                "basis": f"silent to the end of the data from then, and the account's SIM count "
                f"fell on {day} by more than the known lives explain",
            }
        )
    if not inventory.lifecycle_known:
        return
    for i in range(len(numbers)):  # deactivations the inventory records, inside the hours
        ends = np.flatnonzero(lives.active[i, :-1] & ~lives.active[i, 1:])
        if len(ends) and numbers[i] not in {d["msisdn"] for d in lives.deactivated}:
            lives.deactivated.append(
                {
                    "msisdn": numbers[i],
                    "from": grid.hours[int(ends[-1]) + 1].isoformat(),
                    "basis": "the inventory's deactivation date",
                }
            )


def _midnight(day: str) -> Any:
    import pandas as pd

    return pd.Timestamp(day, tz="UTC")


def _unjudged(
    lives: Lives,
    inventory: Inventory,
    answered: npt.NDArray[np.bool_],
    anywhere: npt.NDArray[np.bool_],
    grid: Grid,
) -> None:
    """The subscribers without enough known history, and why (their hours stay unjudged)."""
    history = lives.active[:, : grid.i0].sum(axis=1)
    judged_any = np.asarray(lives.active[:, grid.i0 :].any(axis=1), dtype=bool)
    for i, number in enumerate(inventory.msisdns):
        if not answered[i]:
            why = "the service sent no row for it (not a subscriber of this account?)"
        elif not anywhere[i] and not inventory.lifecycle_known:
            why = "no time online in the hours pulled, and the inventory does not give its life"
        elif not judged_any[i]:
            continue  # not active in the range: nothing to judge, nothing to say
        elif history[i] < MIN_HISTORY_HOURS:
            began = grid.hours[int(np.argmax(lives.active[i]))].strftime("%Y-%m-%d")
            why = (
                f"active since {began} ({lives.since[i]}): {history[i] // 24} days of history "
                f"before the range, {MIN_HISTORY_HOURS // 24} needed"
            )
        else:
            continue
        lives.unjudged.append({"msisdn": number, "why": why})
