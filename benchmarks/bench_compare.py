"""Benchmark of ``fetch(report, compare="previous_period")`` against the local sandbox.

A week of DAY buckets for eight subscribers (eight fan-out requests per period) from a sandbox
that adds 20 ms of latency to every request, fetched three ways in the same run, interleaved:

- ``alone``: ``client.fetch(report)`` (the baseline);
- ``compare``: ``client.fetch(report, compare="previous_period")`` (both periods in one pull,
  then aligned);
- ``two``: ``client.fetch(report)`` then ``client.fetch(previous)``, one after the other (what
  a caller wrote by hand before), without the join.

The medians and the ratios ``compare / alone`` and ``compare / two`` are printed. Figures
only; nothing here is a test.

Usage::

    python benchmarks/bench_compare.py            # 15 rounds
    python benchmarks/bench_compare.py --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from edgereports import presets
from edgereports.reporting import ReportingClient
from edgereports.sandbox import FaultConfig, serve

CLOCK = "2022-07-08T10:00:00+05:30"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--latency", type=float, default=0.02, help="seconds per request")
    args = parser.parse_args()
    with serve(seed=0, clock=CLOCK, faults=FaultConfig(latency=args.latency)) as sb:
        msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:8]
        report = presets.time_usage_subscriber(
            account_id=sb.account_id, msisdn=msisdns, start="2022-07-01", end="2022-07-08"
        )
        previous = report.between("2022-06-24", "2022-07-01")
        with ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
            ways: dict[str, Callable[[], object]] = {
                "alone": lambda: client.fetch(report),
                "compare": lambda: client.fetch(report, compare="previous_period"),
                "two": lambda: (client.fetch(report), client.fetch(previous)),
            }
            for run in ways.values():  # warm: imports, connections, the lanes
                run()
            times: dict[str, list[float]] = {name: [] for name in ways}
            for _ in range(args.rounds):
                for name, run in ways.items():
                    started = time.perf_counter()
                    run()
                    times[name].append(time.perf_counter() - started)
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"{args.rounds} rounds, {args.latency * 1000:.0f} ms latency, 8 subscribers x 7 days")
    for name, value in median.items():
        print(f"  {name:8s} median {value * 1000:7.1f} ms")
    print(f"  compare / alone: {median['compare'] / median['alone']:.2f}")
    print(f"  compare / two:   {median['compare'] / median['two']:.2f}")


if __name__ == "__main__":
    main()
