"""Benchmark of ``client.fetch(..., output="arrow")`` against ``output="pandas"``.

One synthetic time-series JSON answer of 1M points (the payload of ``bench_normalize.py``: two
metrics, HOUR buckets, ``+05:30`` stamps, echoed account, MSISDN and site) is served from memory
by a ``requests`` adapter (no sockets: the figures are the client's, not the network's), and
``ReportingClient.fetch`` asks for it as one part. Each output runs in its own subprocess that
reports its best time and its peak RSS above the RSS it had after its imports (the answer's
bytes count for both). Rounds are interleaved (ABAB) so load from other processes hits both
alike. Printed: time and peak bytes per point, and arrow as a ratio of pandas measured in the
same run (target: time at most 0.8x, peak memory per point at most 1x). A third subprocess
times the parse both outputs share (``pyarrow.json.read_json`` with the normalizer's explicit
schema, then its full validation) and prints its share of each. Nothing here is a test.

Usage::

    python benchmarks/bench_outputs.py                  # 1M points, 3 rounds
    python benchmarks/bench_outputs.py --points 200000 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_normalize import (
    REQUEST,
    ROOT,
    _reset_peak,
    _status,
    interleaved,
    json_schema,
    make_payloads,
)

OUTPUTS = ("pandas", "arrow")
PARSE = "shared parse"


def _client(body: bytes) -> Any:
    import requests
    from requests.adapters import BaseAdapter

    from edgereports import ReportingClient

    class Canned(BaseAdapter):
        def send(self, request: Any, **_: Any) -> requests.Response:
            response = requests.Response()
            response.status_code, response._content = 200, body
            response.headers["Content-Type"] = "application/json"
            response.url, response.request = request.url, request
            return response

        def close(self) -> None:
            pass

    session = requests.Session()
    session.mount("http://", Canned())
    return ReportingClient("bench-key", "http://bench.invalid", session=session, progress=False)


def worker(output: str, path: str, points: int, repeat: int) -> None:
    """Fetch ``repeat`` times in this fresh process; print time, peak and rows as JSON."""
    from datetime import datetime, timedelta

    from edgereports import Report

    hours = points // 2 + 1
    start = datetime.fromisoformat(REQUEST["start_date_time"])
    request = {**REQUEST, "end_date_time": (start + timedelta(hours=hours)).isoformat()}
    report = Report.from_request(request)
    window = timedelta(hours=hours)  # one part: the whole answer
    _reset_peak()
    base = _status("VmRSS")
    body = Path(path).read_bytes()
    client = _client(body)
    if output == PARSE:
        client = _parser(body)
    best, rows = float("inf"), 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the echoed, unfiltered dimensions: a top talker
        for _ in range(repeat):
            began = time.perf_counter()
            out = client.fetch(report, window=window, output=output)
            best = min(best, time.perf_counter() - began)
            rows = len(out) if output == "pandas" else points if output == PARSE else out.num_rows
            del out
    peak = _status("VmHWM") - base
    print(json.dumps({"seconds": best, "peak": peak, "rows": rows}))


def _parser(body: bytes) -> Any:
    """An object whose ``fetch`` runs only the parse both outputs share."""
    import io

    import pyarrow.json as pajson

    schema = json_schema()

    class Parser:
        def fetch(self, *_: Any, **__: Any) -> Any:
            table = pajson.read_json(
                io.BytesIO(body),
                read_options=pajson.ReadOptions(block_size=len(body) + 1),
                parse_options=pajson.ParseOptions(explicit_schema=schema),
            )
            table.validate(full=True)
            return table

    return Parser()


def run(output: str, path: Path, points: int, repeat: int) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", output, str(path), str(points), str(repeat)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=2, help="fetches per subprocess")
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        output, path, points, repeat = args.worker
        worker(output, path, int(points), int(repeat))
        return
    body, _ = make_payloads(args.points)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "answer.json"
        path.write_bytes(body)
        del body
        best = interleaved(
            (*OUTPUTS, PARSE), args.rounds, lambda o: run(o, path, args.points, args.repeat)
        )
    points = best["pandas"]["rows"]
    assert best["arrow"]["rows"] == points, best
    print(f"client.fetch of one {points:,}-point JSON answer (best of {args.rounds} rounds)")
    print(f"{'output':<12} {'seconds':>8} {'peak B/point':>13}")
    for output in (*OUTPUTS, PARSE):
        r = best[output]
        print(f"{output:<12} {r['seconds']:>8.3f} {r['peak'] / points:>13.1f}")
    time_ratio = best["arrow"]["seconds"] / best["pandas"]["seconds"]
    peak_ratio = best["arrow"]["peak"] / best["pandas"]["peak"]
    print(f"arrow/pandas: time {time_ratio:.2f}x (target <= 0.8x), "
          f"peak memory per point {peak_ratio:.2f}x (target <= 1x)")  # fmt: skip
    parse = best[PARSE]["seconds"]
    print(f"the shared parse is {parse / best['pandas']['seconds']:.0%} of pandas' time and "
          f"{parse / best['arrow']['seconds']:.0%} of arrow's")  # fmt: skip


if __name__ == "__main__":
    main()
