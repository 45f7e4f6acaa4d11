"""``er.availability``: check the arguments, judge the hours as health does, count the states."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta, tzinfo
from typing import TYPE_CHECKING

from ..errors import InputError
from ..health.api import DEFAULT_HISTORY, ask
from ..query.times import TimeLike
from .columns import BY, GRANULARITIES

if TYPE_CHECKING:
    import pandas as pd

    from ..inventory.model import Inventory
    from ..reporting import ReportingClient

__all__ = ["availability", "check_by", "check_granularity"]

#: What ``by`` also takes, for the one it means.
_ALIASES = {"site": "customer_site_id", "enodeb_ip": "enodeb", "subscriber": "msisdn"}


def check_by(by: object) -> str:
    """``by`` as the ledger names it: ``customer_site_id``, ``enodeb`` or ``msisdn`` (``site``,
    ``enodeb_ip`` and ``subscriber`` are taken for them).

    Raises:
        InputError: anything else (naming the allowed values).

    Example:
        >>> check_by("site")
        'customer_site_id'
    """
    name = _ALIASES.get(str(by).strip().lower(), str(by).strip().lower())
    if not isinstance(by, str) or name not in BY:
        raise InputError(f"by must be one of {', '.join(BY)} (or site), got {by!r}")
    return name


def check_granularity(granularity: object) -> str | None:
    """``granularity`` in upper case: ``HOUR``, ``DAY`` or ``MONTH``, or None (the whole range).

    Raises:
        InputError: anything else (naming the allowed values).
    """
    if granularity is None:
        return None
    name = granularity.strip().upper() if isinstance(granularity, str) else None
    if name not in GRANULARITIES:
        allowed = ", ".join(str(g) for g in GRANULARITIES)
        raise InputError(f"granularity must be one of {allowed}, got {granularity!r}")
    return name


def availability(
    client: ReportingClient,
    *,
    inventory: Inventory | None = None,
    msisdn: Iterable[str | int] | str | int | None = None,
    account_id: str | None = None,
    start: TimeLike,
    end: TimeLike,
    by: str = "customer_site_id",
    granularity: str | None = "DAY",
    tz: str | tzinfo | None = None,
    history: timedelta = DEFAULT_HISTORY,
) -> pd.DataFrame:
    """An availability ledger: per site, eNodeB or subscriber and bucket, its hours counted as
    available, unavailable, excluded (maintenance, inactive) and unknown.

    The hours are whole UTC hours over ``[start, end)`` up to the service's present, judged as
    :func:`~edgereports.health` judges them (docs: "Availability"): an hour with time online is
    available; a silent hour is unavailable only when health finds an outage there (a
    ``site_dark``, ``enodeb_dark`` or ``device_offline`` covering every active device: a silence
    its own history makes unlikely), else unknown, since an idle device and a dead one look
    alike; maintenance windows and hours outside the SIMs' lives are excluded.
    ``availability_pct`` is ``100 * available / (available + unavailable)``: the unknown hours
    are left out, not guessed.

    Pulls what :func:`~edgereports.health` pulls, through ``client``: one hourly report per
    subscriber (with ``history`` before ``start``), the account's SIM counts, and with a partial
    list each site's own report.

    Args:
        client: a v1 :class:`~edgereports.ReportingClient`.
        inventory: the account's devices and maintenance windows
            (:class:`~edgereports.Inventory`).
        msisdn: instead, the subscribers to count: a partial list (sites judged from their own
            report, lives from the service's evidence), which the ledger says in ``basis``.
        account_id: the account (default: the inventory's).
        start: the first instant (a date, a timestamp or a relative date such as ``30d``).
        end: the end (exclusive).
        by: ``"customer_site_id"`` (or ``"site"``), ``"enodeb"`` or ``"msisdn"``.
        granularity: ``"DAY"`` (UTC days), ``"MONTH"`` (UTC calendar months), ``"HOUR"``, or
            None: one row per subject for the whole range.
        tz: the zone of the hour classes health learns from (default: the offset of
            ``start``); buckets stay UTC.
        history: how far back before ``start`` the subjects' normal is learnt (at least 7 days).

    Returns:
        One row per subject and bucket, by subject then bucket: ``time_stamp`` (the bucket's
        start, UTC), ``account_id``, the subject (``customer_site_id``, ``enodeb_ip`` or
        ``msisdn``, with where it is), ``hours`` (counted: the bucket's hours inside the range
        and up to the service's present), ``available_hours``, ``unavailable_hours``,
        ``excluded_hours`` (``maintenance_hours`` plus ``inactive_hours``), ``unknown_hours``,
        ``availability_pct`` (null when no hour is decided) and ``basis``. ``df.attrs`` holds
        ``rule``, ``by``, ``granularity``, ``range``, ``zone``, ``history``, ``judged_until``,
        ``inventory``, ``maintenance`` (the windows that touch the hours), ``outages`` (the
        flags whose hours are unavailable), ``unjudged``, ``deactivated`` and ``reports`` (the
        provenance of each report pulled).

    Raises:
        InputError: a bad argument (before any request).
        EdgeReportsError: the pull failed (see :meth:`ReportingClient.fetch`).

    Example:
        >>> ledger = er.availability(client, msisdn=numbers, account_id=acct, start="7d",
        ...                          end="today", by="site", granularity=None)
        >>> ledger.attrs["by"], list(ledger.columns[:3])
        ('customer_site_id', ['time_stamp', 'account_id', 'customer_site_id'])
        >>> ledger.attrs["inventory"]["complete"]  # msisdn= is a partial list
        False
    """
    by = check_by(by)
    grain = check_granularity(granularity)
    asked = ask(client, inventory=inventory, msisdn=msisdn, account_id=account_id, start=start,
                end=end, tz=tz, history=history, what="er.availability")  # fmt: skip
    from .ledger import ledger

    return ledger(client, asked, by, grain)
