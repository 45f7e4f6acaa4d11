"""Benchmark of the scheduled export against the sandbox.

Exports one year of DAY data (``time_usage_subscriber``) and 90 days of HOUR data
(``byte_usage_subscriber``) for 100 subscribers from a local sandbox (run in this process) into
a temporary directory, with the default windows (as many days as keep a window within 1M
rows, up to 366: one window per report here). Each measurement runs in a fresh subprocess,
which imports everything, runs a one-window warm-up
(1 subscriber, 1 day: it loads the modules imported lazily and opens the connection pool),
then resets its peak RSS (``VmHWM``, through ``/proc/self/clear_refs``) to its RSS at that
point, and measures its wall time and its peak RSS above that level:

- baseline: the same windows fetched with ``ReportingClient.fetch`` and dropped (no Parquet);
- export: ``run_export`` on a job file of the two reports (fetch, write, state, lock);
- export of a third of the history (the HOUR report over 30 days): the peak must not grow
  with the history, since each window is written and dropped before the next;
- the export again with ``ARROW_DEFAULT_MEMORY_POOL=system``: pyarrow's Parquet writer takes
  its encoding buffers from Arrow's process-wide default pool whatever ``memory_pool`` it is
  given, and that pool (mimalloc) holds on to whole pages of what it touched; the variable
  must be set before pyarrow is imported, so only a process's entry point can choose it;
- the same job into each destination, ``format = "parquet"``, ``"delta"`` and ``"iceberg"``
  (local), each export a fresh process as the command runs it (Arrow's system allocator), the
  three in turn, twice: per destination its best wall time, its highest peak RSS (the
  process's, imports included, and above its post-import level) and the bytes it wrote, each
  against Parquet's (target for the peak: Delta and Iceberg <= 1.5x Parquet's);
- units of work against a second sandbox (in this process too) that adds 50 ms to every
  request: four units (the HOUR report x 28 UTC days each, ``max_workers = 1``, so each unit
  sends its requests one after another) as four concurrent ``edgereports export --only --from
  --until`` processes, against the same four units run one after another by ``run_unit`` in
  one process (both into local Delta tables, process start-up included in both; target >=
  2.5x faster). The machine's cores are printed: the four processes and the sandbox share them.

The memory bound: the export may hold, beyond what fetching the same windows costs (the
fetch-only baseline's peak: a window's response bodies, its parts' frames and the stitched
frame, and what the allocators keep), at most ``max_workers + 1`` window frames (those in
flight and the one being written). Printed: rows, seconds, rows/s and the ratio to the
baseline, the share of the export's wall time spent writing Parquet vs fetching, and the peak
RSS against that bound. Nothing here is a test or an assertion.

Fleet figures (printed first, and alone with ``--fleet``): the dry-run plan of 10,000
subscribers x 2 years of HOUR data (windows, requests, rows; sharded by subscriber against
unsharded), and with ``--fleet`` one-day Delta units on an S3-compatible server (moto on
loopback, its requests counted by kind): 50 units one after another into one table, then its
units 51-60 in turn with units 1-10 of a new table (both meet the same load of the machine):
the CPU time, wall time and store requests per unit, the old table's against the new one's (a unit's
cost must not grow with the table's age), then the store requests of a whole first run, of an
incremental run at once after it and of the next day's run (an incremental run must cost less
than the first).

Destination figures (alone with ``--destinations``): the comparison of the destinations above
for 220 subscribers (about 1M rows), then the same units by age in each destination (a local
directory; Delta and Iceberg on the counting S3 server too): the median wall time per unit and
(on S3) the store requests, units 51-60 against 1-10 (target <= 1.3x).

Usage::

    python benchmarks/bench_export.py                 # 100 subscribers, 365 DAY + 90 HOUR days
    python benchmarks/bench_export.py --quick         # 20 subscribers, 60 + 14 days
    python benchmarks/bench_export.py --fleet         # the fleet figures only
    python benchmarks/bench_export.py --destinations  # the destinations only
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime(2025, 1, 1, 3, 0, tzinfo=UTC)


def job_file(
    directory: Path,
    account: str,
    msisdns: list[str],
    *,
    days_day: int,
    days_hour: int,
    max_workers: int | None,
    name: str = "job",
    fmt: str = "parquet",
    end: datetime | None = None,
) -> Path:
    """Write a job: DAY usage over ``days_day`` days and HOUR bytes over ``days_hour`` days.

    Both end at ``end`` (a UTC midnight; default: the day of ``NOW``); ``max_workers=None``
    leaves the job's default.
    """
    end = NOW.replace(hour=0) if end is None else end
    listed = ", ".join(f'"{m}"' for m in msisdns)
    reports = []
    if days_day:
        reports.append(f"""
[[reports]]
name = "usage_daily"
preset = "time_usage_subscriber"
params = {{ msisdn = [{listed}] }}
start = {(end - timedelta(days=days_day)).date().isoformat()}
""")
    if days_hour:
        reports.append(f"""
[[reports]]
name = "bytes_hourly"
preset = "byte_usage_subscriber"
params = {{ msisdn = [{listed}] }}
start = {(end - timedelta(days=days_hour)).date().isoformat()}
""")
    text = f"""
output = "{directory / name}"
format = "{fmt}"
{"" if max_workers is None else f"max_workers = {max_workers}"}

[defaults]
account_id = "{account}"
{"".join(reports)}"""
    path = directory / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _status_kib(field: str = "VmRSS") -> int:
    """A size line of ``/proc/self/status`` in KiB (``VmRSS``: now, ``VmHWM``: the peak)."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    return 0  # pragma: no cover - Linux only


def _reset_peak() -> None:
    """Reset this process's peak RSS (``VmHWM``) to its current RSS (Linux >= 4.0).

    Without it the peak of the imports and the warm-up would count as the run's.
    """
    with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
        fh.write("5")


def child(args: dict[str, Any]) -> dict[str, Any]:
    """One measurement, in this (fresh) process."""
    import numpy  # noqa: F401
    import orjson  # noqa: F401
    import pandas as pd
    import pyarrow.dataset
    import pyarrow.parquet  # noqa: F401
    import requests  # noqa: F401

    import edgereports.normalize  # noqa: F401
    from edgereports.export import load_job, run_export
    from edgereports.export.plan import plan_export, to_utc
    from edgereports.reporting import ReportingClient

    job = load_job(args["job"])
    warm = load_job(args["warm"])
    now = to_utc(args["now"])
    client = ReportingClient(args["key"], args["url"], max_workers=job.max_workers, progress=False)

    def fetch_all(which: Any) -> int:
        rows = 0
        for report in which.reports:
            for w in plan_export(report, None, now=now).windows:
                frame = client.fetch(
                    report.for_window(w.start, w.end), window=timedelta(days=report.window_days)
                )
                stamps = frame[report.time_column]
                lo, hi = pd.Timestamp(w.start), pd.Timestamp(w.end)
                rows += int(((stamps >= lo) & (stamps < hi)).sum())
                del frame, stamps
        return rows

    if args["mode"] == "baseline":
        fetch_all(warm)
    else:
        run_export(warm, client=client, now=now, progress=False)
    _reset_peak()
    base = _status_kib()
    started = time.perf_counter()
    out: dict[str, Any] = {}
    if args["mode"] == "baseline":
        out["rows"] = fetch_all(job)
    else:
        summary = run_export(job, client=client, now=now, progress=False)
        out.update(
            rows=summary.rows,
            ok=summary.ok,
            bytes=summary.bytes_written,
            files=sum(r.files for r in summary.reports),
            windows=summary.windows,
            write_seconds=sum(r.write_seconds for r in summary.reports),
            fetch_seconds=sum(r.fetch_seconds for r in summary.reports),
            largest_frame=max(r.largest_frame_bytes for r in summary.reports),
        )
    out["seconds"] = time.perf_counter() - started
    out["peak_kib"] = _status_kib("VmHWM") - base
    out["base_kib"] = base
    return out


def measure(
    mode: str, job: Path, warm: Path, sb: Any, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter (``env`` added to its environment)."""
    args = {
        "mode": mode,
        "job": str(job),
        "warm": str(warm),
        "now": NOW.isoformat(),
        "key": sb.api_key,
        "url": sb.reporting_url,
    }
    proc = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(args)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )
    if proc.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _cpu() -> tuple[float, float]:
    """CPU seconds of this process (the sandbox) and of its finished children (the units)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def _warm(sb: Any, msisdns: list[str], spans: list[tuple[datetime, datetime]]) -> None:
    """Send every request of the units once, untimed: the sandbox keeps what it computed for a
    request (its parsed form, the series' grids), so the way timed first would otherwise meet a
    cold sandbox and the other a warm one."""
    import edgereports as er

    with er.ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
        for a, b in spans:
            client.fetch(
                er.presets.byte_usage_subscriber(
                    account_id=sb.account_id, msisdn=msisdns, start=a, end=b
                )
            )


def units(subscribers: int, days: int = 28) -> dict[str, tuple[float, float, float]]:
    """Four units as four concurrent processes vs one after another in one process.

    Returns:
        Per way (``"parallel"``, ``"sequential"``): wall seconds, the CPU seconds of the units'
        processes and those of the sandbox (which serves from this process).
    """
    from edgereports.sandbox import FaultConfig, serve

    first = NOW.replace(hour=0) - timedelta(days=4 * days)
    spans = [
        (first + timedelta(days=days * i), first + timedelta(days=days * (i + 1))) for i in range(4)
    ]
    with (
        serve(
            seed=0,
            devices=max(subscribers + 20, 64),
            clock=NOW,
            faults=FaultConfig(latency=0.05),
        ) as sb,
        tempfile.TemporaryDirectory() as tmp,
    ):
        msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:subscribers]
        jobs = [
            job_file(
                Path(tmp),
                sb.account_id,
                msisdns,
                days_day=0,
                days_hour=4 * days + 1,
                max_workers=1,
                name=name,
                fmt="delta",
            )
            for name in ("parallel", "sequential")
        ]
        env = {
            **os.environ,
            "EDGEREPORTS_API_KEY": sb.api_key,
            "EDGEREPORTS_REPORTING_URL": sb.reporting_url,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        _warm(sb, msisdns, spans)
        cpu = _cpu()
        started = time.perf_counter()
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "edgereports.cli",
                    "export",
                    str(jobs[0]),
                    "--only",
                    "bytes_hourly",
                    "--from",
                    a.date().isoformat(),
                    "--until",
                    b.date().isoformat(),
                    "--no-progress",
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                cwd=ROOT,
            )
            for a, b in spans
        ]
        codes = [p.wait() for p in procs]
        parallel = time.perf_counter() - started
        after = _cpu()
        out = {"parallel": (parallel, after[1] - cpu[1], after[0] - cpu[0])}
        if any(codes):
            raise SystemExit(f"a unit process failed: {codes}")
        script = (
            "import sys; from edgereports.export import run_unit\n"
            f"for a, b in {[(a.date().isoformat(), b.date().isoformat()) for a, b in spans]!r}:\n"
            f"    assert run_unit({str(jobs[1])!r}, 'bytes_hourly', a, b).ok\n"
        )
        cpu = _cpu()
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", script], env=env, check=True, cwd=ROOT)
        sequential = time.perf_counter() - started
        after = _cpu()
        out["sequential"] = (sequential, after[1] - cpu[1], after[0] - cpu[0])
    return out


def _moto(port: int) -> subprocess.Popen[bytes]:
    """The request-counting S3 server (``s3_counting.py``) on ``port``, with one bucket."""
    import socket
    import urllib.request

    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("s3_counting.py")), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise SystemExit("the counting S3 server did not start") from None
            time.sleep(0.1)
    request = urllib.request.Request(f"http://127.0.0.1:{port}/bench", method="PUT")
    urllib.request.urlopen(request, timeout=10).read()
    return server


@contextlib.contextmanager
def counting_store() -> Iterator[Callable[[], dict[str, int]]]:
    """The request-counting S3 server on a free port, its settings in the environment; yields
    a function answering its counts so far (requests by kind)."""
    import socket
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    server = _moto(port)
    settings = {
        "AWS_ENDPOINT_URL": url,
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench-not-a-secret",
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
    }
    saved = {k: os.environ.get(k) for k in settings}
    os.environ.update(settings)

    def counts() -> dict[str, int]:
        with urllib.request.urlopen(f"{url}/_counts", timeout=10) as answer:
            got: dict[str, int] = json.loads(answer.read())
        return got

    try:
        yield counts
    finally:
        server.terminate()
        server.wait(10)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _since(counts: Callable[[], dict[str, int]], before: dict[str, int]) -> dict[str, int]:
    after = counts()
    return {k: after[k] - before.get(k, 0) for k in after}


def units_by_age(
    count: int, fmt: str = "delta", s3: bool = True, subscribers: int = 3
) -> tuple[list[tuple[float, dict[str, int]]], list[tuple[float, dict[str, int]]]]:
    """One-day units of a DAY report into two tables of ``fmt`` (on an S3-compatible server on
    loopback, or a local directory): ``count - 10`` units one after another into the old
    table, then its last ten units (``count - 9`` to ``count``) in turn with the first ten of
    a new table, so that both meet the same load of the machine. Per unit its wall time, the
    CPU time of this process (the unit's, and the sandbox's serving it; in microseconds, as
    ``cpu_us``) and (on S3) the store's requests by kind: the new table's ten, and the old
    table's last ten.
    """
    from edgereports.export import load_job, run_unit
    from edgereports.reporting import ReportingClient
    from edgereports.sandbox import serve

    first = NOW.replace(hour=0) - timedelta(days=count)
    young: list[tuple[float, dict[str, int]]] = []
    old: list[tuple[float, dict[str, int]]] = []
    with contextlib.ExitStack() as stack:
        counts = stack.enter_context(counting_store()) if s3 else dict
        sb = stack.enter_context(serve(seed=0, clock=NOW))
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:subscribers]
        jobs = {}
        for age in ("young", "old"):
            (tmp / age).mkdir()
            output = f"s3://bench/{age}-{fmt}" if s3 else str(tmp / age / "out")
            path = _usage_job(tmp / age, output, sb.account_id, msisdns, first, fmt=fmt)
            jobs[age] = load_job(path)
        client = stack.enter_context(ReportingClient(sb.api_key, sb.reporting_url, progress=False))

        def unit(age: str, i: int) -> tuple[float, dict[str, int]]:
            before = counts()
            started, cpu = time.perf_counter(), time.process_time()
            day = (first + timedelta(days=i)).date()
            summary = run_unit(jobs[age], "usage", day, client=client, now=NOW)
            seconds = time.perf_counter() - started
            if not summary.ok:
                raise SystemExit(f"{fmt} unit {day} failed: {summary}")
            got = _since(counts, before) if s3 else {}
            return seconds, {**got, "cpu_us": round((time.process_time() - cpu) * 1e6)}

        for i in range(count - 10):
            unit("old", i)
        for i in range(10):
            young.append(unit("young", i))
            old.append(unit("old", count - 10 + i))
    return young, old


def _usage_job(
    where: Path,
    output: str,
    account: str,
    msisdns: list[str],
    start: datetime,
    window_days: int | None = None,
    fmt: str = "delta",
) -> Path:
    """A job file (``fmt``, default Delta) of one DAY report of ``msisdns`` from ``start``."""
    listed = ", ".join(f'"{m}"' for m in msisdns)
    windows = f"window_days = {window_days}\n" if window_days else ""
    path = where / "usage.toml"
    path.write_text(
        f'output = "{output}"\nformat = "{fmt}"\n[defaults]\naccount_id = "{account}"\n'
        f'[[reports]]\nname = "usage"\npreset = "time_usage_subscriber"\n'
        f"params = {{ msisdn = [{listed}] }}\nstart = {start.date().isoformat()}\n{windows}",
        encoding="utf-8",
    )
    return path


def s3_incremental(days: int = 60, subscribers: int = 3) -> None:
    """Print the store requests of a first run (``days`` of DAY data in 4-day windows) into a
    Delta table on the counting S3 server, of an incremental run at once after it, and of the
    next day's run: an incremental run must cost less than the first."""
    from edgereports.export import load_job, run_export
    from edgereports.reporting import ReportingClient
    from edgereports.sandbox import serve

    first = NOW.replace(hour=0) - timedelta(days=days)
    with (
        counting_store() as counts,
        serve(seed=0, clock=NOW) as sb,
        tempfile.TemporaryDirectory() as tmp,
    ):
        msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:subscribers]
        path = _usage_job(Path(tmp), "s3://bench/runs", sb.account_id, msisdns, first, 4)
        job = load_job(path)
        runs = []
        with ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
            for label, now in (
                ("first run", NOW),
                ("incremental, at once", NOW),
                ("incremental, next day", NOW + timedelta(days=1)),
            ):
                before = counts()
                summary = run_export(job, client=client, now=now)
                if not summary.ok:
                    raise SystemExit(f"{label} failed: {summary}")
                runs.append((label, len(summary.reports[0].plan.windows), _since(counts, before)))
    print(
        f"store requests of whole runs, {days} days of DAY data in 4-day windows (Delta on moto):"
    )
    base = sum(runs[0][2].values())
    for label, windows, got in runs:
        total = sum(got.values())
        print(
            f"  {label:<22} {windows:3d} window(s) {total:6d} requests = {total / base:.2f} x "
            f"the first (log reads {got.get('GET log', 0)}, data writes {got.get('PUT data', 0)})"
        )


def print_units(
    runs: tuple[list[tuple[float, dict[str, int]]], list[tuple[float, dict[str, int]]]],
    count: int,
    what: str = "Delta, S3",
) -> None:
    """Print unit CPU and wall time (median) and store requests (mean) of a new table's units
    1-10 against an old table's last ten, run in turn (:func:`units_by_age`): on a shared
    machine, CPU time tells a unit's cost better than wall time."""
    head, tail = runs

    def median_seconds(part: list[tuple[float, dict[str, int]]]) -> float:
        return statistics.median(s for s, _ in part)

    def mean_requests(part: list[tuple[float, dict[str, int]]], kind: str | None = None) -> float:
        total = sum(v for _, c in part for k, v in c.items() if k != "cpu_us" and kind in (None, k))
        return total / len(part)

    def median_cpu(part: list[tuple[float, dict[str, int]]]) -> float:
        return statistics.median(c["cpu_us"] for _, c in part) / 1e6

    print(
        f"one-day units ({what}), per unit: units 1-10 of a new table vs {count - 9}-{count} "
        "of an old one, in turn:"
    )
    c0, c1 = median_cpu(head), median_cpu(tail)
    print(f"  CPU time       {c0:8.3f} s  {c1:8.3f} s  = {c1 / c0:.2f} x (median; target <= 1.3)")
    t0, t1 = median_seconds(head), median_seconds(tail)
    print(f"  wall time      {t0:8.3f} s  {t1:8.3f} s  = {t1 / t0:.2f} x (median)")
    if any(len(c) > 1 for _, c in head + tail):  # on the counting S3 server
        r0, r1 = mean_requests(head), mean_requests(tail)
        g0, g1 = mean_requests(head, "GET log"), mean_requests(tail, "GET log")
        print(f"  store requests {r0:8.1f}    {r1:8.1f}    = {r1 / r0:.2f} x (target <= 1.3)")
        most = max(mean_requests([u]) for u in head + tail)
        print(f"  of which log reads {g0:.1f} and {g1:.1f}; most in one unit {most:.0f}")


#: The export's destinations, Parquet (the baseline of the ratios) first.
DESTINATIONS = ("parquet", "delta", "iceberg")


def destinations(
    sb: Any,
    where: Path,
    msisdns: list[str],
    *,
    days_day: int,
    days_hour: int,
    max_workers: int,
    rounds: int = 2,
) -> dict[str, list[dict[str, Any]]]:
    """The same job exported into each destination (local), each run in a fresh process as
    the command runs it (``ARROW_DEFAULT_MEMORY_POOL=system``), the destinations in turn,
    ``rounds`` times; the measurements by destination."""
    out: dict[str, list[dict[str, Any]]] = {fmt: [] for fmt in DESTINATIONS}
    env = {"ARROW_DEFAULT_MEMORY_POOL": "system"}
    for round_ in range(rounds):
        for fmt in DESTINATIONS:
            name = f"{fmt}{round_}"
            spec = job_file(
                where,
                sb.account_id,
                msisdns,
                days_day=days_day,
                days_hour=days_hour,
                max_workers=max_workers,
                name=name,
                fmt=fmt,
            )
            warm = job_file(
                where,
                sb.account_id,
                msisdns[:1],
                days_day=0,
                days_hour=1,
                max_workers=max_workers,
                name=f"warm-{name}",
                fmt=fmt,
            )
            out[fmt].append(measure("export", spec, warm, sb, env=env))
    return out


def print_destinations(runs: dict[str, list[dict[str, Any]]]) -> None:
    """Print wall time, peak memory and bytes per destination against Parquet's: the best
    wall time of the rounds, the highest peak of the rounds."""
    best = {fmt: min(r["seconds"] for r in rs) for fmt, rs in runs.items()}
    peak = {
        fmt: max((r["base_kib"] + r["peak_kib"]) / 1024 for r in rs) for fmt, rs in runs.items()
    }
    above = {fmt: max(r["peak_kib"] / 1024 for r in rs) for fmt, rs in runs.items()}
    size = {fmt: rs[0]["bytes"] / 1e6 for fmt, rs in runs.items()}
    rows = {fmt: rs[0]["rows"] for fmt, rs in runs.items()}
    base = "parquet"
    print(
        f"destinations, the same job ({rows[base]:,} rows, {len(runs[base])} rounds, each "
        f"export a fresh process): best wall time, highest peak RSS, bytes written; x parquet"
    )
    print(
        f"{'':<10}{'rows':>11}{'wall s':>9}{'x':>6}{'peak MiB':>10}{'x':>6}"
        f"{'above import':>14}{'x':>6}{'MB':>8}{'x':>6}"
    )
    for fmt in runs:
        print(
            f"{fmt:<10}{rows[fmt]:>11,}{best[fmt]:>9.2f}{best[fmt] / best[base]:>6.2f}"
            f"{peak[fmt]:>10.1f}{peak[fmt] / peak[base]:>6.2f}{above[fmt]:>14.1f}"
            f"{above[fmt] / above[base]:>6.2f}{size[fmt]:>8.2f}{size[fmt] / size[base]:>6.2f}"
        )
    ok = all(r["ok"] for rs in runs.values() for r in rs)
    print(
        "  (peak: the process's peak RSS, imports included (target: delta and iceberg <= 1.5 "
        f"x parquet); above import: its peak above its RSS after imports and a warm-up); ok={ok}"
    )


def fleet_plan(subscribers: int = 10_000, years: int = 2) -> None:
    """Print the dry-run plan of HOUR usage of ``subscribers`` over ``years`` (no request):
    windows, requests and rows, sharded as the export plans it and unsharded."""
    import dataclasses

    from edgereports.export import load_job, run_export
    from edgereports.export.estimate import estimate, format_duration
    from edgereports.export.plan import plan_export

    listed = ", ".join(f'"9190{n:08d}"' for n in range(subscribers))
    start = NOW.replace(year=NOW.year - years, hour=0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fleet.toml"
        path.write_text(
            f'output = "{Path(tmp) / "out"}"\nrate_limit = "10/s"\n[[reports]]\n'
            f'name = "bytes"\npreset = "byte_usage_subscriber"\n'
            f'params = {{ msisdn = [{listed}] }}\ngranularity = "HOUR"\n'
            f'account_id = "A1"\nstart = {start.date().isoformat()}\n',
            encoding="utf-8",
        )
        job = load_job(path)
        started = time.perf_counter()
        summary = run_export(job, now=NOW.replace(hour=0), dry_run=True)
        seconds = time.perf_counter() - started
    plan = summary.reports[0].plan
    report = job.reports[0]
    plain = plan_export(dataclasses.replace(report, shard_size=0), None, now=NOW.replace(hour=0))
    unsharded = estimate(report, plain.windows)
    print(
        f"fleet plan (--dry-run, no request): {subscribers:,} subscribers x {years} years of "
        f"HOUR ({plan.begin.date()} → {plan.end.date()}), planned in {seconds:.2f} s:"
    )
    print(
        f"  sharded ({report.shard_size} subscribers a shard, ranges of up to 366 days): "
        f"{len(plan.windows):,} windows, {plan.requests:,} requests (target <= 25,000), at "
        f"most {plan.rows:,} rows; at 10 requests/s {format_duration(plan.requests / 10)}"
    )
    print(
        f"  unsharded ({report.window_days}-day windows of every subscriber): "
        f"{len(plain.windows):,} windows, {unsharded.requests:,} requests "
        f"= {unsharded.requests / plan.requests:.0f} x"
    )


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 subscribers, 60 + 14 days")
    parser.add_argument("--subscribers", type=int, help="default 100 (--destinations: 220)")
    parser.add_argument("--max-workers", type=int, default=4)
    parser.add_argument("--unit-days", type=int, default=28, help="UTC days per unit (HOUR)")
    parser.add_argument(
        "--fleet",
        action="store_true",
        help="only the fleet figures: the 10,000 x 2 years plan and 60 one-day Delta units "
        "on an S3-compatible server (moto), units 51-60 vs 1-10",
    )
    parser.add_argument("--s3-units", type=int, default=60, help="units of --fleet")
    parser.add_argument(
        "--destinations",
        action="store_true",
        help="only the destinations: the same job into Parquet, Delta and Iceberg (220 "
        "subscribers unless --subscribers: about 1M rows), and 60 one-day units into each "
        "(local; Delta and Iceberg on S3 too), units 51-60 vs 1-10",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        print(json.dumps(child(json.loads(opts.child))))
        return
    if opts.destinations:
        compare_destinations(opts.subscribers or 220, opts.max_workers, opts.s3_units)
        return
    fleet_plan()
    if opts.fleet:
        print_units(units_by_age(opts.s3_units), opts.s3_units)
        s3_incremental()
        return
    from package_bytecode import compile_package

    compile_package()  # the units' processes are timed with their imports
    subscribers = 20 if opts.quick else (opts.subscribers or 100)
    days_day, days_hour = (60, 14) if opts.quick else (365, 90)
    w = opts.max_workers

    from edgereports.sandbox import serve

    with (
        serve(seed=0, devices=max(subscribers + 20, 64), clock=NOW) as sb,
        tempfile.TemporaryDirectory() as tmp,
    ):
        msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:subscribers]
        where = Path(tmp)
        full = job_file(
            where, sb.account_id, msisdns, days_day=days_day, days_hour=days_hour, max_workers=w
        )
        third = job_file(
            where,
            sb.account_id,
            msisdns,
            days_day=0,
            days_hour=days_hour // 3,
            max_workers=w,
            name="third",
        )
        warm = job_file(
            where, sb.account_id, msisdns[:1], days_day=0, days_hour=1, max_workers=w, name="warm"
        )
        measure("baseline", full, warm, sb)  # the sandbox's own caches warm up
        base = measure("baseline", full, warm, sb)
        run = measure("export", full, warm, sb)
        short = measure("export", third, warm, sb)
        whole = functools.partial(
            job_file, where, sb.account_id, msisdns, days_day=days_day, days_hour=days_hour
        )
        again = whole(max_workers=w, name="system")
        system = measure("export", again, warm, sb, env={"ARROW_DEFAULT_MEMORY_POOL": "system"})
        formats = destinations(
            sb, where, msisdns, days_day=days_day, days_hour=days_hour, max_workers=w
        )
    ways = units(subscribers, opts.unit_days)
    together, one_by_one = ways["parallel"][0], ways["sequential"][0]

    frames = (w + 1) * run["largest_frame"] / 2**20
    fetching = base["peak_kib"] / 1024
    bound = fetching + frames
    peak = run["peak_kib"] / 1024
    write_share = run["write_seconds"] / run["seconds"]
    print(
        f"export of {subscribers} subscribers: {days_day} days of DAY + {days_hour} days of "
        f"HOUR, max_workers={w}: {run['windows']} windows, {run['files']} partitions, "
        f"{run['bytes'] / 1e6:.1f} MB of Parquet, ok={run['ok']}"
    )
    print(f"{'':<30}{'rows':>10}{'seconds':>10}{'rows/s':>10}{'x baseline':>12}")
    for label, r in (("baseline: fetch only", base), ("export: fetch+write+state", run)):
        print(
            f"{label:<30}{r['rows']:>10,}{r['seconds']:>10.2f}{r['rows'] / r['seconds']:>10,.0f}"
            f"{r['seconds'] / base['seconds']:>12.2f}"
        )
    print(
        f"export wall time: writing Parquet {write_share:.1%}, fetching and the rest "
        f"{1 - write_share:.1%}"
    )
    print(
        f"largest window frame {run['largest_frame'] / 2**20:.2f} MiB; "
        f"bound = fetch-only peak {fetching:.1f} MiB + (max_workers+1) x frame {frames:.1f} MiB "
        f"= {bound:.1f} MiB"
    )
    print(
        f"peak RSS above the post-import level: export {peak:.1f} MiB = {peak / bound:.2f} x "
        f"bound ({'under' if peak < bound else 'OVER'}); above the fetch-only peak "
        f"{peak - fetching:+.1f} MiB = {(peak - fetching) / frames:.2f} x the frames' share"
    )
    print(
        f"peak vs history: {days_hour // 3} days of HOUR alone {short['peak_kib'] / 1024:.1f} "
        f"MiB, the whole export {peak:.1f} MiB (post-import RSS {run['base_kib'] / 1024:.0f} MiB)"
    )
    other = system["peak_kib"] / 1024
    print(
        f"with ARROW_DEFAULT_MEMORY_POOL=system (the Parquet writer's own buffers, which take "
        f"Arrow's process-wide default pool, from the system allocator instead of mimalloc): "
        f"export {other:.1f} MiB = {other / bound:.2f} x bound, {system['rows']:,} rows in "
        f"{system['seconds']:.2f} s"
    )
    print_destinations(formats)
    print(
        f"units against 50 ms latency, 4 units x {opts.unit_days} days of HOUR x {subscribers} "
        f"subscribers, max_workers=1, {os.cpu_count()} cores: four processes at once "
        f"{together:.2f} s, one after another in one process {one_by_one:.2f} s: "
        f"{one_by_one / together:.2f} x faster (target >= 2.5)"
    )
    for way, (wall, units_cpu, sandbox_cpu) in ways.items():
        print(
            f"  {way}: CPU of the unit processes {units_cpu:.2f} s, of the sandbox "
            f"{sandbox_cpu:.2f} s, over {wall:.2f} s of wall time "
            f"({(units_cpu + sandbox_cpu) / wall:.2f} cores busy of {os.cpu_count()})"
        )


def compare_destinations(subscribers: int, max_workers: int, units: int) -> None:
    """Print the destinations against Parquet (:func:`print_destinations`), and then the
    cost of one-day units as each destination's table grows."""
    from edgereports.sandbox import serve

    with (
        serve(seed=0, devices=max(subscribers + 20, 64), clock=NOW) as sb,
        tempfile.TemporaryDirectory() as tmp,
    ):
        msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:subscribers]
        warm = job_file(Path(tmp), sb.account_id, msisdns, days_day=1, days_hour=1, max_workers=1)
        measure("baseline", warm, warm, sb)  # the sandbox's own caches warm up
        runs = destinations(
            sb, Path(tmp), msisdns, days_day=365, days_hour=90, max_workers=max_workers
        )
    print(
        f"{subscribers} subscribers: 365 days of DAY + 90 days of HOUR, max_workers={max_workers}"
    )
    print_destinations(runs)
    for fmt in DESTINATIONS:
        print_units(units_by_age(units, fmt, s3=False), units, f"{fmt}, a local directory")
    for fmt in DESTINATIONS[1:]:
        print_units(units_by_age(units, fmt, s3=True), units, f"{fmt}, S3 (moto on loopback)")


if __name__ == "__main__":
    main()
