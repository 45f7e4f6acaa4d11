"""Benchmark of the reporting client against the local sandbox (loopback).

1. Concurrency: the sandbox adds 100 ms of latency to every request; a 48-window pull (48 days
   of DAY buckets, one-day windows) is fetched with ``max_workers=8`` and with
   ``max_workers=1`` in the same run, and the speed-up is printed (target: at least 5x).
2. Overhead: for a small report (one day, one metric) on a sandbox without latency, the time
   of ``client.fetch`` per request against a bare ``requests`` POST of the same body on a
   keep-alive session (the baseline: the same server work and the same loopback), so the
   difference is the client's own time per request: planning, the retry layers, error
   mapping and normalization to a frame (target: under 5 ms).

3. CPU per small part: a pull of one subscriber's HOUR uplink and downlink bytes over 20 weeks
   with ``window=timedelta(days=7)`` (20 parts of a week, 336 points each), from a sandbox in
   a child process without latency (so its CPU is not counted), against a bare
   ``requests.post`` + ``orjson.loads`` of one such week's answer, measured in the same run
   as process CPU time, interleaved (target: the client's CPU per part at most 2x the bare).

Figures are printed; nothing here is a test.

Usage::

    python benchmarks/bench_client.py            # 100 overhead rounds
    python benchmarks/bench_client.py --quick    # 30 overhead rounds
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import timedelta

import requests

from edgereports import presets
from edgereports.reporting import ReportingClient
from edgereports.sandbox import FaultConfig, serve

CLOCK = "2022-07-08T10:00:00+05:30"


def concurrency(latency: float) -> None:
    with serve(seed=0, clock=CLOCK, faults=FaultConfig(latency=latency)) as sb:
        report = presets.time_usage_enterprise(
            account_id=sb.account_id, start="2022-05-01T00:00:00Z", end="2022-06-18T00:00:00Z"
        )
        timings = {}
        frames = {}
        warm = ReportingClient(sb.api_key, sb.reporting_url, progress=False)
        warm.fetch(report, window=timedelta(days=24))  # imports (pandas, normalizer) and caches
        for workers in (1, 8):
            client = ReportingClient(
                sb.api_key, sb.reporting_url, max_workers=workers, progress=False
            )
            before = sb.request_count()
            started = time.perf_counter()
            frames[workers] = client.fetch(report, window=timedelta(days=1))
            timings[workers] = time.perf_counter() - started
            requests_made = sb.request_count() - before
            client.close()
        assert frames[1].equals(frames[8]), "the two pulls differ"
        print(f"concurrency: {requests_made} windows, {latency * 1000:.0f} ms latency each")
        print(f"  max_workers=1: {timings[1]:.2f} s   max_workers=8: {timings[8]:.2f} s")
        print(f"  speed-up 8 vs 1 workers: {timings[1] / timings[8]:.1f}x (target >= 5x)")


def overhead(rounds: int) -> None:
    with serve(seed=0, clock=CLOCK) as sb:
        report = presets.time_usage_enterprise(
            account_id=sb.account_id, start="2022-06-01T00:00:00Z", end="2022-06-02T00:00:00Z"
        )
        body = report.to_request()
        session = requests.Session()
        client = ReportingClient(sb.api_key, sb.reporting_url, progress=False)

        def bare() -> None:
            response = session.post(
                sb.report_endpoint,
                params={"apikey": sb.api_key},
                json=body,
                headers={"Accept": "application/json"},
                timeout=10,
            )
            _ = response.content

        def ours() -> None:
            client.fetch(report)

        for call in (bare, ours):  # warm up: connections, imports, caches
            for _ in range(5):
                call()
        samples: dict[str, list[float]] = {"bare": [], "ours": []}
        for _ in range(rounds):  # interleaved, so drift hits both alike
            for name, call in (("bare", bare), ("ours", ours)):
                started = time.perf_counter()
                call()
                samples[name].append(time.perf_counter() - started)
        base = statistics.median(samples["bare"])
        mine = statistics.median(samples["ours"])
        print(f"overhead: small report (1 day, DAY, 1 metric), {rounds} rounds, medians")
        print(f"  bare requests.post: {base * 1000:.2f} ms   client.fetch: {mine * 1000:.2f} ms")
        print(
            f"  client-side overhead per request: {(mine - base) * 1000:.2f} ms "
            f"({mine / base:.2f}x the bare round trip; target < 5 ms)"
        )


def part_cpu(rounds: int) -> None:
    """The client's CPU per small part of a pull against a bare post + ``orjson.loads``."""
    import orjson
    from bench_peers import NOW, _report, sandbox

    weeks = 20
    with sandbox(0.0, 64) as sb:
        with requests.get(f"{sb.base_url}/sandbox/network", timeout=10) as answer:
            sims = answer.json()["sims"]
        msisdn = next(s["msisdn"] for s in sims if s["account_id"] == sb.account)
        week = _report(sb, [msisdn], 7)
        pull = _report(sb, [msisdn], 7 * weeks)
        body = week.to_request()  # type: ignore[attr-defined]
        session = requests.Session()
        url = f"{sb.reporting_url}/connectivity/v1/report"
        client = ReportingClient(sb.key, sb.reporting_url, progress=False)

        def bare() -> None:
            answer = session.post(url, params={"apikey": sb.key}, json=body, timeout=30)
            orjson.loads(answer.content)

        def ours() -> None:
            client.fetch(pull, window=timedelta(days=7))

        points = len(
            orjson.loads(session.post(url, params={"apikey": sb.key}, json=body).content)["result"][
                0
            ]
        )
        for _ in range(3):  # warm up: connections, imports, the sandbox's caches
            bare()
            ours()
        cpu: dict[str, list[float]] = {"bare": [], "ours": []}
        for _ in range(rounds):  # interleaved, so drift hits both alike
            started = time.process_time()
            for _ in range(weeks):
                bare()
            cpu["bare"].append((time.process_time() - started) / weeks)
            started = time.process_time()
            ours()
            cpu["ours"].append((time.process_time() - started) / weeks)
        base = statistics.median(cpu["bare"])
        mine = statistics.median(cpu["ours"])
        print(f"CPU per small part: {weeks} weekly parts of HOUR x 2 metrics ({points} points "
              f"per metric) up to {NOW[:10]}, {rounds} rounds, medians")  # fmt: skip
        print(f"  bare requests.post + orjson.loads: {base * 1000:.2f} ms   "
              f"client.fetch per part: {mine * 1000:.2f} ms")  # fmt: skip
        print(f"  ratio: {mine / base:.2f}x (target <= 2x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer overhead rounds")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per request")
    parser.add_argument("--only-parts", action="store_true", help="only the CPU per part")
    args = parser.parse_args()
    if not args.only_parts:
        concurrency(args.latency)
        overhead(30 if args.quick else 100)
    part_cpu(5 if args.quick else 15)


if __name__ == "__main__":
    main()
