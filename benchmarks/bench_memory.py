"""Benchmark of a pull's memory, of warm reads from the cache and of an export's first run.

Each figure is measured in fresh processes against a baseline measured in the same run: an
earlier tree of the package (``--against``, by default ``b692f50``, the release before one
pipeline of Arrow tables: ``git archive`` writes it to a temporary directory and its processes
import it through ``PYTHONPATH``), and fixed baselines of the same rows (their Arrow table,
``pd.read_parquet``). A sandbox in a child process (no latency) serves both trees.

1. Memory (``--only memory``): HOUR byte usage (two metrics) of 10, 100 and 1,000
   subscribers over 30 days, one pull per process. The process first pulls one day of the
   same subscribers and the 30 days of one (its threads, connections and readers start),
   then resets its peak RSS (``VmHWM``, through ``/proc/self/clear_refs``) and pulls. Printed
   per tree: the peak RSS above the level before the pull (Arrow allocates outside
   ``tracemalloc``), the frame's memory (the buffers its columns hold, each counted once),
   the CPU seconds of the pull and the threads it started (each takes memory of its own);
   then the ratios of this tree's peak to the earlier tree's (target <= 1.0x) and to the
   Arrow table of the rows (the frame written to Parquet and read back by pyarrow: plain
   arrays, target <= 1.3x), and of the frame to that table.
2. Warm reads (``--only warm``): a year of HOUR byte usage of 57 subscribers (1,001,376
   points) and of 228 (4,005,504), pulled into an empty cache, then pulled warm in a fresh
   process (against ``pd.read_parquet`` of the same rows from one file, in a fresh process;
   the two alternated, the best of ``--rounds`` each; target <= 1.5x), and again in the same
   process (a notebook's second pull). pandas is imported before each clock starts, the
   client is made before it; the other imports a pull or a read makes are counted.
3. Export (``--only export``): ``run_export`` of a job of 100 subscribers (HOUR bytes over 90
   days, DAY usage over a year) into an empty folder, the first run of a fresh process, the
   imports counted (as a scheduled run pays them): the trees alternated, after one untimed
   run that warms the sandbox; the best wall time and the highest peak RSS of ``--rounds``
   each, and their ratios (target <= 1.0x).

4. pandas (``--only pandas``): operations an analyst runs on a pulled frame (the 1,000
   subscribers of section 1), on the frame as pulled (its text columns slices of one array per
   value) against the same frame with each text column one array; the best of 5 each, in
   one process of this tree.

Nothing here is a test; timings on a shared machine are noisy, so run a section a few times.

Usage::

    python benchmarks/bench_memory.py                    # all four, against b692f50
    python benchmarks/bench_memory.py --only memory      # one section
    python benchmarks/bench_memory.py --against none     # the fixed baselines only
    python benchmarks/bench_memory.py --only warm --points 1001376 --rounds 5
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOW = "2024-06-01T00:00:00+00:00"  # the sandbox's clock (bench_peers.py)
SUBSCRIBERS = (10, 100, 1000)
MEMORY_DAYS = 30
WARM = {1_001_376: 57, 4_005_504: 228}  # points: subscribers (a year of HOUR, two metrics)
WARM_RANGE = ("2023-05-01", "2024-05-01")
EXPORT_SUBSCRIBERS = 100
MiB = 2**20


# -- the measurements, each in a fresh process (``--child``) ------------------------------------


def _status(field: str) -> int:
    """A size line of ``/proc/self/status``, in bytes (``VmRSS``: now; ``VmHWM``: the peak)."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    return 0  # pragma: no cover - Linux only


def _reset_peak() -> None:
    """Reset this process's peak RSS to its RSS now (Linux >= 4.0)."""
    with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
        fh.write("5")


def _report(args: dict[str, Any], msisdns: list[str], start: str, end: str) -> Any:
    import edgereports as er

    return er.presets.byte_usage_subscriber(
        account_id=args["account"], msisdn=msisdns, start=start, end=end
    )


def _frame_bytes(frame: Any) -> int:
    """The bytes of the buffers a frame's columns hold, each buffer counted once."""
    import pyarrow as pa

    seen: set[int] = set()
    total = 0
    for name in frame.columns:
        column = frame[name]
        try:
            held = pa.chunked_array(pa.array(column.array))
        except (TypeError, ValueError, pa.ArrowException):  # pragma: no cover - object columns
            total += int(column.memory_usage(index=False, deep=True))
            continue
        if not str(column.dtype).startswith("string"):  # numpy columns: their own memory
            total += int(column.to_numpy().nbytes)
            continue
        for chunk in held.chunks:
            for buffer in chunk.buffers():
                if buffer is not None and buffer.address not in seen:
                    seen.add(buffer.address)
                    total += buffer.size
    return total


def _arrow_bytes(frame: Any) -> int:
    """The bytes of the rows as a plain Arrow table: written to Parquet, read back."""
    import io

    import pyarrow.parquet as pq

    sink = io.BytesIO()
    frame.to_parquet(sink, index=False)
    sink.seek(0)
    return int(pq.read_table(sink).nbytes)


def child_memory(args: dict[str, Any]) -> dict[str, Any]:
    """One pull of ``args["n"]`` subscribers: its peak RSS, frame and CPU."""
    import gc
    from datetime import datetime, timedelta

    import pandas  # noqa: F401
    import pyarrow  # noqa: F401

    import edgereports as er

    sims = args["sims"][: args["n"]]
    end = datetime.fromisoformat(NOW)
    days = [(end - timedelta(days=d)).isoformat() for d in (args["days"], 1)]
    client = er.ReportingClient(args["key"], args["url"], progress=False)
    client.fetch(_report(args, sims, days[1], end.isoformat()))  # threads and connections
    client.fetch(_report(args, sims[:1], days[0], end.isoformat()))  # the large answers' reader
    gc.collect()
    threads = len(os.listdir("/proc/self/task"))
    _reset_peak()
    base = _status("VmRSS")
    cpu = time.process_time()
    frame = client.fetch(_report(args, sims, days[0], end.isoformat()))
    cpu = time.process_time() - cpu
    peak = _status("VmHWM") - base
    return {
        "tree": er.__file__,
        "rows": len(frame),
        "peak": peak,
        "threads": len(os.listdir("/proc/self/task")) - threads,
        "cpu": cpu,
        "frame": _frame_bytes(frame),
        "arrow": _arrow_bytes(frame),
    }


def child_warm(args: dict[str, Any]) -> dict[str, Any]:
    """A pull of a year of ``args["sims"]`` through the cache (and the same pull again), or
    the pull that fills the cache and writes its rows to ``args["parquet"]``."""
    import pandas  # noqa: F401 - imported before the clock starts, as in the baseline

    import edgereports as er

    report = _report(args, args["sims"], *WARM_RANGE)
    client = er.ReportingClient(args["key"], args["url"], cache=args["cache"], progress=False)
    started = time.perf_counter()
    frame = client.fetch(report)
    seconds = time.perf_counter() - started
    if args.get("parquet"):
        frame.to_parquet(args["parquet"], index=False)
        return {"tree": er.__file__, "rows": len(frame), "cache": frame.attrs["cache"]}
    started = time.perf_counter()
    again = client.fetch(report)
    return {
        "tree": er.__file__,
        "rows": len(frame),
        "seconds": seconds,
        "again": time.perf_counter() - started,
        "same": bool(again.equals(frame)),
        "cache": frame.attrs["cache"],
    }


def child_read(args: dict[str, Any]) -> dict[str, Any]:
    """``pd.read_parquet`` of the rows a warm pull returns."""
    import pandas as pd

    started = time.perf_counter()
    frame = pd.read_parquet(args["parquet"])
    return {"rows": len(frame), "seconds": time.perf_counter() - started}


def child_export(args: dict[str, Any]) -> dict[str, Any]:
    """The first run of an export job, imports counted; its wall time and peak RSS."""
    from datetime import datetime

    started = time.perf_counter()
    import edgereports as er
    from edgereports.export import run_export

    client = er.ReportingClient(args["key"], args["url"], progress=False)
    imported = time.perf_counter()
    base = _status("VmRSS")
    summary = run_export(
        args["job"], client=client, now=datetime.fromisoformat(NOW), progress=False
    )
    done = time.perf_counter()
    assert summary.ok, summary
    return {
        "tree": er.__file__,
        "rows": summary.rows,
        "seconds": done - started,
        "run": done - imported,
        "peak": _status("VmHWM"),
        "peak_run": _status("VmHWM") - base,
    }


def child_pandas(args: dict[str, Any]) -> dict[str, Any]:
    """Operations on a pulled frame, as pulled and with each text column one array."""
    import io
    from datetime import datetime, timedelta

    import pandas as pd
    import pyarrow as pa

    import edgereports as er

    end = datetime.fromisoformat(NOW)
    start = (end - timedelta(days=args["days"])).isoformat()
    client = er.ReportingClient(args["key"], args["url"], progress=False)
    pulled = client.fetch(_report(args, args["sims"][: args["n"]], start, end.isoformat()))
    joined = pulled.copy()
    for name in pulled.columns:
        if str(pulled[name].dtype) == "string":
            one = pa.chunked_array(pa.array(pulled[name].array)).combine_chunks()
            joined[name] = pd.Series(pd.arrays.ArrowStringArray(one), dtype=pulled[name].dtype)
    some = list(pulled["msisdn"].drop_duplicates()[:10])
    ops = {
        "groupby(msisdn).sum": lambda d: d.groupby("msisdn")["value"].sum(),
        "groupby(msisdn, metric).sum": lambda d: d.groupby(["msisdn", "metric"])["value"].sum(),
        "d[d.metric == m]": lambda d: d[d["metric"] == "uplink_bytes"],
        "d[d.msisdn.isin(10)]": lambda d: d[d["msisdn"].isin(some)],
        "sort_values(msisdn, time)": lambda d: d.sort_values(["msisdn", "time_stamp"]),
        "pivot_table(time x metric)": lambda d: d.pivot_table(
            index="time_stamp", columns="metric", values="value", aggfunc="sum"
        ),
        "to_parquet": lambda d: d.to_parquet(io.BytesIO(), index=False),
        "repr": repr,
    }
    out: dict[str, list[float]] = {}
    for name, op in ops.items():
        best = [float("inf"), float("inf")]
        for _ in range(5):
            for k, frame in enumerate((pulled, joined)):
                started = time.perf_counter()
                op(frame)
                best[k] = min(best[k], time.perf_counter() - started)
        out[name] = best
    return {"tree": er.__file__, "rows": len(pulled), "ops": out}


CHILDREN = {
    "memory": child_memory,
    "warm": child_warm,
    "read": child_read,
    "export": child_export,
    "pandas": child_pandas,
}


# -- the driver ---------------------------------------------------------------------------------


def measure(mode: str, tree: Path, args: dict[str, Any]) -> dict[str, Any]:
    """Run ``mode`` in a fresh interpreter importing the package from ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode],
        input=json.dumps(args),
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=tree,
    )
    if done.returncode:
        raise SystemExit(f"{mode} in {tree} failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if "tree" in result and not result["tree"].startswith(str(tree)):
        raise SystemExit(f"{mode} imported {result['tree']}, not the tree under {tree}")
    return result


@contextlib.contextmanager
def trees(against: str) -> Iterator[dict[str, Path]]:
    """This tree and, unless ``against`` is ``none``, the tree of that commit (compiled)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = {"this": ROOT}
        if against != "none":
            old = Path(tmp) / "old"
            old.mkdir()
            archive = subprocess.run(
                ["git", "archive", against], cwd=ROOT, capture_output=True, check=False
            )
            if archive.returncode:
                raise SystemExit(f"git archive {against} failed: {archive.stderr.decode()}")
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
            out[against] = old
        for tree in out.values():
            compileall.compile_dir(str(tree / "edgereports"), quiet=1)
        yield out


def _mb(n: float) -> str:
    return f"{n / MiB:7.1f} MB"


def memory(sb: Any, sims: list[str], tree_of: dict[str, Path], repeat: int) -> None:
    """Section 1: the peak memory of pulls of 10, 100 and 1,000 subscribers."""
    names = list(tree_of)
    print(f"1. peak memory of a pull: HOUR bytes, 2 metrics, {MEMORY_DAYS} days, fresh processes")
    for n in SUBSCRIBERS:
        got: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        for _ in range(repeat):
            for name in names:
                args = {"key": sb.key, "url": sb.reporting_url, "account": sb.account,
                        "sims": sims, "n": n, "days": MEMORY_DAYS}  # fmt: skip
                got[name].append(measure("memory", tree_of[name], args))
        best = {name: min(runs, key=lambda r: r["peak"]) for name, runs in got.items()}
        this = best["this"]
        arrow = this["arrow"]
        print(f"  {n:>5} subscribers, {this['rows']:>9,} rows; the rows' Arrow table {_mb(arrow)}")
        for name in names:
            r = best[name]
            print(
                f"    {name:>8}: peak {_mb(r['peak'])} ({r['peak'] / arrow:.2f}x the table), "
                f"frame {_mb(r['frame'])} ({r['frame'] / arrow:.2f}x), CPU {r['cpu']:.2f} s, "
                f"threads started {r['threads']}"
            )
        for name in names[1:]:
            old = best[name]
            print(
                f"    this / {name}: peak {this['peak'] / old['peak']:.2f}x (target <= 1.0x), "
                f"CPU {this['cpu'] / old['cpu']:.2f}x"
            )
        print(f"    peak / Arrow table: {this['peak'] / arrow:.2f}x (target <= 1.3x)")


def warm(sb: Any, sims: list[str], tree_of: dict[str, Path], sizes: list[int], rounds: int) -> None:
    """Section 2: warm pulls against ``pd.read_parquet`` of the same rows."""
    print(f"2. warm cached pull vs pd.read_parquet, a year of HOUR ({WARM_RANGE[0]}..), "
          f"best of {rounds} fresh processes each, alternated")  # fmt: skip
    for points in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            base = {"key": sb.key, "url": sb.reporting_url, "account": sb.account,
                    "sims": sims[: WARM[points]]}  # fmt: skip
            parquet = str(Path(tmp) / "rows.parquet")
            args = {name: {**base, "cache": str(Path(tmp) / name)} for name in tree_of}
            filled = {
                name: measure("warm", tree, {**args[name], "parquet": f"{parquet}.{name}"})
                for name, tree in tree_of.items()
            }
            os.replace(f"{parquet}.this", parquet)
            pulls: dict[str, list[dict[str, Any]]] = {name: [] for name in tree_of}
            reads = []
            for _ in range(rounds):
                for name, tree in tree_of.items():
                    pulls[name].append(measure("warm", tree, args[name]))
                reads.append(measure("read", ROOT, {"parquet": parquet}))
        read = min(r["seconds"] for r in reads)
        rows = filled["this"]["rows"]
        print(f"  {rows:>9,} points ({WARM[points]} subscribers): pd.read_parquet {read:.3f} s")
        for name, runs in pulls.items():
            assert all(p["cache"]["misses"] == 0 and p["same"] for p in runs), runs
            assert {p["rows"] for p in runs} == {r["rows"] for r in reads} == {rows}
            pull = min(p["seconds"] for p in runs)
            again = min(p["again"] for p in runs)
            print(
                f"    {name:>8}: warm {pull:.3f} s, {pull / read:.2f}x"
                f"{' (target <= 1.5x)' if name == 'this' else ''}; "
                f"again in the same process {again:.3f} s, {again / read:.2f}x"
            )


def export(sb: Any, sims: list[str], tree_of: dict[str, Path], rounds: int) -> None:
    """Section 3: an export's first run against the earlier tree's."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from datetime import datetime

    from bench_export import job_file

    names = list(tree_of)
    print(f"3. export, first run of a fresh process (imports counted): {EXPORT_SUBSCRIBERS} "
          f"subscribers, HOUR bytes 90 days + DAY usage 365 days, Parquet")  # fmt: skip
    got: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as tmp:
        end = datetime.fromisoformat(NOW)
        for k in range(rounds + 1):  # the first warms the sandbox, untimed
            for name in names:
                folder = Path(tmp) / f"{name}-{k}"
                folder.mkdir()
                job = job_file(folder, sb.account, sims[:EXPORT_SUBSCRIBERS], days_day=365,
                               days_hour=90, max_workers=None, end=end)  # fmt: skip
                args = {"key": sb.key, "url": sb.reporting_url, "job": str(job)}
                result = measure("export", tree_of[name], args)
                if k:
                    got[name].append(result)
    for name in names:
        runs = got[name]
        best = min(r["seconds"] for r in runs)
        print(
            f"    {name:>8}: {runs[0]['rows']:,} rows; best {best:.2f} s "
            f"(the run alone {min(r['run'] for r in runs):.2f} s); peak RSS "
            f"{_mb(max(r['peak'] for r in runs))}, above the imports "
            f"{_mb(max(r['peak_run'] for r in runs))}"
        )
    this = got["this"]
    for name in names[1:]:
        old = got[name]
        wall = min(r["seconds"] for r in this) / min(r["seconds"] for r in old)
        run = min(r["run"] for r in this) / min(r["run"] for r in old)
        peak = max(r["peak_run"] for r in this) / max(r["peak_run"] for r in old)
        print(f"    this / {name}: first run {wall:.2f}x (target <= 1.0x), the run alone "
              f"{run:.2f}x, peak above the imports {peak:.2f}x")  # fmt: skip


def pandas_ops(sb: Any, sims: list[str]) -> None:
    """Section 4: pandas on a pulled frame against the same frame with its text joined."""
    n = SUBSCRIBERS[-1]
    args = {"key": sb.key, "url": sb.reporting_url, "account": sb.account, "sims": sims,
            "n": n, "days": MEMORY_DAYS}  # fmt: skip
    got = measure("pandas", ROOT, args)
    print(f"4. pandas on the frame of {n:,} subscribers ({got['rows']:,} rows): as pulled "
          f"vs each text column one array, best of 5")  # fmt: skip
    for name, (pulled, joined) in got["ops"].items():
        print(f"  {name:<28} {pulled * 1000:8.1f} ms vs {joined * 1000:8.1f} ms: "
              f"{pulled / joined:.2f}x")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("memory", "warm", "export", "pandas"), action="append")
    parser.add_argument("--against", default="b692f50", help="a commit, or none")
    parser.add_argument("--rounds", type=int, default=3, help="warm and export rounds")
    parser.add_argument("--repeat", type=int, default=1, help="pulls per tree and size")
    parser.add_argument("--points", type=int, choices=sorted(WARM), action="append")
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(CHILDREN[args.child](json.loads(sys.stdin.read()))))
        return
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_peers import sandbox

    sections = args.only or ["memory", "warm", "export", "pandas"]
    devices = max([*SUBSCRIBERS, *WARM.values(), EXPORT_SUBSCRIBERS])
    with trees(args.against) as tree_of, sandbox(0.0, devices) as sb:
        import urllib.request

        with urllib.request.urlopen(f"{sb.base_url}/sandbox/network", timeout=30) as answer:
            network = json.load(answer)
        sims = [s["msisdn"] for s in network["sims"] if s["account_id"] == sb.account]
        print(f"trees: {', '.join(f'{k} ({v})' for k, v in tree_of.items())}; "
              f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
        if "memory" in sections:
            memory(sb, sims, tree_of, args.repeat)
        if "warm" in sections:
            warm(sb, sims, tree_of, args.points or sorted(WARM), args.rounds)
        if "export" in sections:
            export(sb, sims, tree_of, args.rounds)
        if "pandas" in sections:
            pandas_ops(sb, sims)


if __name__ == "__main__":
    main()
