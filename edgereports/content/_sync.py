"""Waiting for onboarded content to sync to the edge, with a progress bar."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..errors import InputError, SyncTimeout, redact
from ..progress import open_progress

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["wait_until_synced"]


def wait_until_synced(
    list_records: Callable[[], pd.DataFrame],
    ids: Sequence[str],
    *,
    timeout: float | timedelta,
    poll: float,
    progress: bool | None,
) -> pd.DataFrame:
    """``ContentClient.wait_until_synced`` for checked ``ids``: call ``list_records`` (the
    get-all frame) every ``poll`` seconds until every id is synced; returns their final
    records in the order of ``ids``."""
    limit = (
        timeout.total_seconds() if isinstance(timeout, timedelta) else _positive(timeout, "timeout")
    )
    if limit <= 0:
        raise InputError(f"timeout must be a positive number of seconds, got {timeout}")
    interval = _positive(poll, "poll")
    deadline = time.monotonic() + limit
    bar = open_progress(progress, len(ids), "syncing", unit="content", min_items=1)
    shown = 0
    try:
        while True:
            records = list_records()
            latest = records[records["content_id"].isin(ids)].drop_duplicates(
                "content_id", keep="last"
            )
            status = dict(zip(latest["content_id"], latest["content_upload_status"], strict=True))
            done = [i for i in ids if _synced(status.get(i))]
            bar.update(len(done) - shown)
            shown = len(done)
            if len(done) == len(ids):
                order = {cid: n for n, cid in enumerate(ids)}
                out = latest.sort_values("content_id", key=lambda s: s.map(order))
                return out.reset_index(drop=True)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _timeout(ids, done, latest, limit)
            time.sleep(min(interval, remaining))
    finally:
        bar.close()


def _synced(status: object) -> bool:
    return isinstance(status, str) and status.strip().lower() == "success"


def _positive(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise InputError(f"{what} must be a positive number of seconds, got {value!r}")
    return float(value)


def _timeout(
    ids: Sequence[str], done: Sequence[str], latest: pd.DataFrame, limit: float
) -> SyncTimeout:
    rows: Mapping[str, Any] = {str(r["content_id"]): r for r in latest.to_dict("records")}
    pending = [i for i in ids if i not in done]
    described = []
    for cid in pending:
        row = rows.get(cid)
        if row is None:
            described.append(f"{cid} (not listed by get-all)")
        else:
            text = f"{row['content_upload_status']}: {row['content_status_message']}"
            described.append(f"{cid} ({redact(text)})")
    return SyncTimeout(
        f"{len(pending)} of {len(ids)} content(s) not synced after {limit:g} s: "
        + "; ".join(described),
        pending=pending,
    )
