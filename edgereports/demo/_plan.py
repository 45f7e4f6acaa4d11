"""What the demo reports on: the subjects (account, subscribers, sites) and one plan per preset."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

from .. import presets
from ..query import Report
from ..query.timegrid import BUCKETS, floor

__all__ = [
    "DAILY_RANGE",
    "DEMO_CLOCK",
    "DEMO_ZONE",
    "PlannedReport",
    "Subjects",
    "demo_incidents",
    "plan_reports",
    "range_end",
]

#: The sandbox clock of the demo: its output is the same on every run.
DEMO_CLOCK = "2024-03-15T12:00:00+05:30"
#: The offset the demo writes its ranges in (the sandbox network's local time, India).
DEMO_ZONE = timezone(timedelta(hours=5, minutes=30))
#: The range of the daily presets (and of the demo's health flags) before the demo's end.
DAILY_RANGE = timedelta(days=7)
_DAILY, _HOURLY, _SIM_DAYS = DAILY_RANGE, timedelta(days=2), timedelta(days=14)
_DAY, _HOUR = timedelta(days=1), timedelta(hours=1)
#: The UTC midnight of the demo clock's day (incidents start on whole UTC hours).
_DEMO_DAY = floor(datetime.fromisoformat(DEMO_CLOCK).astimezone(UTC), BUCKETS["DAY"])


#: The device profile of the subscribers the demo reports on (sandbox profiles: docs/sandbox.md).
HANDSET = "handset"


@dataclass(frozen=True)
class Subjects:
    """The account and the ids the presets need.

    Attributes:
        account_id: the account to report on.
        msisdns: subscribers for the MSISDN presets (the first three are used).
        imsis: subscribers for the IMSI preset (the first three are used).
        sites: customer sites for the per-site presets (all are used).
        devices: MSISDNs whose device status to ask one by one (the service reports one
            device per answer); empty: the ``device_status`` preset as it is.
        profile: the device profile of ``msisdns`` and ``imsis`` when known (``handset``):
            the subscriber charts say which kind of device they show.
    """

    account_id: str
    msisdns: tuple[str, ...] = ()
    imsis: tuple[str, ...] = ()
    sites: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    profile: str | None = None

    @classmethod
    def from_network(cls, network: Any, today: date) -> Subjects:
        """Take the subjects from a sandbox network (its primary account), preferring the SIMs
        active ``today``.

        Returns:
            The subjects: three handsets with an active SIM (phones: the devices whose
            subscriber reports are the ones to show; cameras mostly send, sensors barely
            talk), every site, every device of the account.
        """
        account = str(network.primary_account_id)
        sims = [s for s in network.sims if s.account_id == account]
        sites = [s.customer_site_id for s in network.sites if s.account_id == account]
        profile = {d.msisdn: d.profile for d in network.devices}
        handsets = [s for s in sims if profile.get(s.msisdn) == HANDSET and s.active_on(today)]
        return cls(
            account_id=account,
            msisdns=tuple(s.msisdn for s in (handsets or sims)[:3]),
            imsis=tuple(s.imsi for s in (handsets or sims)[:3]),
            sites=tuple(sites),
            devices=tuple(s.msisdn for s in sims),
            profile=HANDSET if handsets else None,
        )


def demo_incidents(network: Any, subjects: Subjects) -> list[dict[str, Any]]:
    """The incidents the demo injects into its sandbox, so that its health section has
    something to find: the first subscriber offline for 30 hours and a sensor passing no
    bytes for two days, both inside the last week before :data:`DEMO_CLOCK`.

    Returns:
        The incidents, as ``serve(incidents=...)`` takes them (none when the subjects have
        no subscriber, or no sensor among their devices, for that one).
    """
    profile = {d.msisdn: d.profile for d in network.devices}
    sensors = [m for m in subjects.devices if profile.get(m) == "sensor"]
    out = []
    if subjects.msisdns:
        out.append(_incident("device_offline", subjects.msisdns[0], _DEMO_DAY - 4 * _DAY, 30))
    if sensors:
        out.append(_incident("sim_idle", sensors[0], _DEMO_DAY - 3 * _DAY - _HOUR * 6, 48))
    return out


def _incident(kind: str, subject: str, start: datetime, hours: int) -> dict[str, Any]:
    return {"kind": kind, "subject": subject, "start": start.isoformat(), "hours": hours}


@dataclass(frozen=True)
class PlannedReport:
    """One preset of the demo: the report(s) to fetch, or why it is skipped.

    Attributes:
        number: 1 to 11, the preset's place in the catalogue.
        name: the preset name.
        purpose: its one-line description.
        reports: the reports to fetch (several are concatenated into one frame).
        skipped: why the preset is not run (missing ids), else None.
        note: what the chart's title adds (the subscribers' device profile), else "".
    """

    number: int
    name: str
    purpose: str
    reports: tuple[Report, ...]
    skipped: str | None = None
    note: str = ""

    @property
    def slug(self) -> str:
        """The file name stem, e.g. ``01_time_usage_enterprise``."""
        return f"{self.number:02d}_{self.name}"


def range_end(now: datetime) -> datetime:
    """The end of the demo's ranges: the last UTC midnight before ``now``, written in +05:30
    (``2024-03-15T05:30:00+05:30`` for any time on 15 March, UTC), so DAY buckets are whole."""
    return floor(now, BUCKETS["DAY"]).astimezone(DEMO_ZONE)


def _needs(ids: Sequence[str], flag: str) -> str | None:
    return None if ids else f"needs {flag} (none given)"


def plan_reports(subjects: Subjects, end: datetime) -> list[PlannedReport]:
    """Plan the eleven presets over fixed ranges ending at ``end``.

    Daily presets cover the 7 days before ``end``, hourly ones 2 days, SIM counts 14 days;
    the ``NOW`` presets report the current five minutes.

    Returns:
        One plan per preset, in the catalogue's order.
    """
    acc = subjects.account_id
    day, hour, sims = end - _DAILY, end - _HOURLY, end - _SIM_DAYS
    ms, im, sites = list(subjects.msisdns[:3]), list(subjects.imsis[:3]), list(subjects.sites)
    # per preset: why it is skipped (or None), and its parameters besides the account (and
    # the end, for a preset over a range)
    planned: dict[str, tuple[str | None, dict[str, Any]]] = {
        "time_usage_enterprise": (None, {"start": day}),
        "time_usage_subscriber": (_needs(ms, "--msisdn"), {"msisdn": ms, "start": day}),
        "byte_usage_subscriber": (_needs(ms, "--msisdn"), {"msisdn": ms[:2], "start": hour}),
        "realtime_bandwidth": (None, {}),
        "bandwidth_percentile": (
            _needs(sites, "--customer-site-id"),
            {"customer_site_id": sites, "start": day},
        ),
        "ue_connections_avg_peak": (None, {"start": hour}),
        "active_sim_count": (None, {"start": sims}),
        "ue_connections_subscriber": (_needs(im, "--imsi"), {"imsi": im, "start": day}),
        "ue_connections_enterprise": (None, {"start": day}),
        "concurrent_online_ues": (None, {"customer_site_id": sites or None}),
        "device_status": (None, {}),
    }
    plans = []
    spec_presets = [p for p in presets.CATALOGUE if p.api_version == "v1"]  # the documented eleven
    for number, info in enumerate(spec_presets, start=1):
        reason, params = planned[info.name]
        if "start" in params:
            params["end"] = end
        reports: tuple[Report, ...] = ()
        if info.name == "device_status":
            reports = tuple(_device_reports(subjects))
        elif reason is None:
            reports = (presets.build(info.name, account_id=acc, **params),)
        per_subscriber = "msisdn" in info.name or info.name.endswith("_subscriber")
        note = f"{subjects.profile}s" if subjects.profile and per_subscriber else ""
        plans.append(PlannedReport(number, info.name, info.purpose, reports, reason, note))
    return plans


def _device_reports(subjects: Subjects) -> list[Report]:
    base = presets.device_status(account_id=subjects.account_id)
    if not subjects.devices:
        return [base]
    return [base.where(msisdn=m) for m in subjects.devices]
