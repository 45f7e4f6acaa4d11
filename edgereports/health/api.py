"""``er.health``: check the arguments, pull what the service can tell, judge, and say from what."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..query.timegrid import BUCKETS, floor, resolve_relative
from ..query.times import TimeLike, is_keyword, parse_timestamp, parse_tz, render_time
from .rules import KINDS

if TYPE_CHECKING:
    import pandas as pd

    from ..inventory.model import Inventory
    from ..reporting import ReportingClient

__all__ = ["DEFAULT_HISTORY", "KINDS", "Asked", "ask", "health", "parse_shard"]

#: How much history before ``start`` the baselines are learnt from.
DEFAULT_HISTORY = timedelta(days=28)


def _when(value: TimeLike, name: str, zone: tzinfo, now: datetime | None) -> datetime:
    """A bound as a tz-aware datetime (relative dates against ``now``)."""
    relative = resolve_relative(value, zone, now)
    if relative is not None:
        return relative
    text = render_time(value, name, zone, strict=True)
    if is_keyword(text):
        raise InputError(f"{name} must be a date, a timestamp or a relative date, got {value!r}")
    return parse_timestamp(text, name)


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


def parse_shard(shard: object) -> tuple[int, int] | None:
    """``"2/4"`` or ``(2, 4)`` as ``(2, 4)``; None stays None.

    Raises:
        InputError: anything else, or ``i`` outside 1 to ``n``.

    Example:
        >>> parse_shard("2/4")
        (2, 4)
    """
    if shard is None:
        return None
    parts: Any = shard.split("/") if isinstance(shard, str) else shard
    try:
        i, n = (int(str(p).strip()) for p in parts)
    except (TypeError, ValueError):
        raise InputError(f"shard must look like i/n (e.g. 2/4), got {shard!r}") from None
    if not 1 <= i <= n:
        raise InputError(f"shard must be i/n with 1 <= i <= n, got {i}/{n}")
    return i, n


def _inventory(inventory: object, msisdn: object, account_id: str | None) -> tuple[Inventory, str]:
    from ..inventory.model import Inventory

    if (inventory is None) == (msisdn is None):
        raise InputError(
            "give inventory= (er.Inventory: every device, its site, eNodeB and life) or "
            "msisdn= (a partial list of subscribers), not both or neither"
        )
    if msisdn is not None:
        values = [msisdn] if isinstance(msisdn, str | int) else msisdn
        if not isinstance(values, Iterable):
            raise InputError(f"msisdn must be a list of MSISDNs, got {type(msisdn).__name__}")
        inventory = Inventory.from_msisdns(values, account_id)
    if not isinstance(inventory, Inventory):
        raise InputError(f"inventory must be an er.Inventory, got {type(inventory).__name__}")
    account = account_id if account_id is not None else inventory.account_id
    if not isinstance(account, str) or not account.strip():
        raise InputError("account_id must be the account's id (a non-empty text)")
    if inventory.account_id is not None and inventory.account_id != account:
        raise InputError(
            f"account_id {account!r} is not the inventory's account ({inventory.account_id!r})"
        )
    return inventory, account


def health(
    client: ReportingClient,
    *,
    inventory: Inventory | None = None,
    msisdn: Iterable[str | int] | str | int | None = None,
    account_id: str | None = None,
    start: TimeLike,
    end: TimeLike,
    tz: str | tzinfo | None = None,
    history: timedelta = DEFAULT_HISTORY,
    site_reports: bool | None = None,
    shard: tuple[int, int] | str | None = None,
) -> pd.DataFrame:
    """Flag what is wrong with an account's sites, eNodeBs and subscribers over ``[start, end)``.

    Every subject is judged against its own history per local hour of day, weekdays and
    weekends apart, and only from what is known: a SIM outside its active life is never
    flagged, a site or eNodeB is judged from its own report or from all of its active devices
    (a partial list says from how many it judged, and never rates it ``high``), and maintenance
    windows take their hours out. Simultaneous outages roll up into episodes per eNodeB or
    site. Kinds: ``site_dark``, ``enodeb_dark``, ``device_offline``, ``usage_drop``,
    ``usage_spike``, ``sim_idle`` (docs: "Health flags").

    Pulls, through ``client`` (its windows, cache and request budget), in chunks so memory stays
    small: one hourly report per subscriber from the UTC midnight ``history`` before ``start``
    to the hour holding ``end`` (whole days and hours, which the cache keeps); the account's SIM
    counts per day (one request); and, for a partial inventory, each site's own hourly report
    (one request per site).

    Args:
        client: a v1 :class:`~edgereports.ReportingClient`.
        inventory: the account's devices (:class:`~edgereports.Inventory`).
        msisdn: instead, the subscribers to check: a partial inventory (sites, eNodeBs and
            lives learnt from the service's answers), which the flags say they were judged from.
        account_id: the account (default: the inventory's).
        start: the first instant looked at (date, timestamp or relative date such as ``7d``).
        end: the end (exclusive); hours after the service's present are not judged.
        tz: the zone of hour of day and weekends (default: the offset of ``start``, else UTC).
        history: how far back before ``start`` the baselines are learnt (at least 7 days).
        site_reports: pull each site's own report (default: when the inventory is partial).
        shard: judge one shard of the account's sites, ``(i, n)`` or ``"i/n"``; :func:`merge`
            puts the shards' flags together.

    Returns:
        One row per flag: ``kind``, ``subject`` (a customer site id, an eNodeB's IP address or
        an MSISDN), ``start``, ``end`` (UTC, whole hours; a flag still open at the end of the
        data ends there), ``severity`` (``high``, ``medium`` or ``low``), ``evidence`` (one
        line of numbers, naming the history it learnt from) and ``episode`` (the id of the
        outage episode it belongs to, or null), ordered by start, kind and subject.
        ``df.attrs`` holds ``range``, ``zone``, ``history_start``, ``history``, ``judged_until``,
        ``inventory`` (source, complete, subscribers), ``subjects``, ``sites``, ``bases`` (what
        each site is judged dark from), ``episodes``, ``deactivated``, ``unjudged``,
        ``maintenance``, ``suppressed``, ``shard`` and ``reports`` (the provenance of each
        report pulled).

    Raises:
        InputError: a bad argument (before any request).
        EdgeReportsError: the pull failed (see :meth:`ReportingClient.fetch`).

    Example:
        >>> flags = er.health(client, msisdn=numbers, account_id=acct, start="7d", end="today")
        >>> list(flags.columns)
        ['kind', 'subject', 'start', 'end', 'severity', 'evidence', 'episode']
        >>> flags.attrs["inventory"]["complete"]  # msisdn= is a partial list
        False
    """
    asked = ask(client, inventory=inventory, msisdn=msisdn, account_id=account_id,
                start=start, end=end, tz=tz, history=history, site_reports=site_reports,
                shard=shard)  # fmt: skip
    from .run import run

    return run(client, asked.inventory, asked.whole, asked.account, asked.span, asked.zone,
               asked.site_reports, asked.shard)  # fmt: skip


@dataclass(frozen=True)
class Asked:
    """A judgement's checked arguments (what :func:`ask` returns).

    Attributes:
        inventory: the subscribers judged (one shard's, when asked).
        whole: the whole inventory (its lives explain the SIM counts).
        account: the account.
        span: the history's first hour (a UTC midnight), the range's start and its end.
        zone: the zone of hour classes.
        site_reports: whether each site's own report is pulled.
        shard: ``"i/n"``, or None.
    """

    inventory: Inventory
    whole: Inventory
    account: str
    span: tuple[datetime, datetime, datetime]
    zone: tzinfo
    site_reports: bool
    shard: str | None


def ask(
    client: ReportingClient,
    *,
    inventory: Inventory | None,
    msisdn: Iterable[str | int] | str | int | None,
    account_id: str | None,
    start: TimeLike,
    end: TimeLike,
    tz: str | tzinfo | None,
    history: timedelta = DEFAULT_HISTORY,
    site_reports: bool | None = None,
    shard: tuple[int, int] | str | None = None,
    what: str = "er.health",
) -> Asked:
    """Check the arguments of a judgement (:func:`health`'s) and resolve the range, before any
    request but the service's clock (for relative dates); ``what`` names the caller in
    messages.

    Raises:
        InputError: a bad argument.
    """
    inv, account = _inventory(inventory, msisdn, account_id)
    if not isinstance(history, timedelta) or history < timedelta(days=7):
        raise InputError(f"history must be a timedelta of at least 7 days, got {history!r}")
    if site_reports is not None and not isinstance(site_reports, bool):
        raise InputError(f"site_reports must be True, False or None, got {site_reports!r}")
    parts = parse_shard(shard)
    judged_inv = inv.shard(*parts) if parts is not None else inv
    if getattr(client, "api_version", None) != "v1":
        raise InputError(f"{what} needs a v1 ReportingClient (er.ReportingClient(...))")
    zone = parse_tz(tz) if tz is not None else None
    guess = zone or _zone_of(start)
    needs_now = any(resolve_relative(v, UTC) is not None for v in (start, end))
    now = client.service_now() if needs_now else None
    t0 = _when(start, "start", guess, now)
    t1 = _when(end, "end", guess, now)
    if t1 <= t0:
        raise InputError(f"end ({t1.isoformat()}) must be after start ({t0.isoformat()})")
    zone = zone or t0.tzinfo or UTC
    first = floor(t0 - history, BUCKETS["DAY"])
    pull_reports = not judged_inv.complete if site_reports is None else site_reports
    shard_name = None if parts is None else f"{parts[0]}/{parts[1]}"
    return Asked(judged_inv, inv, account, (first, t0, t1), zone, pull_reports, shard_name)
