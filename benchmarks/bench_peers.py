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
Each contender runs in ``--repeat`` fresh processes, the contenders taking turns; the medians
and the request counts (from the sandbox's own counter) are printed, and the ratios against the
thread-pool loop: the median and min-max of each round's own ratio. Nothing here is a test.

With ``--export``, the job of the scheduled export instead: the same subscribers' HOUR bytes
over D days (``byte_usage_subscriber``) and their DAY time usage over a year
(``time_usage_subscriber``), each run into a fresh folder on local disk by

1. ``run_export`` on a job file with every default (only ``output``, ``format = "parquet"``,
   the account, the two reports and their start dates; the job is printed), the API key and
   URL from the environment as ``edgereports export`` reads them, timed whole (imports, the
   lock, the fetches, one Parquet file per UTC day, the state);
2. dlt's ``rest_api`` to Parquet as above, one resource per subscriber per report (a table per
   report), each request the whole range of its report.

Both read back after the clock stops (``er.read_export``; pyarrow for dlt's files), and each
report's rows (stamp, metric, value) are checked equal. Printed: the medians, min-max, the
requests and the ratio dlt / export.

Usage::

    python benchmarks/bench_peers.py                     # 50 subscribers x 90 days, 20 ms
    python benchmarks/bench_peers.py --latency 0 --repeat 3
    python benchmarks/bench_peers.py --quick             # 10 subscribers x 14 days
    python benchmarks/bench_peers.py --export            # + 365 days of DAY, export vs dlt
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
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


def _dlt_resources(sb: Sandbox, requests: dict[str, list[tuple[str, object]]]) -> object:
    """dlt's ``rest_api`` source: per table, one resource per (subscriber, request body)."""
    from dlt.sources.rest_api import rest_api_source

    resources = [
        {
            "name": f"{table}_{msisdn}",
            "table_name": table,
            "parallelized": True,
            "endpoint": {
                "path": "connectivity/v1/report",
                "method": "POST",
                "params": {"apikey": sb.key},
                "json": body,
                "data_selector": "result[*][*]",
                "paginator": "single_page",
            },
        }
        for table, bodies in requests.items()
        for msisdn, body in bodies
    ]
    return rest_api_source({"client": {"base_url": f"{sb.reporting_url}/"},
                            "resources": resources})  # fmt: skip


def _dlt_load(sb: Sandbox, requests: dict[str, list[tuple[str, object]]], out: str) -> None:
    """Run dlt's pipeline: the source above to Parquet files under ``out/usage/<table>``."""
    import dlt

    pipeline = dlt.pipeline(
        pipeline_name="bench_peers",
        destination=dlt.destinations.filesystem(out),
        dataset_name="usage",
        pipelines_dir=os.path.join(out, ".dlt"),
    )
    pipeline.run(_dlt_resources(sb, requests), loader_file_format="parquet")


def _dlt_read(out: str, table: str) -> object:
    """dlt's files of ``table``, their schemas unified: a column dlt adds in a later file (a
    variant such as ``value__v_double`` for floats in a column it typed as integers) is kept,
    where a dataset would take the first file's schema and drop it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = sorted((Path(out) / "usage" / table).rglob("*.parquet"))
    tables = [pq.read_table(f) for f in files]
    return pa.concat_tables(tables, promote_options="default").to_pandas()


def _dlt(sb: Sandbox, msisdns: list[str], days: int, out: str) -> object:
    report = _report(sb, msisdns, days)
    bodies = [(m, report.where(msisdn=m).to_request()) for m in msisdns]  # type: ignore[attr-defined]
    _dlt_load(sb, {"usage": bodies}, out)
    return _dlt_read(out, "usage")


def contender(name: str, sb: Sandbox, msisdns: list[str], days: int, frame_file: str) -> None:
    """Run one contender of the pull in this process; print its wall time; save its frame."""
    import pandas as pd

    started = time.perf_counter()
    if name == "sequential loop":
        frame = _by_hand(sb, msisdns, days, 1)
    elif name == "thread-pool loop":
        frame = _by_hand(sb, msisdns, days, WORKERS)
    elif name == "client.fetch, defaults":
        frame = _client(sb, msisdns, days)
    else:
        frame = _dlt(sb, msisdns, days, frame_file + ".dlt")
    seconds = time.perf_counter() - started
    assert isinstance(frame, pd.DataFrame)
    frame.to_pickle(frame_file)
    print(json.dumps({"seconds": seconds}))


def export_contender(name: str, sb: Sandbox, job: str, bodies: str, frame_file: str) -> None:
    """Run one contender of the export in this process; print its wall time; save its tables.

    The clock covers the export only (imports included); reading back is the check's.
    """
    import pandas as pd

    with open(bodies, encoding="utf-8") as fh:
        requests: dict[str, list[tuple[str, object]]] = json.load(fh)
    out = frame_file + ".out"
    # what `edgereports export` reads when the job names no key or URL
    os.environ["EDGEREPORTS_API_KEY"] = sb.key
    os.environ["EDGEREPORTS_REPORTING_URL"] = sb.reporting_url
    started = time.perf_counter()
    if name == EXPORT:
        from edgereports.export import run_export

        summary = run_export(job, progress=False)
        seconds = time.perf_counter() - started
        if not summary.ok:
            raise SystemExit(f"the export failed: {summary}")
        import edgereports as er

        tables = {t: er.read_export(summary.output, t) for t in requests}
    else:
        _dlt_load(sb, requests, out)
        seconds = time.perf_counter() - started
        tables = {t: _dlt_read(out, t) for t in requests}
    pd.to_pickle(tables, frame_file)
    print(json.dumps({"seconds": seconds}))


# --- the driver ------------------------------------------------------------------------------

EXPORT = "edgereports export, defaults"
DLT = "dlt rest_api -> Parquet"
#: the export's reports (bench_export's job names) and their days of history
EXPORT_REPORTS = {"bytes_hourly": "HOUR", "usage_daily": "DAY"}
DAY_DAYS = 365


def _run(name: str, sb: Sandbox, frame_file: str, extra: list[str]) -> float:
    args = [sys.executable, __file__, "--contender", name, "--sandbox", json.dumps(sb.__dict__),
            "--frame", frame_file, *extra]  # fmt: skip
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{name} failed:\n{done.stderr[-2000:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])


def _same_rows(got: object, first: object) -> str:
    """dlt's table against a frame of ours: the observations (stamp, metric, value) it holds."""
    import pandas as pd

    assert isinstance(got, pd.DataFrame) and isinstance(first, pd.DataFrame)
    columns = list(got.columns)
    got = got.rename(columns={"name": "metric"})
    got["time_stamp"] = pd.to_datetime(got["time_stamp"], utc=True)
    # the range rule of every fetch: a bucket the service adds at the range's end is outside it
    got = got[got["time_stamp"] < pd.Timestamp(NOW)]
    for variant in [c for c in got.columns if c.startswith("value__v_")]:
        # dlt infers the column's type from the first rows; other types go to a variant
        got["value"] = got["value"].astype("float64").fillna(got[variant].astype("float64"))
    if len(got) != len(first):
        return f"NOT EQUAL ({len(got)} rows vs {len(first)})"
    keys = ["time_stamp", "metric", "value"]
    a = got[keys].astype({"metric": object, "value": "float64"})
    b = first[keys].astype({"metric": object, "value": "float64"})
    a["time_stamp"] = a["time_stamp"].dt.as_unit("us")
    b["time_stamp"] = pd.to_datetime(b["time_stamp"], utc=True).dt.as_unit("us")
    a = a.sort_values(keys).reset_index(drop=True)
    b = b.sort_values(keys).reset_index(drop=True)
    return "equal rows" if a.equals(b) else f"NOT EQUAL (columns {columns})"


def _same(name: str, frame: object, first: object) -> str:
    import pandas as pd

    assert isinstance(frame, pd.DataFrame) and isinstance(first, pd.DataFrame)
    if name == DLT:
        return _same_rows(frame, first)
    key = [c for c in first.columns if c != "value"]
    a = frame.sort_values(key).reset_index(drop=True)
    b = first.sort_values(key).reset_index(drop=True)
    try:
        pd.testing.assert_frame_equal(a, b, check_like=True)
    except AssertionError:
        return "NOT EQUAL"
    return "equal"


Row = tuple[str, list[float], int, str]


def _measure(
    names: list[str],
    sb: Sandbox,
    repeat: int,
    tmp: str,
    extra: Callable[[str], list[str]],
    check: Callable[[str, object, object], str],
) -> list[Row]:
    """Each contender ``repeat`` times in fresh processes: times, requests, the check's word.

    The contenders take turns (a round runs each once, in order), so a drift of the machine's
    speed touches all of them alike and each round gives a ratio of its own. ``extra(run)``
    gives a run's own arguments; ``check(name, saved, first)`` compares what a contender saved
    with what the first one did.
    """
    import pandas as pd

    times: dict[str, list[float]] = {name: [] for name in names}
    counts: dict[str, int] = {}
    files: dict[str, str] = {}
    for i in range(repeat):
        for k, name in enumerate(names):
            run = f"{k}-{i}"
            files[name] = os.path.join(tmp, f"{run}.pkl")
            before = sb.count()
            times[name].append(_run(name, sb, files[name], extra(run)))
            counts[name] = sb.count() - before
    first = pd.read_pickle(files[names[0]])
    return [
        (name, times[name], counts[name], check(name, pd.read_pickle(files[name]), first))
        for name in names
    ]


def _print(rows: list[Row], base: int, against: str) -> None:
    """Medians and min-max of each contender, and its ratio to ``rows[base]``: the median and
    min-max of the rounds' own ratios."""
    reference = rows[base][1]
    print(f"\n{'contender':<29} {'median s':>9} {'min-max s':>13} {'requests':>9} "
          f"{against:>10} {'min-max':>11}  rows")  # fmt: skip
    for name, times, count, same in rows:
        ratios = [t / r for t, r in zip(times, reference, strict=True)]
        spread = f"{min(ratios):>5.2f}-{max(ratios):<5.2f}"
        print(f"{name:<29} {statistics.median(times):>9.2f} {min(times):>6.2f}-{max(times):<6.2f} "
              f"{count:>9} {statistics.median(ratios):>9.2f}x {spread}  {same}")  # fmt: skip


def _subscribers(sb: Sandbox, n: int) -> list[str]:
    with urllib.request.urlopen(f"{sb.base_url}/sandbox/network", timeout=10) as answer:
        network = json.load(answer)
    return [s["msisdn"] for s in network["sims"] if s["account_id"] == sb.account][:n]


def _has_dlt() -> bool:
    try:
        import dlt  # noqa: F401
    except ImportError:
        print("dlt is not installed (pip install 'edgereports[bench]'): its row is skipped")
        return False
    return True


def pull(args: argparse.Namespace) -> None:
    """The pull: four ways to the same frame, ratios against the thread-pool loop."""
    names = ["sequential loop", "thread-pool loop", "client.fetch, defaults"]
    if _has_dlt():
        names.append(DLT)
    with sandbox(args.latency, max(64, args.subscribers)) as sb:
        msisdns = _subscribers(sb, args.subscribers)
        print(
            f"pull: {len(msisdns)} subscribers x {args.days} days HOUR, 2 metrics; sandbox "
            f"latency {args.latency * 1000:.0f} ms; {args.repeat} fresh process(es) each"
        )
        if len(names) == 4:
            print(f"dlt: {DLT_CONFIG}")
        extra = ["--msisdns", ",".join(msisdns), "--days", str(args.days)]
        with tempfile.TemporaryDirectory() as tmp:
            rows = _measure(names, sb, args.repeat, tmp, lambda run: extra, _same)
    _print(rows, 1, "vs pool")


def _same_tables(name: str, tables: object, first: object) -> str:
    assert isinstance(tables, dict) and isinstance(first, dict)
    if name != DLT:
        return ", ".join(f"{t} {len(f):,}" for t, f in tables.items())
    return ", ".join(f"{t}: {_same_rows(tables[t], f)}" for t, f in first.items())


def export(args: argparse.Namespace) -> None:
    """The export job with defaults against dlt's ``rest_api`` to Parquet."""
    from datetime import datetime

    from bench_export import job_file

    from edgereports.export import load_job

    if not _has_dlt():
        raise SystemExit("--export compares with dlt: pip install 'edgereports[bench]'")
    end = datetime.fromisoformat(NOW)
    with (
        sandbox(args.latency, max(64, args.subscribers)) as sb,
        tempfile.TemporaryDirectory() as tmp,
    ):
        msisdns = _subscribers(sb, args.subscribers)
        write = functools.partial(
            job_file, Path(tmp), sb.account, msisdns, days_day=DAY_DAYS, days_hour=args.days,
            max_workers=None, end=end,
        )  # fmt: skip
        job = write(name="export")
        spec = load_job(job)
        bodies = {
            r.name: [(m, r.for_window(r.start, end).where(msisdn=m).to_request()) for m in msisdns]
            for r in spec.reports
        }
        requests_file = Path(tmp) / "dlt-requests.json"
        requests_file.write_text(json.dumps(bodies), encoding="utf-8")
        print(
            f"export: {len(msisdns)} subscribers, {args.days} days of HOUR bytes "
            f"(byte_usage_subscriber) + {DAY_DAYS} days of DAY usage (time_usage_subscriber) to "
            f"{NOW}; sandbox latency {args.latency * 1000:.0f} ms; {args.repeat} fresh "
            f"process(es) each, each run into a new folder on local disk"
        )
        text = job.read_text(encoding="utf-8").replace(tmp, "<tmp>")
        print("edgereports: run_export(job) with the job file (defaults otherwise):")
        print("\n".join(f"    {line}" for line in text.strip().splitlines() if line.strip()))
        print(f"dlt: {DLT_CONFIG}; {len(msisdns)} x {len(bodies)} resources")

        def extra(run: str) -> list[str]:  # each run exports into a new folder
            return ["--job", str(write(name=f"export-{run}")), "--requests", str(requests_file)]

        rows = _measure([EXPORT, DLT], sb, args.repeat, tmp, extra, _same_tables)
    _print(rows, 0, "vs export")
    ratios = [d / e for d, e in zip(rows[1][1], rows[0][1], strict=True)]
    print(f"\ndlt / export: {statistics.median(ratios):.2f}x, the median of {len(ratios)} rounds' "
          f"ratios ({min(ratios):.2f}-{max(ratios):.2f}; target >= 3)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", type=int, default=50)
    parser.add_argument("--days", type=int, default=90, help="days of HOUR data")
    parser.add_argument("--latency", type=float, default=0.020, help="seconds per request")
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes per contender")
    parser.add_argument("--quick", action="store_true", help="10 subscribers x 14 days, 1 run")
    parser.add_argument("--export", action="store_true", help="the export job vs dlt")
    parser.add_argument("--contender", help=argparse.SUPPRESS)
    parser.add_argument("--sandbox", help=argparse.SUPPRESS)
    parser.add_argument("--msisdns", help=argparse.SUPPRESS)
    parser.add_argument("--frame", help=argparse.SUPPRESS)
    parser.add_argument("--job", help=argparse.SUPPRESS)
    parser.add_argument("--requests", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.contender:
        sb = Sandbox(**json.loads(args.sandbox))
        if args.job:
            export_contender(args.contender, sb, args.job, args.requests, args.frame)
        else:
            contender(args.contender, sb, args.msisdns.split(","), args.days, args.frame)
        return
    if args.quick:
        args.subscribers, args.days, args.repeat = 10, 14, 1
    from package_bytecode import compile_package

    compile_package()  # the contenders' imports are timed
    (export if args.export else pull)(args)


if __name__ == "__main__":
    main()
