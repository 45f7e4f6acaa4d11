"""Benchmark of the sandbox's reporting endpoint: generation, serialization, loopback, concurrency.

For answers of about 10k and 100k points (several metrics over HOUR buckets, up to two years),
for two years of the link quality metrics, and for a year of DAY data fanned out over 1,000
subscribers (over one keep-alive connection), prints the time to answer over
loopback, split into generating the data (validation + numpy) and serializing it, as ratios
against ``orjson.dumps`` of the same payload measured in the same run. Then eight concurrent
clients hammer the server and the errors are counted.

Targets (issue 4): answer within 3x of ``orjson.dumps`` alone; generation no slower than
serialization; no error with eight concurrent clients.

Run: ``python benchmarks/bench_sandbox.py [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import orjson
import requests

from edgereports.sandbox import SandboxHandle, serve
from edgereports.sandbox.engine import answer
from edgereports.sandbox.render import render_json
from edgereports.sandbox.reportreq import parse_report

NOW = "2024-01-01T00:00:00+05:30"
COUNTS = ("time_usage_seconds", "uplink_bytes", "downlink_bytes", "ue_connections",
          "uplink_bandwidth", "downlink_bandwidth")  # fmt: skip
QUALITY = ("packet_latency", "jitter", "packet_loss")


def request(sb: SandboxHandle, start: str, end: str, granularity: str, metrics: int,
            names: tuple[str, ...] = COUNTS, aggregation: str = "COUNT",
            **filters: str) -> dict[str, Any]:  # fmt: skip
    flt = [{"dimension_name": "account_id", "operator": "EXACT", "expressions": [sb.account_id]}]
    dims = []
    for dim, value in filters.items():
        flt.append({"dimension_name": dim, "operator": "EXACT", "expressions": [value]})
        dims.append(dim)
    body: dict[str, Any] = {"start_date_time": start, "end_date_time": end,
                            "granularity": granularity}  # fmt: skip
    if dims:
        body["dimensions"] = dims
    body["dimension_filter_clauses"] = [{"filters": flt}]
    body["metrics"] = [{"name": n, "aggregation_type": aggregation} for n in names[:metrics]]
    return body


def best(fn: Callable[[], Any], repeat: int) -> float:
    """Return the median wall time of ``fn`` over ``repeat`` runs (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(sb: SandboxHandle, bodies: list[dict[str, Any]], repeat: int) -> dict[str, float]:
    """Time generation, serialization, orjson.dumps and loopback for a batch of requests."""
    now = sb.clock.timestamp()
    queries = [parse_report(b) for b in bodies]
    answers = [answer(q, sb.network, now, sb.seed) for q in queries]
    payloads = [orjson.loads(render_json(a)) for a in answers]
    points = sum(len(arr) for p in payloads for arr in p["result"])
    generate = best(lambda: [answer(parse_report(b), sb.network, now, sb.seed)
                             for b in bodies], repeat)  # fmt: skip
    serialize = best(lambda: [render_json(a) for a in answers], repeat)
    baseline = best(lambda: [orjson.dumps(p) for p in payloads], repeat)
    with requests.Session() as s:
        url, key = sb.report_endpoint, {"apikey": sb.api_key}

        def loop() -> None:
            for b in bodies:
                r = s.post(url, params=key, json=b, timeout=300)
                assert r.status_code == 200, r.text
                _ = r.content

        loopback = best(loop, repeat)
    size = sum(len(render_json(a)) for a in answers)
    return {"points": points, "bytes": size, "generate": generate, "serialize": serialize,
            "orjson": baseline, "loopback": loopback}  # fmt: skip


def show(label: str, m: dict[str, float]) -> None:
    base = m["orjson"]
    print(f"{label}: {int(m['points']):,} points, {m['bytes'] / 1e6:.1f} MB")
    print(f"  orjson.dumps baseline        {base * 1e3:9.1f} ms   1.00x")
    print(
        f"  generate (validate + numpy)  {m['generate'] * 1e3:9.1f} ms  "
        f"{m['generate'] / base:5.2f}x"
    )
    print(
        f"  serialize (render_json)      {m['serialize'] * 1e3:9.1f} ms  "
        f"{m['serialize'] / base:5.2f}x"
    )
    print(
        f"  generate + serialize         {(m['generate'] + m['serialize']) * 1e3:9.1f} ms  "
        f"{(m['generate'] + m['serialize']) / base:5.2f}x"
    )
    print(
        f"  answer over loopback         {m['loopback'] * 1e3:9.1f} ms  "
        f"{m['loopback'] / base:5.2f}x"
    )
    print(f"  generation / serialization   {m['generate'] / m['serialize']:5.2f}")  # fmt: skip


def concurrency(sb: SandboxHandle, body: dict[str, Any], clients: int, each: int) -> None:
    barrier = threading.Barrier(clients)

    def client(_: int) -> tuple[int, int]:
        ok = bad = 0
        barrier.wait()
        with requests.Session() as s:
            for _ in range(each):
                try:
                    r = s.post(sb.report_endpoint, params={"apikey": sb.api_key}, json=body,
                               timeout=300)  # fmt: skip
                    ok += r.status_code == 200
                    bad += r.status_code != 200
                except requests.RequestException:
                    bad += 1
        return ok, bad

    one = best(lambda: requests.post(sb.report_endpoint, params={"apikey": sb.api_key},
                                     json=body, timeout=300), 3)  # fmt: skip
    t0 = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(client, range(clients)))
    wall = time.perf_counter() - t0
    ok, bad = sum(r[0] for r in results), sum(r[1] for r in results)
    print(
        f"{clients} concurrent clients x {each} requests: {ok} ok, {bad} errors, "
        f"{wall:.2f} s wall = {wall / (clients * each) / one:.2f}x one request alone "
        f"({one * 1e3:.1f} ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--subscribers", type=int, default=1000)
    args = parser.parse_args()
    with serve(seed=0, devices=64, clock=NOW) as sb:
        print(
            f"sandbox: {len(sb.network.devices)} devices; timings are medians of "
            f"{args.repeat} runs; ratios are against orjson.dumps of the same payload\n"
        )
        small = request(sb, "2022-01-01T00:00:00+05:30", "2022-04-15T16:00:00+05:30", "HOUR", 4)
        show("~10k points (4 metrics, 104 days of HOUR)", measure(sb, [small], args.repeat))
        print()
        big = request(sb, "2021-07-01T00:00:00+05:30", "2023-07-01T00:00:00+05:30", "HOUR", 6)
        show("~100k points (6 metrics, 2 years of HOUR)", measure(sb, [big], args.repeat))
        print()
        quality = request(sb, "2021-07-01T00:00:00+05:30", "2023-07-01T00:00:00+05:30", "HOUR",
                          3, names=QUALITY, aggregation="AVG")  # fmt: skip
        show("~50k points of link quality (3 metrics AVG, 2 years of HOUR)",
             measure(sb, [quality], args.repeat))  # fmt: skip
        print()
        concurrency(sb, small, clients=8, each=10)
    print()
    with serve(seed=0, devices=args.subscribers, extra_accounts=0, clock=NOW) as sb:
        sims = sb.network.sims_of(sb.account_id)
        bodies = [request(sb, "2022-01-01T00:00:00+05:30", "2023-01-01T00:00:00+05:30", "DAY",
                          1, msisdn=s.msisdn) for s in sims]  # fmt: skip
        show(
            f"a year of DAY fanned out over {len(sims):,} subscribers ({len(sims):,} requests)",
            measure(sb, bodies, max(1, args.repeat // 2)),
        )
        print()
        concurrency(sb, bodies[0], clients=8, each=50)


if __name__ == "__main__":
    main()
