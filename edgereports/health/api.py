"""``er.health``: pull the hourly report of every subscriber once, and turn it into flags."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING

from ..errors import InputError
from ..query import Report
from ..query.timegrid import BUCKETS, ceil, floor, resolve_relative
from ..query.times import TimeLike, is_keyword, parse_timestamp, parse_tz, render_time
from .kinds import COLUMNS, KINDS

if TYPE_CHECKING:
    import pandas as pd

    from ..reporting import ReportingClient

__all__ = ["COLUMNS", "DEFAULT_HISTORY", "KINDS", "health"]

#: How much history before ``start`` the baselines are learnt from.
DEFAULT_HISTORY = timedelta(days=28)
_HOUR = BUCKETS["HOUR"]


def _msisdns(values: object) -> tuple[str, ...]:
    if values is None or isinstance(values, str | int):
        values = [] if values is None else [values]
    if not isinstance(values, Iterable):
        raise InputError(f"msisdn must be a list of MSISDNs, got {type(values).__name__}")
    out = tuple(dict.fromkeys(str(v).strip() for v in values))
    if not out or any(not v for v in out):
        raise InputError(
            "msisdn must name the subscribers to check (e.g. msisdn=['919876543210', ...]): "
            "the service has no list of an account's devices"
        )
    return out


def _when(value: TimeLike, name: str, zone: tzinfo, now: datetime | None) -> datetime:
    """A bound as a tz-aware datetime (relative dates against ``now``)."""
    relative = resolve_relative(value, zone, now)
    if relative is not None:
        return relative
    text = render_time(value, name, zone, strict=True)
    if is_keyword(text):
        raise InputError(f"{name} must be a date, a timestamp or a relative date, got {value!r}")
    return parse_timestamp(text, name)


def health(
    client: ReportingClient,
    *,
    account_id: str,
    msisdn: Iterable[str | int] | str | int,
    start: TimeLike,
    end: TimeLike,
    tz: str | tzinfo | None = None,
    history: timedelta = DEFAULT_HISTORY,
) -> pd.DataFrame:
    """Flag what is wrong with an account's subscribers and sites over ``[start, end)``.

    Pulls one report (per subscriber and hour: seconds online and bytes, with the site each
    device belongs to) from the UTC midnight at least ``history`` before ``start`` to the hour
    holding ``end`` (whole days and hours, which the cache keeps), through ``client`` (its
    windows, cache and request budget; one request per MSISDN), and the account's active SIMs
    per day (one request: a device silent to the end from at most two days before the count
    falls is taken for a deactivated SIM, listed in ``df.attrs["deactivated"]`` rather than
    flagged). Then judges every subscriber and site against its own history per local hour of
    day, weekdays and weekends apart. Kinds: ``site_dark``, ``device_offline``,
    ``usage_drop``, ``usage_spike``, ``sim_idle`` (docs: "Health flags").

    Args:
        client: a v1 :class:`~edgereports.ReportingClient`.
        account_id: the account.
        msisdn: the subscribers to check (the service lists no account's devices).
        start: the first instant looked at (date, timestamp or relative date such as ``7d``).
        end: the end (exclusive); hours after the service's present are not judged.
        tz: the zone of hour of day and weekends (default: the offset of ``start``, else
            UTC).
        history: how far back before ``start`` the baselines are learnt (at least 7 days).

    Returns:
        One row per flag: ``kind``, ``subject`` (a customer site id for ``site_dark``, an
        MSISDN otherwise), ``start``, ``end`` (UTC, whole hours; a flag still open at the
        end of the data ends there), ``severity`` (``high``, ``medium`` or ``low``) and
        ``evidence`` (one line of numbers), ordered by start, kind and subject.
        ``df.attrs`` holds ``range``, ``history_start``, ``judged_until``, ``subjects``,
        ``sites``, ``deactivated`` and ``reports`` (the provenance of each pulled report:
        request, requests sent, cache).

    Raises:
        InputError: a bad argument (before any request).
        EdgeReportsError: the pull failed (see :meth:`ReportingClient.fetch`).

    Example:
        >>> flags = er.health(client, account_id=acct, msisdn=numbers, start="7d", end="today")
        >>> list(flags.columns)
        ['kind', 'subject', 'start', 'end', 'severity', 'evidence']
    """
    from .flags import build_flags

    if not isinstance(account_id, str) or not account_id.strip():
        raise InputError("account_id must be the account's id (a non-empty text)")
    numbers = _msisdns(msisdn)
    if not isinstance(history, timedelta) or history < timedelta(days=7):
        raise InputError(f"history must be a timedelta of at least 7 days, got {history!r}")
    if getattr(client, "api_version", None) != "v1":
        raise InputError("er.health needs a v1 ReportingClient (er.ReportingClient(...))")
    zone = parse_tz(tz) if tz is not None else None
    guess = zone or _zone_of(start)
    needs_now = any(resolve_relative(v, UTC) is not None for v in (start, end))
    now = client.service_now() if needs_now else None
    t0 = _when(start, "start", guess, now)
    t1 = _when(end, "end", guess, now)
    if t1 <= t0:
        raise InputError(f"end ({t1.isoformat()}) must be after start ({t0.isoformat()})")
    zone = zone or t0.tzinfo or UTC
    # whole UTC days from the history's first one to the hour holding the end: the cache
    # keeps whole days, and the hour cut by the end is judged whole
    first = floor(t0 - history, BUCKETS["DAY"])
    hourly_report, sims_report = _reports(account_id, numbers, first, t1)
    frame = client.fetch(hourly_report)
    sims = client.fetch(sims_report)
    present = floor(client.service_now(probe=False), _HOUR)
    stop = min(ceil(t1, _HOUR), present)
    return build_flags(frame, sims, numbers, first, t0, stop, t1, zone)


def _reports(
    account_id: str, numbers: tuple[str, ...], first: datetime, end: datetime
) -> tuple[Report, Report]:
    from .. import presets
    from .series import health_report

    day = BUCKETS["DAY"]
    sims = presets.active_sim_count(account_id=account_id, start=first, end=ceil(end, day))
    return health_report(account_id, numbers, first, ceil(end, _HOUR)), sims


def _zone_of(value: object) -> tzinfo:
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.tzinfo
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return UTC
        return parsed.tzinfo or UTC
    return UTC
