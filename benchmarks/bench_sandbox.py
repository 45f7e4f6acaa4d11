"""Benchmark of the sandbox's reporting endpoint: generation, serialization, loopback, concurrency.

Cases: answers of about 10k and 100k points (HOUR buckets), about 1M points in four answers
of about 250k (the six count metrics with COUNT and AVG over 868 days of HOUR, on one
keep-alive connection: one answer holds at most 20 entries over 1,100 days, so no request asks
for 1M points; the server's ``--report-points`` is raised for them), two years of the link
quality metrics, and a year of DAY data fanned out over 1,000 subscribers (1,000
requests of 366 points). Each prints medians over ``--repeat`` runs (the fan-out: half as
many), with ratios against ``orjson.dumps`` of the same payloads measured in the same run, of:

- generate (``parse_report`` + ``engine.answer``) and serialize (``render.render_json``),
  timed in this process back to back (warm caches, a warm allocator);
- server-side: the summed ``Server-Timing`` (gen + ser) of the requests: the same work, done
  by the server between HTTP requests;
- loopback: the round trip the client sees, from ``python -m edgereports.sandbox`` in a child
  process (client and server do not share one GIL, as with a real service), on a warm
  keep-alive connection; "of which body read" is the client's time from the headers to the
  last byte (it overlaps the server's writing; its own copy into fresh memory is in it);
- HTTP floor: the round trip of a one-point report less its ``Server-Timing``, times the
  number of requests: the fixed per-request cost of HTTP in Python (client, cheroot, Flask).

The timed client is ``http.client`` on one keep-alive connection, bodies pre-encoded: it does
the least client-side work per request, so the figures speak for the server (``requests``
adds its own cost per request). The in-process network has the server's seed, devices and
clock, and the first answer of each case must equal the server's bytes. Eight concurrent
``requests.Session`` clients then hammer the server and the errors are counted.

Targets: the answer within 3x of ``orjson.dumps`` (server-side, and over loopback);
generation no slower than serialization; no error with eight concurrent clients. 1M
points within 2x over loopback.

Run: ``python benchmarks/bench_sandbox.py [--repeat 5] [--subscribers 1000] [--quick]``.
"""

from __future__ import annotations

import argparse
import http.client
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import orjson
import requests

from edgereports.sandbox import build_network
from edgereports.sandbox.clock import Clock
from edgereports.sandbox.engine.answer import answer
from edgereports.sandbox.engine.render import render_json
from edgereports.sandbox.engine.request import parse_report
from edgereports.sandbox.model.network import Network

SEED = 0
NOW = "2024-01-01T00:00:00+05:30"
COUNTS = ("time_usage_seconds", "uplink_bytes", "downlink_bytes", "ue_connections",
          "uplink_bandwidth", "downlink_bandwidth")  # fmt: skip
QUALITY = ("packet_latency", "jitter", "packet_loss")
JSON = {"Content-Type": "application/json"}
#: The server's points limit: room for the 1M-point case.
REPORT_POINTS = 2_000_000


@dataclass
class Sandbox:
    """A sandbox server in a child process, and the same network in this one."""

    url: str
    key: str
    network: Network
    now: float

    def connect(self) -> tuple[http.client.HTTPConnection, str]:
        """Return a keep-alive connection to the server and the report's request target."""
        url = urlsplit(self.url)
        conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=300)
        return conn, f"{url.path}?apikey={self.key}"


@contextmanager
def sandbox(devices: int, extra_accounts: int) -> Iterator[Sandbox]:
    """Run ``python -m edgereports.sandbox`` on a free port; stop it on exit."""
    cmd = [sys.executable, "-m", "edgereports.sandbox", "--port", "0", "--seed", str(SEED),
           "--devices", str(devices), "--extra-accounts", str(extra_accounts),
           "--now", NOW, "--report-points", str(REPORT_POINTS)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        info = {}
        for line in proc.stdout:  # "  base URL:       http://127.0.0.1:PORT" ...
            name, _, value = line.strip().partition(":")
            info[name] = value.strip()
            if line.startswith(("Press Ctrl-C", "Stopping")):
                break
        assert "base URL" in info, f"the sandbox did not start: {info}"
        net = build_network(SEED, devices, extra_accounts=extra_accounts)
        assert info["account id"] == net.primary_account_id, "not the same network"
        yield Sandbox(f"{info['base URL']}/connectivity/v1/report", info["API key"], net,
                      Clock(NOW).timestamp())  # fmt: skip
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def request(sb: Sandbox, start: str, end: str, granularity: str | None, metrics: int,
            names: tuple[str, ...] = COUNTS, aggregation: str = "COUNT",
            **filters: str) -> dict[str, Any]:  # fmt: skip
    exact = {"account_id": sb.network.primary_account_id, **filters}
    flt = [{"dimension_name": d, "operator": "EXACT", "expressions": [v]} for d, v in exact.items()]
    entries = [{"name": n, "aggregation_type": aggregation} for n in names[:metrics]]
    return {"start_date_time": start, "end_date_time": end,
            **({"granularity": granularity} if granularity else {}),
            **({"dimensions": list(filters)} if filters else {}),
            "dimension_filter_clauses": [{"filters": flt}], "metrics": entries}  # fmt: skip


def best(fn: Callable[[], Any], repeat: int) -> float:
    """Return the median wall time of ``fn`` over ``repeat`` runs (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def post(conn: http.client.HTTPConnection, target: str, body: bytes) -> tuple[bytes, float, float]:
    """POST a report request; return the answer, its server-side seconds (gen + ser) and the
    seconds the client spent reading the body after the headers came."""
    conn.request("POST", target, body=body, headers=JSON)
    r = conn.getresponse()
    t0 = time.perf_counter()
    data = r.read()
    read = time.perf_counter() - t0
    assert r.status == 200, data[:500]
    entries = (e.split(";dur=") for e in (r.getheader("Server-Timing") or "").split(","))
    server = sum(float(dur) for name, dur in entries if name.strip() in ("gen", "ser")) / 1e3
    return data, server, read


def rounds(sb: Sandbox, bodies: list[bytes], repeat: int) -> tuple[float, float, float]:
    """Return the medians of the round trip of POSTing every body, of the server-side sum and
    of the client's body reads."""
    conn, target = sb.connect()
    walls, servers, reads = [], [], []
    for k in range(repeat + 1):  # the first round warms up
        t0 = time.perf_counter()
        answers = [post(conn, target, b)[1:] for b in bodies]
        if k:
            walls.append(time.perf_counter() - t0)
            servers.append(sum(a[0] for a in answers))
            reads.append(sum(a[1] for a in answers))
    conn.close()
    return statistics.median(walls), statistics.median(servers), statistics.median(reads)


def measure(sb: Sandbox, bodies: list[dict[str, Any]], repeat: int) -> dict[str, float]:
    """Time generation, serialization, orjson.dumps, loopback and the HTTP floor."""
    net, now = sb.network, sb.now
    answers = [answer(parse_report(b), net, now, SEED) for b in bodies]
    payloads = [orjson.loads(render_json(a)) for a in answers]
    encoded = [orjson.dumps(b) for b in bodies]
    conn, target = sb.connect()
    assert post(conn, target, encoded[0])[0] == render_json(answers[0]), "not the same answer"
    conn.close()
    points = sum(len(arr) for p in payloads for arr in p["result"])
    size = sum(len(render_json(a)) for a in answers)
    m: dict[str, float] = {"requests": len(bodies), "bytes": size, "points": points}
    m["orjson"] = best(lambda: [orjson.dumps(p) for p in payloads], repeat)
    m["generate"] = best(lambda: [answer(parse_report(b), net, now, SEED) for b in bodies], repeat)
    m["serialize"] = best(lambda: [render_json(a) for a in answers], repeat)
    m["loopback"], m["server"], m["read"] = rounds(sb, encoded, repeat)
    tiny = orjson.dumps(request(sb, "2022-01-01T00:00:00Z", "2022-01-01T00:05:00Z", None, 1))
    n = max(200, len(bodies))
    wall, server, _ = rounds(sb, [tiny] * n, repeat)
    m["floor"] = (wall - server) / n * len(bodies)
    return m


ROWS = (("orjson", "orjson.dumps (baseline)"), ("generate", "generate (parse + answer)"),
        ("serialize", "serialize (render_json)"), ("gen+ser", "generate + serialize"),
        ("server", "server-side (Server-Timing)"), ("loopback", "loopback round trip (client)"),
        ("read", "  of which body read (client)"),
        ("floor", "HTTP floor (outside the handler)"))  # fmt: skip


def show(label: str, m: dict[str, float], limit: float = 3.0) -> None:
    m["gen+ser"] = m["generate"] + m["serialize"]
    base = m["orjson"]
    print(f"{label}: {int(m['requests']):,} request(s), {int(m['points']):,} points, "
          f"{m['bytes'] / 1e6:.1f} MB")  # fmt: skip
    for key, text in ROWS:
        print(f"  {text:32s} {m[key] * 1e3:9.1f} ms  {m[key] / base:6.2f}x")
    checks = ((f"server-side <= {limit:g}x orjson", m["server"] / base, limit),
              (f"loopback <= {limit:g}x orjson", m["loopback"] / base, limit),
              ("generation <= serialization", m["generate"] / m["serialize"], 1.0))  # fmt: skip
    for name, ratio, limit in checks:
        print(f"  target {name:30s} {'met' if ratio <= limit else 'NOT MET':8s} ({ratio:.2f})")


def concurrency(sb: Sandbox, body: dict[str, Any], clients: int, each: int) -> None:
    barrier = threading.Barrier(clients)
    data = orjson.dumps(body)

    def client(together: bool) -> tuple[int, int]:
        ok = bad = 0
        if together:
            barrier.wait()
        with requests.Session() as s:
            for _ in range(each):
                try:
                    r = s.post(sb.url, params={"apikey": sb.key}, data=data, headers=JSON,
                               timeout=300)  # fmt: skip
                    ok += r.status_code == 200
                    bad += r.status_code != 200
                except requests.RequestException:
                    bad += 1
        return ok, bad

    one = best(lambda: client(False), 3) / each
    t0 = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(client, [True] * clients))
    wall = time.perf_counter() - t0
    ok, bad = sum(r[0] for r in results), sum(r[1] for r in results)
    print(f"{clients} concurrent clients x {each} requests: {ok} ok, {bad} errors "
          f"({'met' if bad == 0 else 'NOT MET'}); {wall:.2f} s wall = "
          f"{wall / (clients * each) / one:.2f}x one client's time per request "
          f"({one * 1e3:.1f} ms)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="1 run, 100 subscribers")
    args = parser.parse_args()
    repeat, subscribers = (1, 100) if args.quick else (args.repeat, args.subscribers)
    print(f"medians of {repeat} runs (fan-out: {max(1, repeat // 2)}), as ratios against "
          "orjson.dumps of the same payloads; the server runs in a child process\n")  # fmt: skip
    with sandbox(devices=64, extra_accounts=1) as sb:
        small = request(sb, "2022-01-01T00:00:00+05:30", "2022-04-15T16:00:00+05:30", "HOUR", 4)
        show("~10k points (4 metrics, 104 days of HOUR)", measure(sb, [small], repeat))
        big = request(sb, "2021-07-01T00:00:00+05:30", "2023-07-01T00:00:00+05:30", "HOUR", 6)
        show("\n~100k points (6 metrics, 2 years of HOUR)", measure(sb, [big], repeat))
        quarter = request(sb, "2021-01-01T00:00:00+05:30", "2023-05-19T00:00:00+05:30", "HOUR",
                          6)  # fmt: skip
        quarter["metrics"] += [{**m, "aggregation_type": "AVG"} for m in quarter["metrics"]]
        show("\n~1M points in 4 answers (12 entries, 868 days of HOUR)",
             measure(sb, [quarter] * 4, repeat), limit=2.0)  # fmt: skip
        quality = request(sb, "2021-07-01T00:00:00+05:30", "2023-07-01T00:00:00+05:30", "HOUR",
                          3, names=QUALITY, aggregation="AVG")  # fmt: skip
        show("\n~50k points of link quality (3 metrics AVG, 2 years of HOUR)",
             measure(sb, [quality], repeat))  # fmt: skip
        print()
        concurrency(sb, small, clients=8, each=10)
    with sandbox(devices=subscribers, extra_accounts=0) as sb:
        sims = sb.network.sims_of(sb.network.primary_account_id)
        bodies = [request(sb, "2022-01-01T00:00:00+05:30", "2023-01-01T00:00:00+05:30", "DAY",
                          1, msisdn=s.msisdn) for s in sims]  # fmt: skip
        show(f"\na year of DAY fanned out over {len(sims):,} subscribers",
             measure(sb, bodies, max(1, repeat // 2)))  # fmt: skip
        print()
        concurrency(sb, bodies[0], clients=8, each=50)


if __name__ == "__main__":
    main()
