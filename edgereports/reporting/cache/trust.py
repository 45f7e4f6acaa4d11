"""What the cache trusts: a key seen to work, and a present it can believe.

Access: cached rows are served only to a key seen to work for the account at the address. The
binding is a salted fingerprint of the key (see :meth:`.store.Store.fingerprint`), never the
key; a key not bound yet, or not seen working for a day (it may have been revoked since),
reads nothing until the service has answered it with a 2xx.

Finality: a chunk may be stored as final only under a present the cache can trust (see
:func:`final_chunks`).
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

import orjson

from .grid import Chunk
from .store import Store

__all__ = ["CLOCK_SKEW", "KeyBinding", "accounts_read", "final_chunks"]

#: How far the service's stated present may run ahead of the local clock and still be
#: trusted for finality.
CLOCK_SKEW = timedelta(minutes=5)


def final_chunks(
    run: list[Chunk],
    newest: datetime | None,
    bucket: timedelta,
    *,
    stated: datetime | None,
    local: datetime,
    horizon: timedelta,
    lag: timedelta = timedelta(0),
    skew: timedelta = CLOCK_SKEW,
) -> list[Chunk]:
    """The chunks of ``run`` that may be stored as final.

    Final needs a present the cache can trust: the service stated one (``stated``: a
    parseable ``Date`` on its latest answer), plausible (not ahead of the ``local`` clock by
    more than ``skew``, nor behind ``newest``, the start of the newest bucket the answer
    holds). The service's present is then its clock less its data ``lag``, or, when the
    answer stops before the end of ``run`` (contiguous, just fetched), the start of its newest
    bucket if earlier: that bucket holds the present the answer shows, so it is unfinished. A
    bucket is final when it ends at least ``horizon`` before that present, and a chunk when
    all its buckets are: when it ends by then. An answer with no rows makes nothing final.

    Example:
        >>> from datetime import UTC
        >>> day = (datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 1, 2, tzinfo=UTC))
        >>> now = datetime(2024, 1, 2, 5, tzinfo=UTC)
        >>> hour = timedelta(hours=1)
        >>> last = datetime(2024, 1, 1, 23, tzinfo=UTC)
        >>> ok = dict(local=now, horizon=3 * hour)
        >>> final_chunks([day], last, hour, stated=now, **ok) == [day]
        True
        >>> final_chunks([day], last - 5 * hour, hour, stated=now, **ok)  # short of its end
        []
        >>> final_chunks([day], last, hour, stated=now, lag=3 * hour, **ok)  # data lags
        []
        >>> next_day = (day[1], day[1] + 24 * hour)  # asked past the day, answered up to 23:00
        >>> final_chunks([day, next_day], last, hour, stated=now, **ok)
        []
        >>> final_chunks([day], last, hour, stated=None, **ok)  # no Date
        []
    """
    if stated is None or stated > local + skew:
        return []
    if newest is None or newest > stated:
        return []  # no rows to show a present, or a present behind the data served
    present = stated - lag
    if newest + bucket < run[-1][1]:  # the answer stops inside its newest bucket
        present = min(present, newest)
    bound = present - horizon
    return [c for c in run if c[1] <= bound]


def accounts_read(request: Mapping[str, Any]) -> Any:
    """What scopes the rows ``request`` reads: its ``account_id`` filters (a request for
    another account is another scope, whatever else it asks), or, for a request that names no
    account, all its filters.

    Example:
        >>> def req(account):
        ...     return {"dimension_filter_clauses": [{"filters": [
        ...         {"dimension_name": "account_id", "operator": "EXACT", "expressions": [account]},
        ...         {"dimension_name": "msisdn", "operator": "EXACT", "expressions": ["91"]}]}]}
        >>> accounts_read(req("A"))
        [{'dimension_name': 'account_id', 'operator': 'EXACT', 'expressions': ['A']}]
        >>> accounts_read(req("A")) != accounts_read(req("B"))
        True
    """
    clauses = request.get("dimension_filter_clauses") or []
    found: list[Any] = [
        f
        for clause in clauses
        for f in clause.get("filters") or []
        if f.get("dimension_name") == "account_id"
    ]
    if request.get("account_id") is not None:
        found.append({"account_id": request["account_id"]})
    return found or clauses


class KeyBinding:
    """The scopes a pull's key is bound to in one cache (thread-safe).

    Args:
        fingerprint: the key's salted fingerprint, or what computes it (called when first
            needed: a pull that reads nothing may leave it to the thread that records the key).
        record: records that the key worked in a scope (called with the scope and what gives
            the fingerprint; by default at once, by :meth:`.store.Store.see_key`).
    """

    def __init__(
        self,
        store: Store,
        fingerprint: str | Callable[[], str],
        service: str,
        api_version: str,
        record: Callable[[str, Callable[[], str]], None] | None = None,
    ) -> None:
        self.store = store
        self.record = record or (lambda scope, key: store.see_key(scope, key()))
        self._fingerprint = fingerprint
        self.service = service
        self.api_version = api_version
        #: held by the one part that fetches to prove a key not bound yet
        self.proving = threading.Lock()
        self._seen: set[str] = set()
        self._bound_now: set[str] = set()  # bound by an answer of this pull
        self._unseen: set[str] = set()  # not bound in the index when this pull asked
        self._lock = threading.Lock()

    def fingerprint(self) -> str:
        """The key's fingerprint (computed on first use)."""
        if callable(self._fingerprint):
            self._fingerprint = self._fingerprint()
        return self._fingerprint

    def scope(self, request: Mapping[str, Any]) -> str:
        """What a key is bound to: the service address, API version and the accounts
        ``request`` reads (see :func:`accounts_read`)."""
        text = orjson.dumps(
            [self.service, self.api_version, accounts_read(request)], option=orjson.OPT_SORT_KEYS
        )
        return hashlib.sha256(text).hexdigest()

    def bound(self, scope: str) -> bool:
        """The key has been seen to work in ``scope`` (by this cache, before this pull, or by
        an answer of this pull).

        The index is asked once per scope and pull: a key it does not know there stays
        unbound until an answer of this pull binds it (a key bound meanwhile by another
        process only makes this pull fetch what it could have read).
        """
        if scope in self._seen:
            return True
        if scope in self._unseen:
            return False
        try:
            seen = self.store.key_seen(scope, self.fingerprint())
        except sqlite3.Error:
            return False
        with self._lock:
            (self._seen if seen else self._unseen).add(scope)
        return seen

    def bind(self, scope: str) -> None:
        """The service answered the key in ``scope`` with a 2xx: bind it (once per pull)."""
        if scope in self._bound_now:
            return
        with self._lock:
            self._bound_now.add(scope)
        with contextlib.suppress(sqlite3.Error, OSError):
            self.record(scope, self.fingerprint)
        with self._lock:
            self._seen.add(scope)
