"""Each subject's hours as states: available, unavailable, maintenance, inactive or unknown.

The rule (docs: "Availability"), per whole UTC hour judged:

- a **device** is *inactive* outside its SIM's active life, in *maintenance* when a window
  covers it (its own, its eNodeB's or its site's), *available* when it had time online,
  *unavailable* when an outage health finds covers it (``device_offline`` of the device, or
  ``enodeb_dark``/``site_dark`` of its eNodeB or site: a silence its own history makes
  unlikely), and *unknown* otherwise (silent, but idle and down look alike; or no data);
- a **site** or an **eNodeB** is *inactive* while none of its devices is active, in
  *maintenance* when a window covers it or every active device of it, *available* when any of
  its active devices had time online, *unavailable* when none did and every active device there
  outside maintenance is in an outage, and *unknown* otherwise.

With a partial list (``msisdn=``) a site is judged from its own report (lit or dark, every
device there counted), and an eNodeB's dark hour is unavailable only when its site's own report
is dark in an outage; neither is ever inactive (the devices not listed may be active).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..health.run import Assessed

__all__ = ["OUTAGE_KINDS", "RULE", "STATES", "Hours", "hours_of"]

#: The states of an hour, in the order of their codes.
STATES = ("available", "unavailable", "maintenance", "inactive", "unknown")
AVAILABLE, UNAVAILABLE, MAINTENANCE, INACTIVE, UNKNOWN = range(len(STATES))
#: The health flags whose hours are outages.
OUTAGE_KINDS = ("site_dark", "enodeb_dark", "device_offline")
#: The rule in one paragraph (``df.attrs["rule"]``; docs: "Availability").
RULE = (
    "Whole UTC hours. An hour of a subject outside its SIMs' active lives is inactive, one a "
    "maintenance window covers (or covers every active device there) is maintenance: both are "
    "excluded. Otherwise it is available when the service shows time online (a site or eNodeB: "
    "on any of its active devices), unavailable when it shows none and every active device "
    "there is in an outage health finds (site_dark, enodeb_dark or device_offline: a silence "
    "its own history makes unlikely), and unknown otherwise (idle and down look alike). "
    "availability_pct = 100 * available / (available + unavailable)."
)

B1 = npt.NDArray[np.bool_]
B2 = npt.NDArray[np.bool_]
I8 = npt.NDArray[np.int8]


@dataclass
class Hours:
    """The states of each subject's judged hours.

    Attributes:
        subjects: the subjects (sites, eNodeBs or MSISDNs), sorted.
        places: per subject, its ``customer_site_id`` and ``enodeb_ip`` (None: unknown or
            several).
        codes: per subject and judged hour, the index of its state in :data:`STATES`.
        basis: per subject, what it is judged from (one line).
        outages: the outage flags whose hours count as unavailable.
    """

    subjects: list[str]
    places: list[tuple[str | None, str | None]]
    codes: I8
    basis: list[str]
    outages: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Devices:
    """Per device (the judged inventory's rows) and judged hour: what the rule reads."""

    active: B2
    maintenance: B2
    online: B2
    out: B2
    codes: I8


def _outages(done: Assessed) -> tuple[B2, dict[str, B1], list[dict[str, Any]]]:
    """Per device and hour of the grid, whether an outage flag covers it; per site, the hours
    of its own ``site_dark`` flags; and the flags taken (with their hours in UTC)."""
    grid, placed = done.grid, done.placed
    row = {m: i for i, m in enumerate(placed.msisdns)}
    out = np.zeros((len(placed), len(grid)), dtype=bool)
    sites: dict[str, B1] = {}
    taken = []
    step = grid.hours[1] - grid.hours[0] if len(grid) > 1 else None
    for flag, site in done.judged.flags:
        if flag.kind not in OUTAGE_KINDS or flag.b <= grid.i0:
            continue
        to_end = flag.kind == "device_offline" and flag.b == len(grid)
        if to_end and not site.end_known[flag.devices[0]]:
            continue  # silent to the end of an unknown life: a deactivation looks the same
        rows = [row[site.msisdns[p]] for p in flag.devices]
        out[rows, flag.a : flag.b] = True
        if flag.kind == "site_dark":
            sites.setdefault(flag.subject, np.zeros(len(grid), dtype=bool))[flag.a : flag.b] = True
        end = grid.hours[flag.b - 1] + step if step is not None else grid.stop
        taken.append({"kind": flag.kind, "subject": flag.subject,
                      "start": grid.hours[flag.a].isoformat(), "end": end.isoformat(),
                      "evidence": flag.evidence})  # fmt: skip
    taken.sort(key=lambda f: (f["start"], OUTAGE_KINDS.index(f["kind"]), f["subject"]))
    return out, sites, taken


def _devices(done: Assessed, out: B2) -> _Devices:
    """The devices' states over the judged hours."""
    grid, placed, lives, pulled = done.grid, done.placed, done.lives, done.pulled
    i0 = grid.i0
    active = lives.active[:, i0:]
    seconds = pulled.seconds
    online = seconds[:, i0:] > 0
    if placed.lifecycle_known:
        inactive = ~active
    else:  # a life learnt from the data: before its first hour online nothing is known
        seen = seconds > 0
        first_on = np.where(seen.any(axis=1), seen.argmax(axis=1), len(grid))
        inactive = ~active & (np.arange(i0, len(grid))[None, :] >= first_on[:, None])
    maintenance = placed.maintenance_mask(grid.hours)[:, i0:]
    out_j = out[:, i0:]
    codes = np.full(active.shape, UNKNOWN, dtype=np.int8)
    codes[out_j] = UNAVAILABLE
    codes[online] = AVAILABLE
    codes[~pulled.answered] = UNKNOWN  # the service sent nothing for it: no data
    codes[maintenance] = MAINTENANCE
    codes[inactive] = INACTIVE
    return _Devices(active, maintenance, online, out_j, codes)


def _group(dev: _Devices, rows: npt.NDArray[np.int64], covered: B1) -> I8:
    """The states of a site or eNodeB judged from all its devices (a complete inventory):
    ``covered`` marks the hours a window on the group itself covers."""
    active = dev.active[rows]
    free = active & ~dev.maintenance[rows]  # active, outside maintenance
    anyone = active.any(axis=0)
    judged = free.any(axis=0)
    lit = (dev.online[rows] & active).any(axis=0)
    all_out = judged & ~(free & ~dev.out[rows]).any(axis=0)
    codes = np.full(active.shape[1], UNKNOWN, dtype=np.int8)
    codes[all_out] = UNAVAILABLE
    codes[lit] = AVAILABLE
    codes[covered | (anyone & ~judged)] = MAINTENANCE
    codes[~anyone] = INACTIVE
    return codes


def _partial_group(dev: _Devices, rows: npt.NDArray[np.int64], lit: B1 | None, dark: B1) -> I8:
    """The states of a site or eNodeB of a partial list: lit by its own report (``lit``) or
    by a known device, unavailable where its site's own report shows an outage (``dark``);
    never inactive (the devices not listed may be active)."""
    shown = (dev.online[rows] & dev.active[rows]).any(axis=0)
    if lit is not None:
        shown = lit
    codes = np.full(dev.codes.shape[1], UNKNOWN, dtype=np.int8)
    codes[dark & ~shown] = UNAVAILABLE
    codes[shown] = AVAILABLE
    return codes


def _window(done: Assessed, scope: str, subject: str | None) -> B1:
    """Per judged hour, whether a window on ``subject`` itself covers it."""
    grid = done.grid
    if subject is None:
        return np.zeros(len(grid) - grid.i0, dtype=bool)
    covered: B1 = done.placed.scope_maintenance(scope, subject, grid.hours)[grid.i0 :]
    return covered


def hours_of(done: Assessed, by: str) -> Hours:
    """The states of the hours judged in ``done``, per site (``customer_site_id``), eNodeB
    (``enodeb``) or subscriber (``msisdn``)."""
    out, site_out, taken = _outages(done)
    dev = _devices(done, out)
    placed, grid = done.placed, done.grid
    complete = placed.complete
    numbers = placed.msisdns
    if by == "msisdn":
        order = sorted(range(len(numbers)), key=lambda i: numbers[i])
        life = "" if placed.lifecycle_known else (
            "; its life from its first hour online (the inventory does not say)"
        )  # fmt: skip
        return Hours(
            [numbers[i] for i in order],
            [(placed.site_of(numbers[i]), placed.enodeb_of(numbers[i])) for i in order],
            dev.codes[order],
            [f"its own hours{life}"] * len(order),
            taken,
        )
    index = {m: i for i, m in enumerate(numbers)}
    subjects, places, codes, basis = [], [], [], []
    h = len(grid) - grid.i0
    none = np.zeros(h, dtype=bool)
    groups = placed.sites if by == "customer_site_id" else placed.enodebs
    for g in groups:
        members = placed.members(site=g) if by == "customer_site_id" else placed.members(enodeb=g)
        rows = np.array([index[m] for m in members], dtype=np.int64)
        site = g if by == "customer_site_id" else _site_of(placed, members)
        covered = _window(done, "site", site)
        if by == "enodeb":
            covered = covered | _window(done, "enodeb", g)
        k = len(rows)
        if complete:
            state = _group(dev, rows, covered)
            what = f"all its active devices ({k} in the inventory)"
        else:
            report = done.reports.get(site) if site is not None else None
            dark, lit = none, None
            if report is not None and site is not None:  # its site's own report counts all
                dark = site_out.get(site, np.zeros(len(grid), dtype=bool))[grid.i0 :]
            if by == "customer_site_id" and report is not None:
                lit = report[grid.i0 :] > 0
                what = f"its own report ({k} known devices: the inventory is partial)"
            elif by == "customer_site_id":
                what = f"its {k} known devices (the inventory is partial): dark hours unknown"
            else:
                what = (f"its {k} known devices (the inventory is partial): dark only when its "
                        "site's own report is")  # fmt: skip
            state = _partial_group(dev, rows, lit, dark)
            state[covered] = MAINTENANCE
        subjects.append(g)
        places.append((site, g if by == "enodeb" else None))
        codes.append(state)
        basis.append(what)
    stacked = np.vstack(codes) if codes else np.zeros((0, h), dtype=np.int8)
    return Hours(subjects, places, stacked.astype(np.int8), basis, taken)


def _site_of(placed: Any, members: tuple[str, ...]) -> str | None:
    """The site of an eNodeB's devices (None when they name none, or several)."""
    found = {placed.site_of(m) for m in members}
    return found.pop() if len(found) == 1 else None
