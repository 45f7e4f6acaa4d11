"""Peers benchmark: the same pull done by hand, with a thread pool, by ``client.fetch`` and by dlt.

The pull: hourly uplink and downlink bytes (COUNT) of N subscribers over D days, from a sandbox
running in a child process (its own interpreter, so client and server do not share a GIL) with
a fixed latency added to every request. Each contender builds the same tidy frame:

1. ``requests.post`` in a sequential loop, one request per subscriber for the whole range,
   each answer normalized with ``er.to_frame``, the bucket the service adds at the range's end
   dropped (the best hand-written loop);
2. the same loop on a ``ThreadPoolExecutor(8)``;
3. ``ReportingClient.fetch`` with every default (windows, workers, retries);
4. when installed (``pip install 'edgereports[bench]'``), dlt's ``rest_api`` source to Parquet:
   one resource per subscriber, the whole range per request, ``parallelized``, the filesystem
   destination writing Parquet (the configuration is printed), read back with pyarrow.

Every frame is checked equal to the first (dlt's by its rows: its table has its own columns).
Each contender runs in ``--repeat`` fresh processes; the medians and the request counts (from
the sandbox's own counter) are printed, and ratios against the thread-pool loop measured in the
same run. Nothing here is a test.

Usage::

    python benchmarks/bench_peers.py                     # 50 subscribers x 90 days, 20 ms
    python benchmarks/bench_peers.py --latency 0 --repeat 3
    python benchmarks/bench_peers.py --quick             # 10 subscribers x 14 days
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SEED = 0
NOW = "2024-06-01T00:00:00+00:00"
WORKERS = 8


@dataclass(frozen=True)
class Sandbox:
    """A sandbox in a child process."""

    base_url: str
    reporting_url: str
    key: str
    account: str

    def count(self) -> int:
        """The reporting requests the sandbox has answered so far."""
        with urllib.request.urlopen(f"{self.base_url}/sandbox/requests", timeout=10) as answer:
            stats = json.load(answer)
        return int(stats["counts"]["reporting"])


@contextmanager
def sandbox(latency: float, devices: int) -> Iterator[Sandbox]:
    """Run ``python -m edgereports.sandbox`` on a free port with ``latency``; stop it on exit."""
    cmd = [sys.executable, "-m", "edgereports.sandbox", "--port", "0", "--seed", str(SEED),
           "--devices", str(devices), "--now", NOW, "--latency", str(latency)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        info: dict[str, str] = {}
        for line in proc.stdout:
            name, _, value = line.strip().partition(":")
            info[name] = value.strip()
            if line.startswith(("Press Ctrl-C", "Stopping")):
                break
        assert "base URL" in info, f"the sandbox did not start: {info}"
        base = info["base URL"]
        yield Sandbox(base, base, info["API key"], info["account id"])
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


# --- the contenders: each runs in a fresh process (``--contender NAME``) ---------------------


def _report(sb: Sandbox, msisdns: list[str], days: int) -> object:
    from datetime import datetime, timedelta

    import edgereports as er

    end = datetime.fromisoformat(NOW)
    start = end - timedelta(days=days)
    return er.presets.byte_usage_subscriber(
        account_id=sb.account, msisdn=msisdns, start=start.isoformat(), end=end.isoformat()
    )


def _by_hand(sb: Sandbox, msisdns: list[str], days: int, workers: int) -> object:
    """POST one request per subscriber (the whole range); normalize each answer; concat."""
    from concurrent.futures import ThreadPoolExecutor

    import orjson
    import pandas as pd
    import requests

    import edgereports as er

    report = _report(sb, msisdns, days)
    session = requests.Session()
    url = f"{sb.reporting_url}/connectivity/v1/report"

    def one(msisdn: str) -> pd.DataFrame:
        request = report.where(msisdn=msisdn).to_request()  # type: ignore[attr-defined]
        answer = session.post(url, params={"apikey": sb.key}, json=request, timeout=300)
        answer.raise_for_status()
        return er.to_frame(orjson.loads(answer.content), request=request)

    if workers == 1:
        frames = [one(m) for m in msisdns]
    else:
        with ThreadPoolExecutor(workers) as pool:
            frames = list(pool.map(one, msisdns))
    frame = pd.concat(frames, ignore_index=True)
    # the range rule of every fetch: a bucket the service adds at the range's end is outside it
    return frame[frame["time_stamp"] < pd.Timestamp(NOW)].reset_index(drop=True)


def _client(sb: Sandbox, msisdns: list[str], days: int) -> object:
    import edgereports as er

    with er.ReportingClient(sb.key, sb.reporting_url, progress=False) as client:
        return client.fetch(_report(sb, msisdns, days))


DLT_CONFIG = (
    "rest_api: one resource per subscriber, POST with the whole range as its JSON body, "
    "data_selector 'result[*][*]' (every point), parallelized=True, no paginator; "
    "destination filesystem (local folder), loader_file_format 'parquet'"
)


def _dlt(sb: Sandbox, msisdns: list[str], days: int) -> object:
    import dlt
    import pyarrow.dataset as ds
    from dlt.sources.rest_api import rest_api_source

    report = _report(sb, msisdns, days)
    out = tempfile.mkdtemp(prefix="bench-dlt-")
    resources = []
    for msisdn in msisdns:
        request = report.where(msisdn=msisdn).to_request()  # type: ignore[attr-defined]
        resources.append({
            "name": f"usage_{msisdn}",
            "table_name": "usage",
            "parallelized": True,
            "endpoint": {
                "path": "connectivity/v1/report",
                "method": "POST",
                "params": {"apikey": sb.key},
                "json": request,
                "data_selector": "result[*][*]",
                "paginator": "single_page",
            },
        })  # fmt: skip
    source = rest_api_source({"client": {"base_url": f"{sb.reporting_url}/"},
                              "resources": resources})  # fmt: skip
    pipeline = dlt.pipeline(
        pipeline_name="bench_peers",
        destination=dlt.destinations.filesystem(out),
        dataset_name="usage",
        pipelines_dir=os.path.join(out, ".dlt"),
    )
    pipeline.run(source, loader_file_format="parquet")
    return ds.dataset(Path(out) / "usage" / "usage", format="parquet").to_table().to_pandas()


def contender(name: str, sb: Sandbox, msisdns: list[str], days: int, frame_file: str) -> None:
    """Run one contender in this process; print its wall time; save its frame."""
    import pandas as pd

    started = time.perf_counter()
    if name == "sequential loop":
        frame = _by_hand(sb, msisdns, days, 1)
    elif name == "thread-pool loop":
        frame = _by_hand(sb, msisdns, days, WORKERS)
    elif name == "client.fetch, defaults":
        frame = _client(sb, msisdns, days)
    else:
        frame = _dlt(sb, msisdns, days)
    seconds = time.perf_counter() - started
    assert isinstance(frame, pd.DataFrame)
    frame.to_pickle(frame_file)
    print(json.dumps({"seconds": seconds}))


# --- the driver ------------------------------------------------------------------------------


def _run(name: str, sb: Sandbox, msisdns: list[str], days: int, frame_file: str) -> float:
    args = [sys.executable, __file__, "--contender", name, "--sandbox", json.dumps(sb.__dict__),
            "--msisdns", ",".join(msisdns), "--days", str(days), "--frame", frame_file]  # fmt: skip
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{name} failed:\n{done.stderr[-2000:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])


def _same(name: str, frame: object, first: object) -> str:
    import pandas as pd

    assert isinstance(frame, pd.DataFrame) and isinstance(first, pd.DataFrame)
    if name.startswith("dlt"):
        # dlt writes its own table: compare the observations (stamp, metric, value) it holds
        got = frame.rename(columns={"name": "metric"})
        got = got[pd.to_datetime(got["time_stamp"], utc=True) < pd.Timestamp(NOW)]
        for variant in [c for c in got.columns if c.startswith("value__v_")]:
            # dlt infers the column's type from the first rows; other types go to a variant
            got["value"] = got["value"].astype("float64").fillna(got[variant].astype("float64"))
        keys = ["metric", "value"]
        if len(got) != len(first):
            return f"NOT EQUAL ({len(got)} rows vs {len(first)})"
        a = got[keys].sort_values(keys).reset_index(drop=True)
        b = first[keys].astype({"metric": object}).sort_values(keys).reset_index(drop=True)
        same = (a["metric"].to_numpy() == b["metric"].to_numpy()).all() and (
            a["value"].astype("float64").to_numpy() == b["value"].to_numpy()
        ).all()
        return "equal rows" if same else f"NOT EQUAL (columns {list(frame.columns)})"
    key = [c for c in first.columns if c != "value"]
    a = frame.sort_values(key).reset_index(drop=True)
    b = first.sort_values(key).reset_index(drop=True)
    try:
        pd.testing.assert_frame_equal(a, b, check_like=True)
    except AssertionError:
        return "NOT EQUAL"
    return "equal"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", type=int, default=50)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--latency", type=float, default=0.020, help="seconds per request")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per contender")
    parser.add_argument("--quick", action="store_true", help="10 subscribers x 14 days, 1 run")
    parser.add_argument("--contender", help=argparse.SUPPRESS)
    parser.add_argument("--sandbox", help=argparse.SUPPRESS)
    parser.add_argument("--msisdns", help=argparse.SUPPRESS)
    parser.add_argument("--frame", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.contender:
        sb = Sandbox(**json.loads(args.sandbox))
        contender(args.contender, sb, args.msisdns.split(","), args.days, args.frame)
        return
    if args.quick:
        args.subscribers, args.days, args.repeat = 10, 14, 1

    import pandas as pd

    names = ["sequential loop", "thread-pool loop", "client.fetch, defaults"]
    try:
        import dlt  # noqa: F401

        names.append("dlt rest_api -> Parquet")
    except ImportError:
        print("dlt is not installed (pip install 'edgereports[bench]'): its row is skipped")
    with sandbox(args.latency, max(64, args.subscribers)) as sb:
        with urllib.request.urlopen(f"{sb.base_url}/sandbox/network", timeout=10) as answer:
            network = json.load(answer)
        msisdns = [s["msisdn"] for s in network["sims"] if s["account_id"] == sb.account]
        msisdns = msisdns[: args.subscribers]
        print(
            f"pull: {len(msisdns)} subscribers x {args.days} days HOUR, 2 metrics; sandbox "
            f"latency {args.latency * 1000:.0f} ms; {args.repeat} fresh process(es) each"
        )
        if len(names) == 4:
            print(f"dlt: {DLT_CONFIG}")
        rows = []
        first: object = None
        with tempfile.TemporaryDirectory() as tmp:
            for name in names:
                times, counts = [], []
                for i in range(args.repeat):
                    file = os.path.join(tmp, f"{len(rows)}-{i}.pkl")
                    before = sb.count()
                    times.append(_run(name, sb, msisdns, args.days, file))
                    counts.append(sb.count() - before)
                frame = pd.read_pickle(file)
                if first is None:
                    first = frame
                rows.append((name, times, counts[-1], _same(name, frame, first)))
    base = statistics.median(rows[1][1])
    print(f"\n{'contender':<26} {'median s':>9} {'min-max s':>13} {'requests':>9} "
          f"{'vs pool':>8}  frame")  # fmt: skip
    for name, times, count, same in rows:
        med = statistics.median(times)
        print(f"{name:<26} {med:>9.2f} {min(times):>6.2f}-{max(times):<6.2f} {count:>9} "
              f"{med / base:>7.2f}x  {same}")  # fmt: skip


if __name__ == "__main__":
    main()
