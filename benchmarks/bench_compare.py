"""Benchmark of ``fetch(report, compare="previous_period")`` against the local sandbox.

A week of DAY buckets for eight subscribers (eight fan-out requests per period) from a sandbox
that adds 20 ms of latency to every request, fetched three ways in the same run, interleaved:

- ``alone``: ``client.fetch(report)`` (the baseline);
- ``compare``: ``client.fetch(report, compare="previous_period")`` (both periods in one pull,
  then aligned);
- ``two``: ``client.fetch(report)`` then ``client.fetch(previous)``, one after the other (what
  a caller wrote by hand before), without the join.

The medians and the ratios ``compare / alone`` and ``compare / two`` are printed.

Then the join alone, in memory: :func:`~edgereports.reporting.compare.align` of two frames of
200 subscribers x 30 days of HOUR buckets (144,000 rows each) against the hand-written join it
replaces (``merge`` on the series columns and the time shifted by 30 days, plus the change),
best of 5, same process: for a report in UTC, and for one in ``Europe/Berlin`` (whose HOUR
rows meet by the zone's wall clock, found per distinct bucket). The hand-written join is the
same in both (it knows no zone): the yardstick. Figures only; nothing here is a test.

Usage::

    python benchmarks/bench_compare.py            # 15 rounds
    python benchmarks/bench_compare.py --rounds 5
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd

from edgereports import presets
from edgereports.query import Report
from edgereports.reporting import ReportingClient
from edgereports.reporting.compare import align as align_periods
from edgereports.reporting.periods import plan_comparison
from edgereports.reporting.plan import bucket_of
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
            for run in ways.values():  # warm: imports, connections, the worker threads
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
    join()


def _frame(start: datetime, subscribers: int, hours: int, seed: int) -> pd.DataFrame:
    stamps = pd.date_range(start.replace(tzinfo=None), periods=hours, freq="h")
    frame = pd.DataFrame(
        {
            "time_stamp": np.tile(stamps.to_numpy(), subscribers),
            "account_id": "A",
            "msisdn": np.repeat([f"91{i:010d}" for i in range(subscribers)], hours),
            "metric": "uplink_bytes",
            "aggregation": "COUNT",
            "percentile": np.nan,
            "value": np.random.default_rng(seed).random(subscribers * hours),
        }
    )
    frame["time_stamp"] = frame["time_stamp"].dt.tz_localize("UTC").astype("datetime64[us, UTC]")
    for column in ("account_id", "msisdn", "metric", "aggregation"):
        frame[column] = frame[column].astype(pd.StringDtype("pyarrow"))
    end = start + timedelta(hours=hours)
    frame.attrs.update(
        shape="timeseries",
        api_version="v1",
        request={
            "start_date_time": start.isoformat(),
            "end_date_time": end.isoformat(),
            "granularity": "HOUR",
        },
    )
    return frame


def join() -> None:
    days = 30
    start = datetime(2024, 3, 1, tzinfo=UTC)
    keys = ["account_id", "msisdn", "metric", "aggregation", "percentile"]
    mine = _frame(start, 200, 24 * days, 1)
    theirs = _frame(start - timedelta(days=days), 200, 24 * days, 2)

    def by_hand() -> pd.DataFrame:
        other = theirs[[*keys, "time_stamp", "value"]].rename(
            columns={"value": "compare_value", "time_stamp": "compare_time_stamp"}
        )
        other["time_stamp"] = other["compare_time_stamp"] + pd.Timedelta(days=days)
        out = mine.merge(other, on=[*keys, "time_stamp"], how="left")
        out["change"] = out["value"] - out["compare_value"]
        out["change_pct"] = out["change"] / out["compare_value"].abs() * 100
        return out

    runs: dict[str, Callable[[], object]] = {"by hand": by_hand}
    for zone in ("UTC", "Europe/Berlin"):
        report = (
            Report(account_id="A", tz=zone)
            .between(start, start + timedelta(days=days))
            .granularity("HOUR")
            .metric("uplink_bytes", "COUNT")
        )
        comparison = plan_comparison(report, "previous_period", bucket_of(report))
        runs[f"align {zone}"] = functools.partial(align_periods, mine, [theirs], comparison)
    timings: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(5):
        for name, run in runs.items():
            started = time.perf_counter()
            run()
            timings[name].append(time.perf_counter() - started)
    best = {name: min(values) for name, values in timings.items()}
    print(f"join of 2 x {len(mine):,} rows (best of 5)")
    for name, value in best.items():
        print(f"  {name:20s} {value * 1000:7.1f} ms")
    for zone in ("UTC", "Europe/Berlin"):
        print(f"  align {zone} / by hand: {best[f'align {zone}'] / best['by hand']:.2f}")


if __name__ == "__main__":
    main()
