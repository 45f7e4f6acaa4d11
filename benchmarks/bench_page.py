"""What health flags and the report page cost beyond the fetches they need (local sandbox).

Each piece of work runs once to record the calls it makes to the client (``fetch`` and
``service_now``, with their arguments, in order); then, in turns, the work itself and those
calls replayed by a client alone (its fetches: the baseline), each time with a new client and no
cache. Both run in this process after a first run of each (imports and first-use costs warm on
both sides), against a sandbox in this process (``--latency`` adds seconds to every request).
Printed per case: the requests each sent (the same: a check), then for the fetches and the work
the best and the median wall time and the median CPU time of this process (the sandbox's
serving included, on both sides: on a shared machine the CPU time moves less with the other
load than the wall time), each with the ratio work / fetches and its target.

Health (``er.health`` with ``inventory=``, and at 64 devices also with ``msisdn=``): an account
of 64 devices judged over 30 days (28 of history before them), and one of 1,000 devices over 9
days (as the fleet runs of ``bench_health.py``); target at most 1.3x.

The page (``build_page``, ``edgereports page``): ``examples/export-job.toml`` (five reports:
subscribers' daily time and hourly bytes, the account's hourly UE connections, SIM counts, one
IMSI's daily connections) over the last 7 days compared with the previous period (small); the
same job with all 64 subscribers of the account in its subscriber reports over the last 4 weeks
(larger); and the larger job over the last week compared with two periods, with health flags
(``health_sections``: the account's 64 subscribers, a partial list). Target at most 2x.

Usage::

    python benchmarks/bench_page.py                    # 5 runs of each, every case
    python benchmarks/bench_page.py --only page --rounds 9
    python benchmarks/bench_page.py --only health --health-sizes 64,1000,10000
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import edgereports as er
from edgereports.export import load_job
from edgereports.page import build_page, health_sections
from edgereports.reporting import ReportingClient
from edgereports.sandbox import FaultConfig, SandboxHandle, serve

ROOT = Path(__file__).resolve().parent.parent
JOB = ROOT / "examples" / "export-job.toml"
PAGE_CLOCK = "2024-07-08T12:00:00+05:30"
HEALTH_END = datetime(2024, 5, 1, tzinfo=UTC)
HISTORY = timedelta(days=28)
RECORDED = ("fetch", "service_now")


@dataclass(frozen=True)
class Call:
    """One call the work made to its client."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


@contextlib.contextmanager
def recording() -> Iterator[list[Call]]:
    """Record every outermost ``fetch`` and ``service_now`` of any client while inside."""
    calls: list[Call] = []
    depth = [0]
    originals = {name: getattr(ReportingClient, name) for name in RECORDED}

    def wrapped(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def call(self: ReportingClient, *args: Any, **kwargs: Any) -> Any:
            if not depth[0]:
                calls.append(Call(name, args, kwargs))
            depth[0] += 1
            try:
                return original(self, *args, **kwargs)
            finally:
                depth[0] -= 1

        return call

    for name, original in originals.items():
        setattr(ReportingClient, name, wrapped(name, original))
    try:
        yield calls
    finally:
        for name, original in originals.items():
            setattr(ReportingClient, name, original)


def replay(client: ReportingClient, calls: list[Call]) -> None:
    """The recorded calls, by ``client`` alone."""
    for call in calls:
        getattr(client, call.name)(*call.args, **call.kwargs)


def compare(
    sb: SandboxHandle, work: Callable[[ReportingClient], object], rounds: int
) -> dict[str, Any]:
    """``work`` against its fetches replayed: the wall time (best and median) and CPU time of
    this process (median) of each, and the requests each sent."""

    def client() -> ReportingClient:
        return ReportingClient(sb.api_key, sb.reporting_url, progress=False)

    with client() as c:
        work(c)  # a first run: imports, first-use costs
    with recording() as calls, client() as c:
        work(c)
    with client() as c:
        replay(c, calls)  # a first replay
    wall: dict[str, list[float]] = {"work": [], "fetches": []}
    cpu: dict[str, list[float]] = {"work": [], "fetches": []}
    requests: dict[str, set[int]] = {"work": set(), "fetches": set()}
    for _ in range(rounds):
        for side in ("fetches", "work"):
            sb.reset_counters()
            with client() as c:
                t, p = time.perf_counter(), time.process_time()
                if side == "work":
                    work(c)
                else:
                    replay(c, calls)
                wall[side].append(time.perf_counter() - t)
                cpu[side].append(time.process_time() - p)
            requests[side].add(sb.request_count())
    return {
        "best": {side: min(v) for side, v in wall.items()},
        "median": {side: statistics.median(v) for side, v in wall.items()},
        "cpu": {side: statistics.median(v) for side, v in cpu.items()},
        "requests": requests,
    }


def _line(label: str, r: dict[str, Any], what: str, target: float) -> str:
    counts = {side: "/".join(map(str, sorted(n))) for side, n in r["requests"].items()}
    same = "" if counts["work"] == counts["fetches"] else " (NOT the same requests)"
    figures = ", ".join(
        f"{name} {r[key]['fetches']:.3f} s -> {r[key]['work']:.3f} s = "
        f"{r[key]['work'] / r[key]['fetches']:.2f}x"
        for key, name in (("best", "wall best"), ("median", "wall median"), ("cpu", "CPU median"))
    )
    return (
        f"  {label}: {counts['work']} requests{same}\n"
        f"    fetches -> {what}: {figures} (target <= {target:g}x)"
    )


def health_cases(sizes: list[int], rounds: int, latency: float) -> None:
    print("\nhealth / its fetches")
    for devices in sizes:
        days = 30 if devices <= 64 else 9
        start = HEALTH_END - timedelta(days=days)
        clock = (HEALTH_END + timedelta(hours=6)).isoformat()
        faults = FaultConfig(latency=latency)
        with serve(seed=7, devices=devices, clock=clock, faults=faults) as sb:
            inventory = er.Inventory.from_sandbox(sb)
            numbers = [s.msisdn for s in sb.network.sims_of(sb.account_id)]
            modes: dict[str, dict[str, Any]] = {"inventory": {"inventory": inventory}}
            if devices <= 64:
                modes["msisdn"] = {"msisdn": numbers, "account_id": sb.account_id}
            for mode, given in modes.items():
                r = compare(sb, functools.partial(_health, given=given, start=start), rounds)
                label = f"{devices:,} devices x {days} days ({days + 28} pulled), {mode}="
                print(_line(label, r, "health", 1.3))


def _health(client: ReportingClient, *, given: dict[str, Any], start: datetime) -> object:
    return er.health(client, **given, start=start, end=HEALTH_END)


def _page(client: ReportingClient, *, job: Any, last: str, periods: Any, makers: Any) -> object:
    page = build_page(job, last=last, compare=periods, client=client, sections=makers)
    if page.failures:
        raise SystemExit(f"the page failed: {[s.failed for s in page.failures]}")
    return page


def _larger_job(folder: Path, numbers: list[str]) -> Path:
    """The example job with these subscribers in its subscriber reports."""
    listed = ", ".join(f'"{m}"' for m in numbers)
    text = JOB.read_text(encoding="utf-8")
    text = text.replace('["919319520966", "917226234734"]', f"[{listed}]")
    path = folder / "larger.toml"
    path.write_text(text, encoding="utf-8")
    return path


def page_cases(names: list[str], rounds: int, latency: float) -> None:
    print("\npage build / its fetches")
    faults = FaultConfig(latency=latency)
    with serve(seed=0, clock=PAGE_CLOCK, faults=faults) as sb, tempfile.TemporaryDirectory() as tmp:
        numbers = [s.msisdn for s in sb.network.sims_of(sb.account_id)]
        larger = load_job(_larger_job(Path(tmp), numbers))
        cases: dict[str, tuple[str, Any, str, Any, list[Any]]] = {
            "small": ("the example job, last 7d, previous_period", load_job(JOB), "7d",
                      "previous_period", []),
            "larger": (f"{len(numbers)} subscribers, last 4w, previous_period", larger, "4w",
                       "previous_period", []),
            "health": (f"{len(numbers)} subscribers, last 7d, previous_week and "
                       "previous_year_dow, health flags", larger, "7d",
                       ["previous_week", "previous_year_dow"], [health_sections]),
        }  # fmt: skip
        for name in names:
            label, job, last, periods, makers = cases[name]
            work = functools.partial(_page, job=job, last=last, periods=periods, makers=makers)
            print(_line(f"{name} ({label})", compare(sb, work, rounds), "page", 2.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="runs of each side per case")
    parser.add_argument("--only", choices=("health", "page"), help="one of the two")
    parser.add_argument("--health-sizes", default="64,1000", help="devices of the health cases")
    parser.add_argument("--pages", default="small,larger,health", help="page cases to run")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added per request")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # partial buckets of relative ranges, and the like
    print(
        f"work against its fetches replayed by a client alone; one process, imports warm on both "
        f"sides; sandbox in this process, latency {args.latency * 1000:.0f} ms; "
        f"{args.rounds} runs of each, in turns"
    )
    if args.only in (None, "health"):
        health_cases([int(n) for n in args.health_sizes.split(",")], args.rounds, args.latency)
    if args.only in (None, "page"):
        page_cases(args.pages.split(","), args.rounds, args.latency)


if __name__ == "__main__":
    main()
