"""What every rule sees: one customer site's devices, hours and knowledge (:class:`Site`), and
the flags rules return (:class:`Flag`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .grid import Grid

__all__ = ["Flag", "Site"]

B1 = npt.NDArray[np.bool_]
B2 = npt.NDArray[np.bool_]
F2 = npt.NDArray[np.float32]


@dataclass
class Flag:
    """One flag, with its hours as indexes of the grid.

    Attributes:
        kind: the kind (a rule's).
        subject: a site id, an eNodeB's IP address or an MSISDN.
        a: the first hour.
        b: the hour after the last one.
        severity: ``high``, ``medium`` or ``low``.
        evidence: one line of numbers.
        devices: the positions (in the site) of the devices it concerns; for a dark site or
            eNodeB, those that were active.
        gap: whether it is an outage (it joins episodes).
        enodeb: the eNodeB it concerns, if one.
        episode: the episode it belongs to (set when episodes are built).
    """

    kind: str
    subject: str
    a: int
    b: int
    severity: str
    evidence: str
    devices: tuple[int, ...] = ()
    gap: bool = False
    enodeb: str | None = None
    episode: str | None = None


@dataclass
class Site:
    """One customer site: its devices' hourly arrays and what is known about each hour.

    Attributes:
        grid: the hours.
        site: the customer site id (None: devices whose site is unknown).
        msisdns: its subscribers.
        enodebs: each subscriber's eNodeB (None: unknown).
        devices: each subscriber's device id (several SIMs may share one device).
        seconds: seconds online, ``(subscribers, hours)``.
        octets: bytes, ``(subscribers, hours)``.
        active: per subscriber and hour, whether its SIM is known to be active.
        judged: ``active`` outside maintenance windows (the hours a device is judged on).
        history_ok: per subscriber, whether it has enough history to be judged on its own.
        end_known: per subscriber, whether a silence to the end can be an outage.
        since: per subscriber, how its life is known.
        complete: whether the inventory lists every device of the account.
        report: the site's own hourly time online, when pulled (partial inventories).
        site_open: per hour, whether no maintenance window covers the site itself.
        enodeb_open: per eNodeB, per hour, whether no window covers the eNodeB itself.
        explained: per subscriber and hour, whether a dark site or eNodeB explains it
            (the group rules set it; the device rules leave those hours to them).
        memo: what one rule computed that another reads (e.g. a device's rate scores).
    """

    grid: Grid
    site: str | None
    msisdns: tuple[str, ...]
    enodebs: tuple[str | None, ...]
    devices: tuple[str, ...]
    seconds: F2
    octets: F2
    active: B2
    judged: B2
    history_ok: B1
    end_known: B1
    since: tuple[str, ...]
    complete: bool
    report: npt.NDArray[np.float64] | None
    site_open: B1
    enodeb_open: dict[str, B1]
    explained: B2 = field(init=False)
    memo: dict[tuple[str, int], Any] = field(init=False)

    def __post_init__(self) -> None:
        self.explained = np.zeros_like(self.judged)
        self.memo = {}

    @property
    def online(self) -> B2:
        """Per subscriber and hour: any time online."""
        out: B2 = self.seconds > 0
        return out

    def members(self, enodeb: str | None = None) -> npt.NDArray[np.int64]:
        """The positions of the site's subscribers (of one eNodeB, when given)."""
        if enodeb is None:
            return np.arange(len(self.msisdns))
        return np.flatnonzero(np.array([e == enodeb for e in self.enodebs], dtype=bool))
