"""Benchmark of the shared request budget against the sandbox's rate-limit mode (loopback).

The sandbox answers 429 above N requests per second per key (a sliding one-second window, no
burst). A 500-request pull (500 one-day windows of DAY buckets, ``max_workers=8``) runs with
``rate_limit=0.9 N``. Printed: the 429s the sandbox answered (target 0) and the elapsed time
over the budget's own pace, 500 / (0.9 N) seconds (target within 15%, i.e. at most 1.15).

By default the sandbox runs in a process of its own, as a service would: in this process its
request threads would share the interpreter lock with the client's eight, and a stall of the
lock longer than the budget's headroom (0.1 s: 10% of a second) bunches requests that were sent
evenly. ``--in-process`` runs it here, to see that effect.

Figures are printed; nothing here is a test.

Usage::

    python benchmarks/bench_rate_limit.py            # N = 50: about 11 s
    python benchmarks/bench_rate_limit.py --n 100    # about 6 s
    python benchmarks/bench_rate_limit.py --in-process
"""

from __future__ import annotations

import argparse
import contextlib
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import requests

from edgereports import presets
from edgereports.reporting import ReportingClient
from edgereports.sandbox import DEFAULT_API_KEY, Limits, serve

CLOCK = "2022-07-08T10:00:00+05:30"
REQUESTS = 500


@contextlib.contextmanager
def sandbox_process(n: int) -> Iterator[tuple[str, str]]:
    """``python -m edgereports.sandbox`` on a free port: its URL and primary account."""
    command = [sys.executable, "-m", "edgereports.sandbox", "--port", "0", "--now", CLOCK]
    command += ["--requests-per-second", str(n), "--duration", "600"]
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


@contextlib.contextmanager
def sandbox_here(n: int) -> Iterator[tuple[str, str]]:
    """The sandbox in this process."""
    with serve(seed=0, clock=CLOCK, limits=Limits(requests_per_second=n)) as sb:
        yield sb.base_url, sb.account_id


def run(n: int, workers: int, in_process: bool) -> None:
    rate = 0.9 * n
    end = datetime(2022, 7, 8, tzinfo=UTC)
    start = end - timedelta(days=REQUESTS)
    key = DEFAULT_API_KEY
    with (sandbox_here if in_process else sandbox_process)(n) as (url, account):
        report = presets.time_usage_enterprise(account_id=account, start=start, end=end)
        # imports (pandas, the normalizer) out of the timing; its request leaves the window
        ReportingClient(key, url, progress=False).fetch(report)
        time.sleep(1.0)
        requests.post(f"{url}/sandbox/reset", timeout=30).raise_for_status()
        with ReportingClient(
            key, url, max_workers=workers, progress=False, rate_limit=rate
        ) as client:
            started = time.perf_counter()
            frame = client.fetch(report, window=timedelta(days=1))
            elapsed = time.perf_counter() - started
        sent = requests.get(f"{url}/sandbox/requests", timeout=30).json()["counts"]["reporting"]
        refused = requests.get(f"{url}/sandbox/rate-limit", timeout=30).json()["rate_limited"]
    pace = REQUESTS / rate
    where = "in this process" if in_process else "in its own process"
    print(
        f"rate limit: sandbox ({where}) at {n}/s per key, client rate_limit={rate:g}/s, "
        f"{workers} workers"
    )
    print(f"  {sent} requests sent, {len(frame)} rows, {elapsed:.2f} s")
    print(f"  429s from the sandbox: {refused} (target 0)")
    print(f"  elapsed / (500 / (0.9 N)) = {elapsed:.2f} / {pace:.2f} = {elapsed / pace:.3f}")
    print("  (target: within 15%, at most 1.15)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50, help="the sandbox's limit per second")
    parser.add_argument("--workers", type=int, default=8, help="the client's max_workers")
    parser.add_argument("--in-process", action="store_true", help="run the sandbox in this process")
    args = parser.parse_args()
    run(args.n, args.workers, args.in_process)


if __name__ == "__main__":
    main()
