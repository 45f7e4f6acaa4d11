"""``er.Inventory``: an account's devices, their places and lives, and its maintenance windows.

The service lists no account's devices and tells no SIM's life, so the operator's inventory is
an input. It answers three questions for anything that judges hours (health flags, availability):
which devices exist (:attr:`Inventory.msisdns`, :meth:`Inventory.members`), which are active at
an hour (:meth:`Inventory.active_mask`, :meth:`Inventory.active_at`), and which maintenance
windows apply to a device, an eNodeB or a site at an hour (:meth:`Inventory.windows_at`,
:meth:`Inventory.maintenance_mask`, :meth:`Inventory.scope_maintenance`). Hours are whole UTC
hours: a device is active in every hour its life touches, and a window covers every hour it
touches.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import InputError
from .hours import MaintenanceWindow, hour_numbers, hours_of, texts
from .read import devices_frame, partial_frame, read_file, windows_frame
from .table import SCOPES, check_table

__all__ = ["Inventory", "MaintenanceWindow"]

B2 = npt.NDArray[np.bool_]
_EMPTY = ["scope", "subject", "start", "end"]


class Inventory:
    """An account's devices as the operator knows them, and its maintenance windows.

    Build one with :meth:`from_frame`, :meth:`from_file`, :meth:`from_sandbox` or
    :meth:`from_table` (a job file's ``[inventory]``); :meth:`from_msisdns` makes the partial
    one that ``er.health(msisdn=...)`` uses. ``complete`` says whether it lists every device of
    the account: a site judged from a partial list says so.

    Example:
        >>> import pandas as pd
        >>> inv = er.Inventory.from_frame(pd.DataFrame({
        ...     "msisdn": ["919800000001", "919800000002"], "imsi": ["1", "2"],
        ...     "customer_site_id": ["S-1", "S-1"], "enodeb_ip": ["10.0.0.1", "10.0.0.2"],
        ...     "activation_date": ["2021-01-05", "2024-03-10"]}))
        >>> inv.members(site="S-1"), inv.active_at("2024-03-01T00:00:00+00:00")
        (('919800000001', '919800000002'), ('919800000001',))
    """

    def __init__(
        self,
        devices: pd.DataFrame,
        windows: pd.DataFrame | None = None,
        *,
        account_id: str | None = None,
        complete: bool = True,
        source: str = "a frame",
    ) -> None:
        """Use the ``from_*`` constructors; this one takes already checked frames."""
        self._devices = devices.reset_index(drop=True)
        if windows is None:
            windows = windows_frame(pd.DataFrame(columns=_EMPTY), "windows")
        self._windows = windows
        self.account_id = account_id
        self.complete = complete
        self.source = source
        self._act = hours_of(self._devices["activation"], up=False)
        self._deact = hours_of(self._devices["deactivation"], up=True)
        self._row = {m: i for i, m in enumerate(self._devices["msisdn"].tolist())}
        self._site: list[str | None] = texts(self._devices["customer_site_id"])
        self._enodeb: list[str | None] = texts(self._devices["enodeb_ip"])
        self._device = [str(d) for d in self._devices["device_id"].tolist()]
        self._list = [
            MaintenanceWindow(
                str(r["scope"]),
                str(r["subject"]),
                r["start"].to_pydatetime(),
                r["end"].to_pydatetime(),
                str(r["note"]),
            )
            for r in windows.to_dict(orient="records")
        ]
        starts = hours_of(windows["start"], up=False).tolist()
        self._spans = list(zip(starts, hours_of(windows["end"], up=True).tolist(), strict=True))

    # -- constructors -------------------------------------------------------------------------

    @classmethod
    def from_frame(
        cls,
        devices: pd.DataFrame,
        maintenance: pd.DataFrame | None = None,
        *,
        account_id: str | None = None,
        complete: bool = True,
    ) -> Inventory:
        """An inventory from frames.

        Args:
            devices: one row per SIM: ``msisdn``, ``imsi``, ``customer_site_id``,
                ``enodeb_ip``, ``activation_date``, and optionally ``deactivation_date`` (empty:
                still active), ``device_id`` (several SIMs in one device) and ``account_id``.
                Dates are UTC days; timestamps need their offset.
            maintenance: windows, one per row: ``scope`` (``site``, ``enodeb`` or
                ``msisdn``), ``subject``, ``start``, ``end`` and optionally ``note``.
            account_id: the account (default: the frame's ``account_id`` column, if any;
                with several accounts in it, the one whose rows are kept).
            complete: whether it lists every device of the account (False: a partial list).

        Raises:
            InputError: a missing or unknown column, or a bad value (names the row and column).
        """
        frame, account = devices_frame(devices, "the inventory", account_id)
        windows = None if maintenance is None else windows_frame(maintenance, "the maintenance")
        return cls(frame, windows, account_id=account, complete=complete)

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        maintenance: str | os.PathLike[str] | pd.DataFrame | None = None,
        *,
        account_id: str | None = None,
        complete: bool = True,
    ) -> Inventory:
        """An inventory from a CSV or Parquet file (columns as :meth:`from_frame`); the
        maintenance windows from another file or a frame.

        Raises:
            InputError: the file cannot be read, or a bad value (names the file, row and column).
        """
        where = f"inventory file {Path(path)}"
        frame, account = devices_frame(read_file(path), where, account_id)
        windows = None
        if isinstance(maintenance, pd.DataFrame):
            windows = windows_frame(maintenance, "the maintenance")
        elif maintenance is not None:
            where_w = f"maintenance file {Path(maintenance)}"
            windows = windows_frame(read_file(maintenance, "maintenance"), where_w)
        return cls(frame, windows, account_id=account, complete=complete, source=f"{Path(path)}")

    @classmethod
    def from_sandbox(cls, handle: Any, account_id: str | None = None) -> Inventory:
        """The sandbox's own inventory (``handle.inventory()``; the primary account by default).

        Example:
            >>> from edgereports.sandbox import serve
            >>> with serve(seed=0) as sb:
            ...     len(er.Inventory.from_sandbox(sb))
            64
        """
        rows = handle.inventory(account_id)
        frame, account = devices_frame(pd.DataFrame(rows), "the sandbox's inventory", None)
        return cls(frame, account_id=account, complete=True, source="the sandbox")

    @classmethod
    def from_table(
        cls,
        table: Mapping[str, Any],
        *,
        base: str | os.PathLike[str] | None = None,
        where: str = "job",
    ) -> Inventory:
        """The inventory a job file's ``[inventory]`` table names: ``devices`` (a file),
        optionally ``maintenance`` (a file, or a list of windows), ``complete`` and
        ``account_id``; relative paths are relative to ``base`` (the job file's folder);
        ``where`` names the job in messages.

        Raises:
            InputError: a bad table, a file that cannot be read, or a bad value.
        """
        spec = check_table(table, where)
        root = Path(base) if base is not None else Path()
        windows = spec.get("maintenance")
        maintenance: Any = None
        if isinstance(windows, list):
            maintenance = pd.DataFrame(windows or None, columns=None if windows else _EMPTY)
        elif isinstance(windows, str):
            maintenance = root / windows
        return cls.from_file(root / spec["devices"], maintenance,
                             account_id=spec.get("account_id"),
                             complete=spec.get("complete", True))  # fmt: skip

    @classmethod
    def from_msisdns(cls, msisdns: Iterable[str | int], account_id: str | None = None) -> Inventory:
        """A partial inventory of subscribers known by MSISDN only: their sites, eNodeBs and
        lives are unknown (health learns the sites from the service's answers).

        Raises:
            InputError: no MSISDN, or an empty one.
        """
        numbers = tuple(dict.fromkeys(str(v).strip() for v in msisdns))
        if not numbers or any(not v for v in numbers):
            raise InputError(
                "msisdn must name the subscribers to check (e.g. msisdn=['919876543210', ...]): "
                "the service has no list of an account's devices"
            )
        return cls(partial_frame(numbers), account_id=account_id, complete=False,
                   source="msisdn= (a partial list)")  # fmt: skip

    # -- what exists ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._devices)

    def __repr__(self) -> str:
        kind = "complete" if self.complete else "partial"
        return (
            f"Inventory({len(self)} SIMs, {len(self.sites)} sites, {len(self._windows)} "
            f"maintenance windows, {kind}, from {self.source})"
        )

    @property
    def msisdns(self) -> tuple[str, ...]:
        """The subscribers, in inventory order."""
        return tuple(self._devices["msisdn"].tolist())

    @property
    def sites(self) -> tuple[str, ...]:
        """The known customer sites, sorted."""
        return tuple(sorted(self._devices["customer_site_id"].dropna().unique().tolist()))

    @property
    def enodebs(self) -> tuple[str, ...]:
        """The known eNodeBs, sorted."""
        return tuple(sorted(self._devices["enodeb_ip"].dropna().unique().tolist()))

    @property
    def lifecycle_known(self) -> bool:
        """Whether every device's activation is known (a partial list learns it from data)."""
        return bool(self._devices["activation"].notna().all())

    @property
    def topology_known(self) -> bool:
        """Whether every device's site and eNodeB are known."""
        return bool(self._devices[["customer_site_id", "enodeb_ip"]].notna().all(axis=None))

    def to_frame(self) -> pd.DataFrame:
        """The devices: ``msisdn``, ``imsi``, ``device_id``, ``customer_site_id``,
        ``enodeb_ip``, ``activation``, ``deactivation`` (UTC; NaT: unknown, or still active)."""
        return self._devices.copy()

    def windows(self) -> list[MaintenanceWindow]:
        """Every maintenance window, by start."""
        return list(self._list)

    def members(self, *, site: str | None = None, enodeb: str | None = None) -> tuple[str, ...]:
        """The MSISDNs of a site, of an eNodeB, or of both (inventory order)."""
        chosen = pd.Series(True, index=self._devices.index)
        if site is not None:
            chosen &= self._devices["customer_site_id"] == site
        if enodeb is not None:
            chosen &= self._devices["enodeb_ip"] == enodeb
        return tuple(self._devices.loc[chosen.fillna(False), "msisdn"].tolist())

    def site_of(self, msisdn: str) -> str | None:
        """The customer site of a subscriber (None: unknown)."""
        return self._site[self._row[msisdn]]

    def device_of(self, msisdn: str) -> str:
        """The device of a subscriber (its MSISDN when the inventory names no device)."""
        return self._device[self._row[msisdn]]

    def enodeb_of(self, msisdn: str) -> str | None:
        """The eNodeB of a subscriber (None: unknown)."""
        return self._enodeb[self._row[msisdn]]

    # -- which are active -----------------------------------------------------------------------

    def active_mask(self, hours: Sequence[datetime] | pd.DatetimeIndex) -> B2:
        """Per device (rows in :attr:`msisdns` order) and hour, whether its SIM is active then.

        A device whose activation is unknown (a partial list) counts as active: the inventory
        says nothing against it.
        """
        h = hour_numbers(hours)
        out: B2 = (self._act[:, None] <= h[None, :]) & (h[None, :] < self._deact[:, None])
        return out

    def active_at(self, hour: datetime | str) -> tuple[str, ...]:
        """The MSISDNs active at an instant (its whole UTC hour)."""
        mask = self.active_mask(pd.DatetimeIndex([pd.Timestamp(hour)]))[:, 0]
        return tuple(m for m, ok in zip(self.msisdns, mask.tolist(), strict=True) if ok)

    # -- which maintenance windows apply --------------------------------------------------------

    def windows_at(
        self,
        hour: datetime | str,
        *,
        msisdn: str | None = None,
        site: str | None = None,
        enodeb: str | None = None,
    ) -> list[MaintenanceWindow]:
        """The windows that cover an instant's whole UTC hour for a subscriber (its own, its
        eNodeB's and its site's), an eNodeB (its own and its site's, when given) or a site."""
        at = pd.Timestamp(hour).tz_convert(UTC).floor("h")
        if msisdn is not None:
            site, enodeb = self.site_of(msisdn), self.enodeb_of(msisdn)
        wanted = {("msisdn", msisdn), ("enodeb", enodeb), ("site", site)}
        return [
            w
            for w in self.windows()
            if (w.scope, w.subject) in wanted
            and pd.Timestamp(w.start).floor("h") <= at < pd.Timestamp(w.end).ceil("h")
        ]

    def scope_maintenance(
        self, scope: str, subject: str, hours: Sequence[datetime] | pd.DatetimeIndex
    ) -> npt.NDArray[np.bool_]:
        """Per hour, whether a window on ``subject`` itself (a ``site``, ``enodeb`` or
        ``msisdn``) covers it."""
        if scope not in SCOPES:
            raise InputError(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}")
        h = hour_numbers(hours)
        out = np.zeros(len(h), dtype=bool)
        for w, (a, b) in zip(self._list, self._spans, strict=True):
            if w.scope == scope and w.subject == subject:
                out |= (a <= h) & (h < b)
        return out

    def maintenance_mask(self, hours: Sequence[datetime] | pd.DatetimeIndex) -> B2:
        """Per device (rows in :attr:`msisdns` order) and hour, whether a window covers it:
        its own, its eNodeB's or its site's."""
        h = hour_numbers(hours)
        out = np.zeros((len(self), len(h)), dtype=bool)
        if not len(self._windows):
            return out
        column = {"site": "customer_site_id", "enodeb": "enodeb_ip", "msisdn": "msisdn"}
        for w, (a, b) in zip(self._list, self._spans, strict=True):
            rows = (self._devices[column[w.scope]] == w.subject).fillna(False).to_numpy()
            if rows.any():
                out[rows] |= (a <= h) & (h < b)
        return out

    # -- parts ----------------------------------------------------------------------------------

    def subset(self, msisdns: Iterable[str]) -> Inventory:
        """The inventory of some subscribers (the same windows); it is no longer complete."""
        wanted = set(msisdns)
        chosen = self._devices[self._devices["msisdn"].isin(wanted)]
        return Inventory(chosen, self._windows, account_id=self.account_id, complete=False,
                         source=self.source)  # fmt: skip

    def shard(self, index: int, count: int) -> Inventory:
        """Shard ``index`` (1 to ``count``) of the inventory, split by customer site (a site is
        never split), stable across runs and machines; the shards' union is the inventory.

        Raises:
            InputError: a bad index or count, or devices whose site is unknown.
        """
        if not (isinstance(count, int) and isinstance(index, int) and 1 <= index <= count):
            raise InputError(f"shard must be i/n with 1 <= i <= n, got {index}/{count}")
        if self._devices["customer_site_id"].isna().any():
            raise InputError(
                "shards split the account by customer site: give an inventory that names each "
                "device's site (msisdn= alone does not)"
            )
        sites = self._devices["customer_site_id"].astype(str)
        owner = sites.map(lambda s: zlib.crc32(s.encode("utf-8")) % count + 1)
        chosen = self._devices[(owner == index).to_numpy()]
        shard = Inventory(chosen, self._windows, account_id=self.account_id,
                          complete=self.complete, source=self.source)  # fmt: skip
        return shard

    def with_topology(self, sites: Mapping[str, str], enodebs: Mapping[str, str]) -> Inventory:
        """This inventory with unknown sites and eNodeBs filled in (by MSISDN), as the service
        told them; what the inventory says is kept."""
        frame = self._devices.copy()
        for column, learnt in (("customer_site_id", sites), ("enodeb_ip", enodebs)):
            told = frame["msisdn"].map(learnt).astype("string")
            frame[column] = frame[column].fillna(told)
        return Inventory(frame, self._windows, account_id=self.account_id,
                         complete=self.complete, source=self.source)  # fmt: skip
