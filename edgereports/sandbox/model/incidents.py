"""Incidents: ground truth injected into the synthetic network's activity.

An incident changes what some devices do during a run of whole UTC hours (activity is drawn
per UTC hour), and every report is computed from the changed activity. ``site_dark``,
``enodeb_dark`` and ``device_offline`` remove the sessions, ``sim_idle`` the bytes, ``usage_drop``
and ``usage_spike`` scale the rates; on one device no session beats no bytes, which beats a rate
factor (factors multiply). ``sim_deactivated`` is a lifecycle event instead: the SIM's
deactivation date becomes the incident's day (``network.py`` applies it), so its device, the
SIM counts and the inventory all agree. docs/sandbox.md ("Incidents") gives the subjects, the
defaults and the form of an incident.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = [
    "IDLE",
    "KINDS",
    "OFF",
    "SCALE",
    "Effect",
    "Incident",
    "effects_of",
    "parse_incident",
    "parse_incidents",
    "segments",
]

KINDS = ("site_dark", "enodeb_dark", "device_offline", "usage_drop", "usage_spike", "sim_idle",
         "sim_deactivated")  # fmt: skip
#: The kind that changes a SIM's life rather than its activity (no hours: it lasts).
LIFECYCLE = "sim_deactivated"
_SUBJECTS = {"site_dark": "a customer site id", "enodeb_dark": "an eNodeB's IP address"}
DEFAULT_FACTORS = {"usage_drop": 0.1, "usage_spike": 6.0}
MAX_HOURS = 24 * 366
MIN_IDLE_HOURS = 24
#: Effect modes, strongest first.
OFF, IDLE, SCALE = 0, 1, 2
_KEYS = ("kind", "subject", "start", "hours", "factor")


@dataclass(frozen=True)
class Incident:
    """One injected incident.

    Attributes:
        kind: one of :data:`KINDS`.
        subject: a customer site id (``site_dark``), an eNodeB's IP address (``enodeb_dark``)
            or an MSISDN (the other kinds).
        start: the first hour, tz-aware (UTC); for ``sim_deactivated`` a UTC midnight, the
            SIM's new deactivation date.
        hours: how many whole hours it lasts (None for ``sim_deactivated``: it lasts).
        factor: the rate factor of ``usage_drop``/``usage_spike`` (else None).
    """

    kind: str
    subject: str
    start: datetime
    hours: int | None
    factor: float | None = None

    @property
    def end(self) -> datetime | None:
        """The end (exclusive; None for a deactivation, which lasts)."""
        return None if self.hours is None else self.start + timedelta(hours=self.hours)

    @property
    def first_hour(self) -> int:
        """The first hour as hours since the epoch."""
        return int(self.start.timestamp()) // 3600

    def to_dict(self) -> dict[str, Any]:
        """Return the incident as JSON-ready data (times in UTC ISO 8601)."""
        end = self.end
        out: dict[str, Any] = {
            "kind": self.kind,
            "subject": self.subject,
            "start": self.start.isoformat(),
            "end": None if end is None else end.isoformat(),
            "hours": self.hours,
        }
        if self.factor is not None:
            out["factor"] = self.factor
        return out


@dataclass(frozen=True)
class Effect:
    """What an incident does to one device: ``mode`` over hours ``[h0, h1)``."""

    h0: int
    h1: int
    mode: int
    factor: float = 1.0


def _start(value: object, where: str) -> datetime:
    if isinstance(value, datetime):
        when = value
    elif isinstance(value, str):
        try:
            when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(
                f"{where}: start {value!r} is not an ISO 8601 instant "
                "(e.g. 2024-03-10T04:00:00+00:00)"
            ) from None
    else:
        raise ValueError(f"{where}: start must be an ISO 8601 text or a datetime, got {value!r}")
    if when.tzinfo is None:
        raise ValueError(f"{where}: start {value!r} needs a UTC offset (e.g. +00:00)")
    when = when.astimezone(UTC)
    if when.minute or when.second or when.microsecond:
        raise ValueError(
            f"{where}: start {value!r} must fall on a whole UTC hour (the network draws its "
            f"activity per UTC hour), e.g. {when.replace(minute=0, second=0, microsecond=0)}"
        )
    return when


def _from_text(spec: str, where: str) -> dict[str, Any]:
    """``KIND:SUBJECT:START:HOURS`` (``sim_deactivated:SUBJECT:START``) as a mapping."""
    parts = spec.split(":")
    if parts[0] == LIFECYCLE and len(parts) >= 3:
        return {"kind": parts[0], "subject": parts[1], "start": ":".join(parts[2:])}
    if len(parts) < 4:
        raise ValueError(f"{where}: {spec!r} must look like KIND:SUBJECT:START:HOURS")
    return {"kind": parts[0], "subject": parts[1], "start": ":".join(parts[2:-1]),
            "hours": parts[-1]}  # fmt: skip


def parse_incident(spec: Mapping[str, Any] | str, sites: Iterable[str],
                   msisdns: Iterable[str], where: str = "incident",
                   enodebs: Iterable[str] = ()) -> Incident:  # fmt: skip
    """Read and check one incident: a mapping or a ``KIND:SUBJECT:START:HOURS`` text
    (``sim_deactivated:MSISDN:START``: a deactivation has no hours).

    Args:
        spec: the incident.
        sites: the customer site ids that exist.
        msisdns: the MSISDNs that exist.
        where: how messages name the incident.
        enodebs: the eNodeB IP addresses that exist.

    Returns:
        The incident.

    Raises:
        ValueError: a field is missing, unknown or out of range (the message names it).
    """
    if isinstance(spec, str):
        spec = _from_text(spec, where)
    if not isinstance(spec, Mapping):
        raise ValueError(f"{where} must be a mapping with kind, subject, start and hours")
    unknown = sorted(set(spec) - set(_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown field {unknown[0]!r}; fields: {', '.join(_KEYS)}")
    kind = spec.get("kind")
    needed = _KEYS[:3] if kind == LIFECYCLE else _KEYS[:4]
    missing = [k for k in needed if k not in spec]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(missing)}")
    if kind not in KINDS:
        raise ValueError(f"{where}: kind {kind!r} must be one of {', '.join(KINDS)}")
    subject = str(spec["subject"]).strip()
    known = {"site_dark": set(sites), "enodeb_dark": set(enodebs)}.get(kind) or set(msisdns)
    if subject not in known:
        what = _SUBJECTS.get(kind, "the MSISDN of a device")
        shown = ", ".join(sorted(known)[:6])
        raise ValueError(f"{where}: subject {subject!r} of {kind} must be {what} (e.g. {shown})")
    start = _start(spec["start"], where)
    if kind == LIFECYCLE:
        return _deactivation(spec, subject, start, where)
    try:
        hours = int(str(spec["hours"]).strip())
    except ValueError:
        raise ValueError(f"{where}: hours {spec['hours']!r} must be a whole number") from None
    least = MIN_IDLE_HOURS if kind == "sim_idle" else 1
    if not least <= hours <= MAX_HOURS:
        raise ValueError(f"{where}: hours of {kind} must be {least} to {MAX_HOURS}, got {hours}")
    factor = spec.get("factor")
    if kind in DEFAULT_FACTORS:
        factor = DEFAULT_FACTORS[kind] if factor is None else float(factor)
        ok = 0 < factor < 1 if kind == "usage_drop" else 1 < factor <= 1000
        if not ok:
            span = "between 0 and 1" if kind == "usage_drop" else "above 1 (at most 1000)"
            raise ValueError(f"{where}: factor of {kind} must be {span}, got {factor}")
    elif factor is not None:
        raise ValueError(f"{where}: factor applies to usage_drop and usage_spike only")
    return Incident(kind, subject, start, hours, factor)


def _deactivation(spec: Mapping[str, Any], subject: str, start: datetime, where: str) -> Incident:
    """A ``sim_deactivated`` incident: on a UTC midnight, without hours or factor."""
    if spec.get("hours") is not None:
        raise ValueError(f"{where}: sim_deactivated takes no hours (the SIM stays deactivated)")
    if spec.get("factor") is not None:
        raise ValueError(f"{where}: factor applies to usage_drop and usage_spike only")
    if start.hour:
        raise ValueError(
            f"{where}: start of sim_deactivated must be a UTC midnight (a SIM's life is counted "
            f"in UTC days), e.g. {start.replace(hour=0).isoformat()}"
        )
    return Incident(LIFECYCLE, subject, start, None)


def parse_incidents(
    specs: Iterable[Mapping[str, Any] | str] | None,
    sites: Iterable[str],
    msisdns: Iterable[str],
    enodebs: Iterable[str] = (),
) -> tuple[Incident, ...]:
    """Read and check incidents (see :func:`parse_incident`), in the order given."""
    if specs is None:
        return ()
    if isinstance(specs, (str, Mapping)):
        raise ValueError("incidents must be a list of incidents")
    site_ids, numbers, cells = list(sites), list(msisdns), list(enodebs)
    return tuple(
        parse_incident(s, site_ids, numbers, f"incident {i + 1}", cells)
        for i, s in enumerate(specs)
    )


def effects_of(
    incidents: Iterable[Incident],
    devices_of_site: Mapping[str, list[int]],
    device_of_msisdn: Mapping[str, int],
    devices_of_enodeb: Mapping[str, list[int]],
) -> dict[int, tuple[Effect, ...]]:
    """Return the effects of incidents on activity per device index (a deactivation has
    none: it changes the SIM's life)."""
    out: dict[int, list[Effect]] = {}
    for inc in incidents:
        if inc.hours is None:
            continue
        h0 = inc.first_hour
        span = (h0, h0 + inc.hours)
        groups = {"site_dark": devices_of_site, "enodeb_dark": devices_of_enodeb}
        if inc.kind in groups:
            for d in groups[inc.kind].get(inc.subject, []):
                out.setdefault(d, []).append(Effect(*span, OFF))
            continue
        d = device_of_msisdn[inc.subject]
        if inc.kind == "device_offline":
            effect = Effect(*span, OFF)
        elif inc.kind == "sim_idle":
            effect = Effect(*span, IDLE)
        else:
            assert inc.factor is not None
            effect = Effect(*span, SCALE, inc.factor)
        out.setdefault(d, []).append(effect)
    return {d: tuple(e) for d, e in out.items()}


def segments(effects: Iterable[Effect], h0: int, h1: int) -> list[tuple[int, int, int, float]]:
    """Cut ``[h0, h1)`` at the effects' bounds: ``(a, b, mode, factor)``, mode -1 for none."""
    effects = [e for e in effects if e.h0 < h1 and e.h1 > h0]
    cuts = sorted({h0, h1} | {min(max(x, h0), h1) for e in effects for x in (e.h0, e.h1)})
    out: list[tuple[int, int, int, float]] = []
    for a, b in itertools.pairwise(cuts):
        live = [e for e in effects if e.h0 <= a and b <= e.h1]
        mode, factor = -1, 1.0
        if live:
            mode = min(e.mode for e in live)
            for e in live:
                if e.mode == SCALE:
                    factor *= e.factor
        out.append((a, b, mode, factor))
    return out
