"""Benchmark of the request budget against the sandbox: a known limit, a burst of 429s, random 429s.

Three figures, each against a baseline measured in the same run, the sandbox in a process of its
own (as a service would be: in this process its request threads would share the interpreter lock
with the client's):

1. ``budget``: the sandbox answers 429 above N requests per second per key (a sliding one-second
   window, no burst). A 500-request pull (500 one-day windows, ``max_workers=8``) runs with
   ``rate_limit=0.9 N``. Printed: the 429s the sandbox answered (target 0) and the elapsed time
   over the budget's own pace, 500 / (0.9 N) seconds (target within 15%, at most 1.15).
2. ``recovery``: a client pulls 40 one-day windows until its speed is known (the median of five
   pulls: its clean speed); then, while the same pull runs again and again, ten requests in a
   row are answered 429 (queued faults, the ``Retry-After`` of ``--retry-after``). Printed, for
   a client with no ``rate_limit`` and one with a ``rate_limit`` (100/s): the time from the last
   429 until the client's pace is back at its clean value (no pace; the ``rate_limit``) for
   good, and until a pull that runs at the clean speed (at most 1.25 times the clean pull)
   starts; and the first pull that starts after the last 429 over the clean pull.
3. ``random``: the same pull of ``--parts`` one-day windows (16 workers, ``--latency`` seconds per
   answer, a service's round trip) on a clean sandbox and on one that answers 5% of requests 429
   at random (``--retry-after`` seconds). Printed: the faulty pull over the clean one (target at
   most 1.5), and the same faulty pull by a client with no pacer at all over the clean one: what
   waiting out each ``Retry-After`` costs by itself, the floor the pacer adds to.

Figures are printed; nothing here is a test.

Usage::

    python benchmarks/bench_rate_limit.py                  # all three: about a minute
    python benchmarks/bench_rate_limit.py --only random --repeat 3
    python benchmarks/bench_rate_limit.py --only budget --n 100
"""

from __future__ import annotations

import argparse
import contextlib
import re
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import requests

from edgereports import presets
from edgereports.query import Report
from edgereports.reporting import ReportingClient
from edgereports.sandbox import DEFAULT_API_KEY

CLOCK = "2022-07-08T10:00:00+05:30"
END = datetime(2022, 7, 8, tzinfo=UTC)
KEY = DEFAULT_API_KEY
BUDGET_REQUESTS = 500
RECOVERY_PARTS = 40
BURST = 10
WINDOW = timedelta(days=1)


@contextlib.contextmanager
def sandbox(*options: str) -> Iterator[tuple[str, str]]:
    """``python -m edgereports.sandbox`` on a free port: its URL and primary account."""
    command = [sys.executable, "-m", "edgereports.sandbox", "--port", "0", "--now", CLOCK]
    command += ["--duration", "900", *options]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        url = account = ""
        for line in proc.stdout:
            if m := re.match(r"\s*base URL:\s*(\S+)", line):
                url = m[1]
            if m := re.match(r"\s*account id:\s*(\S+)", line):
                account = m[1]
            if line.startswith(("Stopping", "Press")):
                break
        try:
            yield url, account
        finally:
            proc.terminate()
            proc.wait(30)


def pull_of(account: str, days: int) -> Report:
    """``days`` one-day windows of DAY buckets: one request each."""
    return presets.time_usage_enterprise(
        account_id=account, start=END - timedelta(days=days), end=END
    )


def timed(client: ReportingClient, report: Report) -> float:
    started = time.perf_counter()
    client.fetch(report, window=WINDOW)
    return time.perf_counter() - started


def admin(url: str, path: str, body: dict[str, Any] | None = None) -> Any:
    if body is None:
        answer = requests.get(f"{url}/sandbox/{path}", timeout=30)
    else:
        answer = requests.post(f"{url}/sandbox/{path}", json=body, timeout=30)
    answer.raise_for_status()
    return answer.json()


def budget(n: int, workers: int) -> None:
    """A pull at 0.9 N against the rate-limit mode at N."""
    rate = 0.9 * n
    with sandbox("--requests-per-second", str(n)) as (url, account):
        report = pull_of(account, BUDGET_REQUESTS)
        # imports (pandas, the normalizer) out of the timing; its request leaves the window
        ReportingClient(KEY, url, progress=False).fetch(pull_of(account, 1))
        time.sleep(1.0)
        admin(url, "reset", {})
        with ReportingClient(
            KEY, url, max_workers=workers, progress=False, rate_limit=rate
        ) as client:
            elapsed = timed(client, report)
        sent = admin(url, "requests")["counts"]["reporting"]
        refused = admin(url, "rate-limit")["rate_limited"]
    pace = BUDGET_REQUESTS / rate
    print(f"budget: sandbox at {n}/s per key, client rate_limit={rate:g}/s, {workers} workers")
    print(f"  {sent} requests sent, {elapsed:.2f} s; 429s from the sandbox: {refused} (target 0)")
    print(f"  elapsed / (500 / (0.9 N)) = {elapsed:.2f} / {pace:.2f} = {elapsed / pace:.3f}")
    print("  (target: within 15%, at most 1.15)")


class PaceWatch:
    """Samples a client's pace every few milliseconds, and notes when its 429s come."""

    def __init__(self, client: ReportingClient) -> None:
        pacer = client._http.pacer
        assert pacer is not None
        self._read: Callable[[], float | None] = lambda: pacer.per_second
        refused = pacer.refused

        def noted(retry_after: float) -> None:  # on this pacer only: the time of each 429
            self.refusals.append(time.perf_counter())
            refused(retry_after)

        pacer.refused = noted  # type: ignore[method-assign]
        self.refusals: list[float] = []
        self.samples: list[tuple[float, float | None]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PaceWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.perf_counter(), self._read()))
            time.sleep(0.002)

    def back_at(self, clean: float | None, since: float) -> float | None:
        """Seconds from ``since`` until the pace is ``clean`` for good (None: never seen)."""
        last_off = since
        for at, pace in self.samples:
            if at >= since and pace != clean:
                last_off = at
        after = [at for at, pace in self.samples if at > last_off and pace == clean]
        return after[0] - since if after else None


def recovery(retry_after: float, workers: int) -> None:
    """A burst of 429s in the middle of a run of equal pulls."""
    with sandbox() as (url, account):
        report = pull_of(account, RECOVERY_PARTS)
        ReportingClient(KEY, url, progress=False).fetch(pull_of(account, 1))  # imports
        for rate_limit in (None, 100.0):
            options: dict[str, Any] = {"max_workers": workers, "progress": False}
            with ReportingClient(KEY, url, rate_limit=rate_limit, **options) as client:
                clean = statistics.median(timed(client, report) for _ in range(5))
                with PaceWatch(client) as watch:
                    admin(url, "faults", {"enqueue": [f"429;retry-after={retry_after:g}"] * BURST})
                    pulls = []  # (start, seconds) of each pull
                    began = time.perf_counter()
                    while time.perf_counter() - began < 30 and (
                        not watch.refusals or time.perf_counter() - watch.refusals[-1] < 8
                    ):
                        pulls.append((time.perf_counter(), timed(client, report)))
                last = watch.refusals[-1]
                back = watch.back_at(rate_limit, last)
            after = [(start, took) for start, took in pulls if start > last]
            fast = next((start - last for start, took in after if took <= 1.25 * clean), None)
            met = [took for start, took in pulls if start <= last]
            label = "no rate_limit" if rate_limit is None else f"rate_limit={rate_limit:g}/s"
            print(
                f"recovery ({label}, {workers} workers): {len(watch.refusals)} 429s in a row "
                f"(Retry-After {retry_after:g} s) during a run of {RECOVERY_PARTS}-window pulls"
            )
            print(
                f"  clean pull {clean:.3f} s; the pull(s) that met the burst "
                f"{', '.join(f'{t:.2f}' for t in met)} s; the next one {after[0][1]:.3f} s"
            )
            print(f"  the next pull after the burst / clean pull = {after[0][1] / clean:.2f}")
            shown = "not within the run" if back is None else f"{back:.2f} s"
            print(f"  from the last 429: pace back at its clean value after {shown},")
            shown = "not within the run" if fast is None else f"{fast:.2f} s"
            print(f"  a pull at the clean speed (at most 1.25x) starting after {shown}")
            print("  (target: within seconds)")


def random_429s(
    parts: int, latency: float, retry_after: float, share: float, seed: int, repeat: int
) -> None:
    """``repeat`` runs of :func:`random_once` (each in fresh sandboxes)."""
    for _ in range(repeat):
        random_once(parts, latency, retry_after, share, seed)


def random_once(parts: int, latency: float, retry_after: float, share: float, seed: int) -> None:
    """One pull on a clean sandbox and on one answering ``share`` of requests 429."""
    workers = 16
    common = ("--latency", f"{latency:g}")
    faulty = [*common, "--rate-limit-rate", f"{share:g}", "--retry-after", f"{retry_after:g}"]
    faulty += ["--fault-seed", str(seed)]
    with (
        sandbox(*common) as (clean_url, account),
        sandbox(*faulty) as (faulty_url, _),
        sandbox(*faulty) as (bare_url, _),  # the same fault draws, for the client with no pacer
    ):
        report = pull_of(account, parts)
        ReportingClient(KEY, clean_url, progress=False).fetch(pull_of(account, 1))  # imports
        options: dict[str, Any] = {"max_workers": workers, "progress": False}
        with ReportingClient(KEY, clean_url, **options) as client:
            clean = timed(client, report)
        with ReportingClient(KEY, faulty_url, **options) as client:
            paced = timed(client, report)
        refused = admin(faulty_url, "faults")["counts"].get("429", 0)
        with ReportingClient(KEY, bare_url, **options) as client:
            client._http.pacer = None  # no pacer: each refused request waits its Retry-After
            bare = timed(client, report)
        refused_bare = admin(bare_url, "faults")["counts"].get("429", 0)
    print(
        f"random 429s: {parts} one-day windows, {workers} workers, {latency:g} s per answer, "
        f"{share:.0%} of requests 429 (Retry-After {retry_after:g} s)"
    )
    print(f"  clean pull {clean:.2f} s; with 429s {paced:.2f} s ({refused} 429s)")
    print(f"  pull with 429s / clean pull = {paced / clean:.2f} (target: at most 1.5)")
    print(
        f"  with no pacer at all: {bare:.2f} s ({refused_bare} 429s), / clean pull = "
        f"{bare / clean:.2f} (the cost of the Retry-After waits themselves)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("budget", "recovery", "random"), action="append")
    parser.add_argument("--n", type=int, default=50, help="budget: the sandbox's limit per second")
    parser.add_argument("--workers", type=int, default=8, help="budget, recovery: max_workers")
    parser.add_argument("--parts", type=int, default=1000, help="random: one-day windows")
    parser.add_argument("--latency", type=float, default=0.1, help="random: seconds per answer")
    parser.add_argument("--share", type=float, default=0.05, help="random: share of 429s")
    parser.add_argument("--retry-after", type=float, default=0.0, help="the 429s' Retry-After")
    parser.add_argument("--seed", type=int, default=1, help="random: the fault draws' seed")
    parser.add_argument("--repeat", type=int, default=1, help="random: runs of the three pulls")
    args = parser.parse_args()
    only = set(args.only or ("budget", "recovery", "random"))
    if "budget" in only:
        budget(args.n, args.workers)
    if "recovery" in only:
        recovery(args.retry_after, args.workers)
    if "random" in only:
        random_429s(args.parts, args.latency, args.retry_after, args.share, args.seed, args.repeat)


if __name__ == "__main__":
    main()
