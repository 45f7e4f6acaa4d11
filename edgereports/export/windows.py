"""What every destination's run does alike: plan a report, fetch its windows, label them."""

from __future__ import annotations

import dataclasses
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..errors import AuthError, EdgeReportsError
from ..progress import open_progress
from .client import Fetcher, window_weight
from .estimate import priced
from .fanout import Churn, Values, backfill_windows, churn, window_report
from .plan import ExportWindow, ReportPlan, RunScope
from .reports import ReportJob
from .summary import WindowFailure

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Fetched",
    "contiguous_end",
    "fetch_windows",
    "plan_report",
    "window_metadata",
]


def plan_report(
    report: ReportJob,
    scope: RunScope,
    watermark: datetime | None,
    held: Values | None,
    retired: Values,
    damaged: Sequence[date] = (),
) -> tuple[ReportPlan, Churn, ReportJob]:
    """The priced plan of ``report`` in this run, how its fan-out values changed since the
    ``held`` ones were written, and the report narrowed to the added values.

    An incremental run backfills the added values alone, from the report's start to where its
    own windows begin; a first run, a full refresh and a unit fetch every value anyway.
    """
    plan = scope.plan(report, watermark, damaged)
    change = churn(report, held, retired)
    narrowed = report
    if change.added and watermark is not None and scope.unit is None and not scope.full_refresh:
        narrowed, windows = backfill_windows(report, change.added, plan.begin, scope.now)
        added = sum(len(v) for v in change.added.values())
        plan = dataclasses.replace(plan, backfill=windows, added=added)
    return priced(report, plan, narrowed), change, narrowed


def window_metadata(report: ReportJob, window: ExportWindow) -> dict[str, Any]:
    """The facts stored with a window's data: the report, the request sent (no secret; an
    availability table's definition), the API version it was sent to (its stamps' meaning),
    the window."""
    span = [window.start.isoformat(), window.end.isoformat()]
    if report.ledger is not None:  # no request of its own: the ledger's rule and its DAYs
        return {"report": report.name, "request": report.definition(), "api_version": "v1",
                "window": span}  # fmt: skip
    sent = window_report(report, window)
    return {
        "report": report.name,
        "request": sent.for_window(window.start, window.end).to_request(),
        "api_version": sent.report.api_version,
        "window": span,
    }


def contiguous_end(mark: datetime, ranges: Iterable[tuple[datetime, datetime]]) -> datetime:
    """``mark`` moved over the ``(start, end)`` ranges written whole, as far as they chain."""
    whole, moved = list(ranges), True
    while moved:
        moved = False
        for start, end in whole:
            if start <= mark < end:
                mark, moved = end, True
    return mark


@dataclass
class Fetched:
    """One window's fetch: its frame, or the error (``skipped``: not sent after an AuthError)."""

    index: int
    frame: pd.DataFrame | None = None
    error: BaseException | None = None
    seconds: float = 0.0
    skipped: bool = False

    def failure(
        self, report: str, window: ExportWindow, secrets: Sequence[str] = ()
    ) -> WindowFailure:
        """The window's failure, its message redacted (and ``secrets``)."""
        error = self.error or EdgeReportsError("the client returned no frame")
        failure = WindowFailure.of(report, window, error, secrets)
        if not self.skipped:
            return failure
        text = f"not attempted after {failure.kind}: {failure.message}"
        return WindowFailure(report, window, "Skipped", text, self.error)


def fetch_windows(
    windows: Sequence[tuple[int, ReportJob, ExportWindow]],
    client: Fetcher,
    workers: int,
    progress: bool | None,
    done: Callable[[Fetched], None],
) -> None:
    """Fetch ``windows`` (``(group, report, window)``: a progress bar per group) and hand each
    to ``done`` in this thread as it arrives, to be written.

    Memory stays bounded: a window's fetch fans out into up to ``window_weight`` concurrent
    requests, and the requests in flight (and the frames held) stay within ``workers``; a
    window that takes them all is fetched in this thread. After an AuthError no other window
    is sent: the rest are handed over skipped. A report of another API version than the
    client's is fetched through a client of its version (``client.for_version``).
    """
    counts = Counter(group for group, _, _ in windows)
    names = {group: report.name for group, report, _ in windows}
    bars = {
        g: open_progress(progress, n, names[g], unit="window", min_items=1, position=i)
        for i, (g, n) in enumerate(counts.items())
    }
    weights: dict[int, int] = {}
    for _, report, _ in windows:
        if id(report) not in weights:
            weights[id(report)] = window_weight(report, workers)

    def fetch(index: int) -> Fetched:
        _, report, window = windows[index]
        sent = window_report(report, window)  # a shard's values only
        version = sent.report.api_version
        fetcher = client
        if getattr(client, "api_version", version) != version:
            fetcher = client.for_version(version)  # type: ignore[attr-defined]
        started = time.monotonic()
        try:
            if report.ledger is not None:  # an availability table: computed, not fetched
                frame = report.ledger.frame(fetcher, window.start, window.end)  # type: ignore[arg-type]
            else:
                frame = fetcher.fetch(
                    sent.for_window(window.start, window.end),
                    window=timedelta(days=sent.window_days),
                )
        except EdgeReportsError as exc:
            return Fetched(index, error=exc, seconds=time.monotonic() - started)
        return Fetched(index, frame=frame, seconds=time.monotonic() - started)

    def hand(got: Fetched) -> AuthError | None:
        bars[windows[got.index][0]].update(1)
        done(got)
        return got.error if isinstance(got.error, AuthError) else None

    queue = deque(range(len(windows)))
    pending: dict[Future[Fetched], int] = {}
    aborted: AuthError | None = None
    busy = 0
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="export") as pool:
        try:
            while True:
                while queue and aborted is None:
                    weight = weights[id(windows[queue[0]][1])]
                    if pending and busy + weight > workers:
                        break
                    index = queue.popleft()
                    if not pending and weight >= workers:
                        aborted = hand(fetch(index))
                        continue
                    busy += weight
                    pending[pool.submit(fetch, index)] = index
                if not pending:
                    break
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    busy -= weights[id(windows[pending.pop(future)][1])]
                    aborted = hand(future.result()) or aborted
                del finished  # the frames go once written
            for index in queue:
                done(Fetched(index, error=aborted, skipped=True))
        finally:
            for bar in bars.values():
                bar.close()
