"""The seeded synthetic network: accounts, customer sites, eNodeBs, SIMs and devices (UEs).

``build_network(seed, devices)`` returns the same :class:`Network` for the same arguments;
docs/sandbox.md ("The network") describes it. Every device carries one SIM (a subscriber, a SIM
and a UE are the same thing here) and belongs to one eNodeB of one customer site; seed 0 gives
the documented ``62c40843c7a1909709112345`` as the primary account. A SIM is active on day D
when ``activation_date <= D < deactivation_date``; its device has traffic only then. Each
device has a usage profile (``activity.py``), a latency level (``quality.py``) and a quality key
of its own, so that quality changes no other number.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from .hashing import GOLDEN, fmix64, key_of
from .incidents import LIFECYCLE, Effect, Incident, effects_of, parse_incidents
from .quality import level_of

__all__ = ["Account", "Device", "ENodeB", "Network", "Sim", "Site", "build_network"]

DOCUMENTED_ACCOUNT_ID = "62c40843c7a1909709112345"
MAX_DEVICES = 100_000
_EPOCH = date(1970, 1, 1)
_CITIES = ("BLR", "MUM", "DEL", "HYD", "CHE", "PUN", "KOL", "AMD")
# name, share, online thresholds /4096 for (weekday 08-20 local, night, weekend 08-20 local),
# full-hour sessions, mean uplink and downlink bytes per second (low, high)
_PROFILES: tuple[
    tuple[str, float, tuple[int, int, int], bool, tuple[int, int], tuple[int, int]], ...
] = (
    ("handset", 0.45, (2700, 450, 1500), False, (300, 1500), (3000, 15000)),
    ("camera", 0.20, (3950, 3950, 3950), True, (12000, 30000), (500, 1500)),
    ("sensor", 0.20, (1800, 1800, 1800), False, (20, 200), (10, 60)),
    ("gateway", 0.15, (3600, 2400, 3000), True, (2000, 6000), (4000, 12000)),
)
_FAR_FUTURE_DAY = 10**6
_NONE = np.zeros(0, dtype=np.int64)
_NONE.setflags(write=False)


@dataclass(frozen=True)
class Account:
    """An enterprise account."""

    account_id: str
    name: str
    primary: bool


@dataclass(frozen=True)
class Site:
    """A customer site of an account."""

    customer_site_id: str
    account_id: str
    name: str
    city: str


@dataclass(frozen=True)
class ENodeB:
    """A radio base station at a customer site."""

    enodeb_ip: str
    customer_site_id: str
    account_id: str


@dataclass(frozen=True)
class Sim:
    """A SIM: the subscriber the reporting endpoint calls ``msisdn`` or ``imsi``."""

    msisdn: str
    imsi: str
    kind: str
    activation_date: date
    deactivation_date: date | None
    account_id: str
    device_id: str

    def active_on(self, day: date) -> bool:
        """Return whether the SIM is active on ``day`` (activation inclusive, deactivation not)."""
        ends = self.deactivation_date
        return self.activation_date <= day and (ends is None or day < ends)


@dataclass(frozen=True)
class Device:
    """A device (UE) with its SIM, eNodeB, site and usage profile."""

    device_id: str
    account_id: str
    customer_site_id: str
    enodeb_ip: str
    ue_ip: str
    lr_id: str
    msisdn: str
    imsi: str
    profile: str


@dataclass(frozen=True, eq=False)
class Network:
    """The whole synthetic network: inventory as tuples, per-device parameters as numpy arrays.

    The arrays are indexed like :attr:`devices` and are read-only: ``account``, ``site``,
    ``enodeb`` (indexes), the activity parameters used by ``activity.py`` (``key``, ``thr`` and
    ``thr_top``, the same thresholds shifted to the top 12 bits, ``full``, ``rate_up``...), the
    quality parameters used by ``quality.py`` (``qkey``, ``qlevel``), and one string array per
    reporting dimension (``msisdn``, ``imsi``, ``customer_site_id``, ``enodeb_ip``, ``ue_ip``,
    ``lr_id``). Lookups by account or dimension value (:meth:`devices_of`,
    :meth:`devices_where`) build an index on first use. :attr:`incidents` are the injected
    incidents (:meth:`with_incidents`) and :attr:`effects` what they do, per device index.
    """

    seed: int
    accounts: tuple[Account, ...]
    sites: tuple[Site, ...]
    enodebs: tuple[ENodeB, ...]
    sims: tuple[Sim, ...]
    devices: tuple[Device, ...]
    arrays: dict[str, npt.NDArray[Any]] = field(repr=False)
    incidents: tuple[Incident, ...] = ()
    effects: dict[int, tuple[Effect, ...]] = field(default_factory=dict, repr=False)
    _lookup: dict[str, dict[str, npt.NDArray[np.int64]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def primary_account_id(self) -> str:
        """The id of the primary account."""
        return self.accounts[0].account_id

    def devices_of(self, account: int) -> npt.NDArray[np.int64]:
        """Return the (sorted) indexes of the devices of the ``account``-th account."""
        return self._index("account").get(str(account), _NONE)

    def devices_where(self, dimension: str, values: Iterable[str | int]) -> npt.NDArray[np.int64]:
        """Return the sorted indexes of the devices whose ``dimension`` is one of ``values``.

        Values are compared as strings (``919876543210`` matches ``"919876543210"``) the way
        numpy compares them (trailing NUL characters do not count).
        """
        index = self._index(dimension)
        found = [index[k] for k in {str(v).rstrip("\x00") for v in values} if k in index]
        if not found:
            return _NONE
        return found[0] if len(found) == 1 else np.unique(np.concatenate(found))

    def _index(self, name: str) -> dict[str, npt.NDArray[np.int64]]:
        """Return (building it on first use) value -> sorted device indexes for an array."""
        index = self._lookup.get(name)
        if index is None:
            keys, inverse = np.unique(self.arrays[name], return_inverse=True)
            order = np.argsort(inverse, kind="stable")
            groups = np.split(order, np.cumsum(np.bincount(inverse, minlength=len(keys)))[:-1])
            index = {str(k): g.astype(np.int64) for k, g in zip(keys.tolist(), groups, strict=True)}
            for g in index.values():
                g.setflags(write=False)
            self._lookup[name] = index  # a benign race: two threads build the same index
        return index

    def with_incidents(self, specs: Iterable[Mapping[str, Any] | str] | None) -> Network:
        """Return this network with incidents injected (``incidents.py``); None: none.

        A ``sim_deactivated`` incident changes the SIM's deactivation date (in :attr:`sims` and
        in the arrays every report reads), so it is a real lifecycle event; the others change
        activity (:attr:`effects`).

        Raises:
            ValueError: an incident is malformed, names a subject that does not exist, or
                deactivates a SIM that is not active on its day.
        """
        incidents = parse_incidents(
            specs,
            (s.customer_site_id for s in self.sites),
            (d.msisdn for d in self.devices),
            (e.enodeb_ip for e in self.enodebs),
        )
        by_site: dict[str, list[int]] = {}
        by_enodeb: dict[str, list[int]] = {}
        for i, d in enumerate(self.devices):
            by_site.setdefault(d.customer_site_id, []).append(i)
            by_enodeb.setdefault(d.enodeb_ip, []).append(i)
        by_msisdn = {d.msisdn: i for i, d in enumerate(self.devices)}
        effects = effects_of(incidents, by_site, by_msisdn, by_enodeb)
        sims, arrays = self._deactivated(incidents, by_msisdn)
        return replace(self, incidents=incidents, effects=effects, sims=sims, arrays=arrays)

    def _deactivated(
        self, incidents: Iterable[Incident], by_msisdn: Mapping[str, int]
    ) -> tuple[tuple[Sim, ...], dict[str, npt.NDArray[Any]]]:
        """The SIMs and arrays with the ``sim_deactivated`` incidents applied."""
        sims, arrays = list(self.sims), dict(self.arrays)
        deact_day = arrays["deact_day"].copy()
        for n, inc in enumerate(incidents):
            if inc.kind != LIFECYCLE:
                continue
            d = by_msisdn[inc.subject]
            day = inc.start.date()
            sim = sims[d]
            if not sim.active_on(day):
                raise ValueError(
                    f"incident {n + 1}: the SIM of {inc.subject} is not active on {day} "
                    f"(active from {sim.activation_date} to {sim.deactivation_date or 'now'}): "
                    "pick a day in its life"
                )
            sims[d] = replace(sim, deactivation_date=day)
            deact_day[d] = (day - _EPOCH).days
        if (deact_day == arrays["deact_day"]).all():
            return self.sims, self.arrays
        deact_hour = np.minimum(deact_day, _FAR_FUTURE_DAY) * 24
        for name, values in (("deact_day", deact_day), ("deact_hour", deact_hour)):
            values.setflags(write=False)
            arrays[name] = values
        return tuple(sims), arrays

    def effects_on(
        self, dev: npt.NDArray[np.int64], h0: int, h1: int
    ) -> dict[int, tuple[Effect, ...]]:
        """Return, per position in ``dev``, the incident effects that overlap hours ``[h0, h1)``."""
        if not self.effects:
            return {}
        keys = np.array(sorted(self.effects), dtype=np.int64)
        found = np.flatnonzero(np.isin(dev, keys))
        out: dict[int, tuple[Effect, ...]] = {}
        for pos in found.tolist():
            hit = tuple(e for e in self.effects[int(dev[pos])] if e.h0 < h1 and e.h1 > h0)
            if hit:
                out[pos] = hit
        return out

    def sims_of(self, account_id: str) -> tuple[Sim, ...]:
        """Return the SIMs of one account, in inventory order."""
        return tuple(s for s in self.sims if s.account_id == account_id)

    def inventory_rows(self, account_id: str | None = None) -> list[dict[str, Any]]:
        """Return an account's inventory as an operator keeps it: one row per SIM with its
        MSISDN, IMSI, device, customer site, eNodeB, activation and deactivation dates (ISO
        texts; no deactivation: None), in inventory order (default: the primary account).

        Raises:
            ValueError: no account has that id.
        """
        account = self.primary_account_id if account_id is None else account_id
        if account not in {a.account_id for a in self.accounts}:
            raise ValueError(f"no account {account!r} in the sandbox's network")
        device = {d.device_id: d for d in self.devices}
        rows = []
        for sim in self.sims_of(account):
            dev = device[sim.device_id]
            ends = sim.deactivation_date
            rows.append(
                {
                    "msisdn": sim.msisdn,
                    "imsi": sim.imsi,
                    "device_id": sim.device_id,
                    "customer_site_id": dev.customer_site_id,
                    "enodeb_ip": dev.enodeb_ip,
                    "activation_date": sim.activation_date.isoformat(),
                    "deactivation_date": None if ends is None else ends.isoformat(),
                    "account_id": account,
                }
            )
        return rows

    def active_sim_counts(self, account_id: str, day: date) -> dict[str, int]:
        """Return ``{"physical": n, "esim": m}`` for the SIMs of an account active on ``day``."""
        counts = {"physical": 0, "esim": 0}
        for sim in self.sims_of(account_id):
            if sim.active_on(day):
                counts[sim.kind] += 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        """Return the inventory as JSON-ready data (dates as ISO strings)."""

        def iso(d: date | None) -> str | None:
            return None if d is None else d.isoformat()

        return {
            "seed": self.seed,
            "primary_account_id": self.primary_account_id,
            "accounts": [vars(a) for a in self.accounts],
            "sites": [vars(s) for s in self.sites],
            "enodebs": [vars(e) for e in self.enodebs],
            "sims": [
                {
                    **vars(s),
                    "activation_date": iso(s.activation_date),
                    "deactivation_date": iso(s.deactivation_date),
                }
                for s in self.sims
            ],
            "devices": [vars(d) for d in self.devices],
            "incidents": [i.to_dict() for i in self.incidents],
        }


def _account_id(seed: int, index: int) -> str:
    if seed == 0 and index == 0:
        return DOCUMENTED_ACCOUNT_ID
    return f"{key_of(seed, 17, index):016x}{key_of(seed, 18, index) & 0xFFFFFFFF:08x}"


def build_network(seed: int = 0, devices: int = 64, *, extra_accounts: int = 1) -> Network:
    """Build the seeded synthetic network.

    Args:
        seed: the seed of everything (inventory and activity).
        devices: devices (and SIMs) on the primary account, 1 to 100,000.
        extra_accounts: how many further, smaller accounts to add (0 to 8).

    Returns:
        The network.

    Raises:
        ValueError: an argument is out of range.
    """
    if not 1 <= devices <= MAX_DEVICES:
        raise ValueError(f"devices must be between 1 and {MAX_DEVICES}, got {devices}")
    if not 0 <= extra_accounts <= 8:
        raise ValueError(f"extra_accounts must be between 0 and 8, got {extra_accounts}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    rng = np.random.Generator(np.random.Philox(key=key_of(seed, 1)))
    sizes = [devices] + [max(4, devices // 8)] * extra_accounts
    total = sum(sizes)

    accounts: list[Account] = []
    sites: list[Site] = []
    enodebs: list[ENodeB] = []
    dev_account = np.empty(total, dtype=np.int64)
    dev_site = np.empty(total, dtype=np.int64)
    dev_enb = np.empty(total, dtype=np.int64)
    start = 0
    for a, size in enumerate(sizes):
        account_id = _account_id(seed, a)
        accounts.append(Account(account_id, f"Sandbox Enterprise {a + 1}", a == 0))
        n_sites = max(2, -(-size // 12))
        first_site = len(sites)
        for s in range(n_sites):
            city = _CITIES[(a + s) % len(_CITIES)]
            site_id = f"{city}-{a + 1}{s + 1:03d}"
            sites.append(Site(site_id, account_id, f"{city} site {s + 1}", city))
            for e in range(int(rng.integers(1, 4))):
                enodebs.append(ENodeB(f"10.{10 + a}.{s}.{e + 1}", site_id, account_id))
        stop = start + size
        dev_account[start:stop] = a
        dev_site[start:stop] = first_site + rng.integers(0, n_sites, size)
        start = stop
    enb_by_site: dict[str, list[int]] = {}
    for i, enb in enumerate(enodebs):
        enb_by_site.setdefault(enb.customer_site_id, []).append(i)
    for i in range(total):
        choices = enb_by_site[sites[dev_site[i]].customer_site_id]
        dev_enb[i] = choices[int(rng.integers(0, len(choices)))]

    msisdn = 7_000_000_000 + rng.choice(3_000_000_000, size=total, replace=False)
    imsi = rng.choice(10_000_000_000, size=total, replace=False)
    lr = 100_000 + rng.choice(900_000, size=total, replace=False)
    esim = rng.random(total) < 0.3
    late = rng.random(total) >= 0.8
    d2021 = (date(2021, 1, 1) - _EPOCH).days
    d2022 = (date(2022, 1, 1) - _EPOCH).days
    d2025 = (date(2025, 1, 1) - _EPOCH).days
    d2026 = (date(2026, 1, 1) - _EPOCH).days
    act_day = np.where(
        late, rng.integers(d2022, d2025, total), rng.integers(d2021, d2022, total)
    ).astype(np.int64)
    gone = rng.random(total) < 0.06
    deact_day = np.where(
        gone,
        act_day + 30 + (rng.random(total) * (d2026 - act_day - 30)).astype(np.int64),
        _FAR_FUTURE_DAY,
    ).astype(np.int64)

    shares = np.cumsum([p[1] for p in _PROFILES])
    prof = np.searchsorted(shares, rng.random(total) * shares[-1], side="right")
    prof = np.minimum(prof, len(_PROFILES) - 1)
    thr = np.array([_PROFILES[p][2] for p in prof], dtype=np.int64).reshape(total, 3)
    full = np.array([_PROFILES[p][3] for p in prof], dtype=bool)
    up_lo, up_hi = (np.array([_PROFILES[p][4][k] for p in prof], float) for k in (0, 1))
    dn_lo, dn_hi = (np.array([_PROFILES[p][5][k] for p in prof], float) for k in (0, 1))
    rate_up = up_lo + rng.random(total) * (up_hi - up_lo)
    rate_down = dn_lo + rng.random(total) * (dn_hi - dn_lo)
    with np.errstate(over="ignore"):
        keys = fmix64(np.arange(total, dtype=np.uint64) * GOLDEN ^ np.uint64(key_of(seed, 2)))

    sims: list[Sim] = []
    devs: list[Device] = []
    per_account_counter = [0] * len(sizes)
    for i in range(total):
        a = int(dev_account[i])
        k = per_account_counter[a]
        per_account_counter[a] += 1
        account_id = accounts[a].account_id
        device_id = f"ue-{a}-{k:05d}"
        ms = f"91{int(msisdn[i])}"
        im = f"40445{int(imsi[i]):010d}"
        kind = "esim" if esim[i] else "physical"
        act = _EPOCH + timedelta(int(act_day[i]))
        deact = None if deact_day[i] >= _FAR_FUTURE_DAY else _EPOCH + timedelta(int(deact_day[i]))
        sims.append(Sim(ms, im, kind, act, deact, account_id, device_id))
        devs.append(
            Device(
                device_id=device_id,
                account_id=account_id,
                customer_site_id=sites[dev_site[i]].customer_site_id,
                enodeb_ip=enodebs[dev_enb[i]].enodeb_ip,
                ue_ip=f"100.{64 + a}.{k // 250}.{k % 250 + 2}",
                lr_id=f"LR{int(lr[i])}",
                msisdn=ms,
                imsi=im,
                profile=_PROFILES[int(prof[i])][0],
            )
        )
    arrays: dict[str, npt.NDArray[Any]] = {
        "account": dev_account,
        "site": dev_site,
        "enodeb": dev_enb,
        "key": keys,
        "act_hour": act_day * 24,
        "deact_hour": np.minimum(deact_day, _FAR_FUTURE_DAY) * 24,
        "act_day": act_day,
        "deact_day": deact_day,
        "esim": esim,
        "thr": thr,
        "full": full,
        "rate_up": rate_up,
        "rate_down": rate_down,
    }
    # derived per-device constants (no random draws: the inventory above stays as it was)
    # thresholds on the top 12 bits: with t < 4096, (bits >> 52) < t exactly when bits < t << 52
    arrays["thr_top"] = thr.astype(np.uint64) << np.uint64(52)
    with np.errstate(over="ignore"):
        qkey = fmix64(np.arange(total, dtype=np.uint64) * GOLDEN ^ np.uint64(key_of(seed, 3)))
    arrays["qkey"] = qkey
    arrays["qlevel"] = level_of([d.profile for d in devs], qkey)
    for dim in ("msisdn", "imsi", "customer_site_id", "enodeb_ip", "ue_ip", "lr_id"):
        arrays[dim] = np.array([getattr(d, dim) for d in devs], dtype=str)
    for arr in arrays.values():
        arr.setflags(write=False)
    return Network(
        seed, tuple(accounts), tuple(sites), tuple(enodebs), tuple(sims), tuple(devs), arrays
    )
