"""Quality and cost of ``er.health`` against ground truth injected into the sandbox (loopback).

For each seed, a sandbox of 64 devices runs with incidents injected at random: two of each
kind (``site_dark`` on two sites, the other kinds on devices of the other sites), each at a
random whole UTC hour of the 30 days judged (on devices whose SIM is active from the history's
start to the end: a device without a SIM has nothing to change), lasting a random length per
kind:

===============  ===========  ==========================================
kind             hours        what the sandbox does
===============  ===========  ==========================================
site_dark        4 to 24      every device of the site: no session
device_offline   24 to 96     the device: no session
usage_drop       24 to 96     the device's rates x 0.1
usage_spike      24 to 72     the device's rates x 6
sim_idle         48 to 120    the device's sessions carry no byte
===============  ===========  ==========================================

Then ``er.health`` judges the whole account over the 30 days (28 days of history before). The
sandbox's clock (the present) moves with the seed, so the runs cover different weeks.

Printed, over all seeds: recall (an incident is found when a flag of its kind and subject
overlaps it; target at least 95%), recall per kind, false flags per 30 days (flags that
overlap no incident of their kind and subject; target at most 3), the start-time error of found
incidents (flag start minus incident start, median and 90th percentile of the absolute value),
requests per run, and wall time per run against the pull alone (the same report fetched by the
same kind of client in the same sandbox: the baseline of the ratio). Figures are printed;
nothing here is a test.

Usage::

    python benchmarks/bench_health.py            # 6 seeds
    python benchmarks/bench_health.py --quick    # 2 seeds
    python benchmarks/bench_health.py --seeds 10
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import edgereports as er
from edgereports.health.series import health_report
from edgereports.sandbox import build_network, serve

DAYS = 30
HISTORY = timedelta(days=28)
LENGTHS = {
    "site_dark": (4, 24),
    "device_offline": (24, 96),
    "usage_drop": (24, 96),
    "usage_spike": (24, 72),
    "sim_idle": (48, 120),
}
PER_KIND = 2
FIRST_END = datetime(2024, 3, 15, tzinfo=UTC)


def incidents_for(seed: int, start: datetime, end: datetime) -> list[dict[str, Any]]:
    """Two incidents of each kind at random subjects and hours inside ``[start, end)``."""
    rng = random.Random(seed)
    net = build_network(seed, 64)
    account = net.primary_account_id
    sims = {s.msisdn: s for s in net.sims}
    first, last = (start - HISTORY).date(), end.date()
    devices = [
        d
        for d in net.devices
        if d.account_id == account
        and sims[d.msisdn].active_on(first)
        and sims[d.msisdn].active_on(last)
    ]  # an incident on a SIM that is not active changes nothing
    sites = sorted({d.customer_site_id for d in devices})
    dark = rng.sample(sites, PER_KIND)
    others = [d.msisdn for d in devices if d.customer_site_id not in dark]
    chosen = rng.sample(others, PER_KIND * (len(LENGTHS) - 1))
    span = int((end - start).total_seconds() // 3600)
    out: list[dict[str, Any]] = []
    for kind, (lo, hi) in LENGTHS.items():
        subjects = dark if kind == "site_dark" else [chosen.pop() for _ in range(PER_KIND)]
        for subject in subjects:
            hours = rng.randint(lo, hi)
            at = start + timedelta(hours=rng.randrange(0, span - hours))
            out.append({"kind": kind, "subject": subject, "start": at.isoformat(), "hours": hours})
    return out


def judge(
    flags: Any, truth: list[dict[str, Any]], profiles: dict[str, str]
) -> tuple[dict[str, int], int, list[float]]:
    """Found incidents per kind, false flags, and start errors in hours of the found ones."""
    found: dict[str, int] = {}
    errors: list[float] = []
    used = [False] * len(flags)
    rows = list(flags.itertuples(index=False))
    for inc in truth:
        t0 = datetime.fromisoformat(inc["start"])
        t1 = t0 + timedelta(hours=inc["hours"])
        hits = [
            i
            for i, f in enumerate(rows)
            if f.kind == inc["kind"] and f.subject == inc["subject"] and f.start < t1 and f.end > t0
        ]
        for i in hits:
            used[i] = True
        if hits:
            found[inc["kind"]] = found.get(inc["kind"], 0) + 1
            first = min(rows[i].start for i in hits)
            errors.append((first - t0).total_seconds() / 3600)
            if abs(errors[-1]) > 12:
                print(f"    start off by {errors[-1]:+.0f} h: {inc['kind']} {inc['subject']} from "
                      f"{inc['start']} for {inc['hours']} h "
                      f"({profiles.get(inc['subject'], 'a site')})")  # fmt: skip
        else:
            print(f"    missed: {inc['kind']} {inc['subject']} from {inc['start']} for "
                  f"{inc['hours']} h ({profiles.get(inc['subject'], 'a site')})")  # fmt: skip
    for f, ok in zip(rows, used, strict=True):
        if not ok:
            print(f"    false flag: {f.kind} {f.subject} {f.start:%Y-%m-%d %H:%M}: {f.evidence}")
    return found, used.count(False), errors


def run(seed: int, verbose: bool) -> dict[str, Any]:
    end = FIRST_END + timedelta(days=37 * seed)
    start = end - timedelta(days=DAYS)
    truth = incidents_for(seed, start, end)
    clock = (end + timedelta(hours=6)).isoformat()
    with serve(seed=seed, clock=clock, incidents=truth) as sb:
        numbers = [s.msisdn for s in sb.network.sims_of(sb.account_id)]
        with er.ReportingClient(sb.api_key, sb.reporting_url) as client:  # the pull alone
            t = time.perf_counter()
            client.fetch(health_report(sb.account_id, numbers, start - HISTORY, end))
            pull = time.perf_counter() - t
        sb.reset_counters()
        with er.ReportingClient(sb.api_key, sb.reporting_url) as client:
            t = time.perf_counter()
            flags = er.health(
                client, account_id=sb.account_id, msisdn=numbers, start=start, end=end
            )
            wall = time.perf_counter() - t
        requests = sb.request_count()
        profiles = {d.msisdn: d.profile for d in sb.network.devices}
    if verbose:
        for f in flags.itertuples(index=False):
            print(f"    seed {seed}: {f.kind} {f.subject} {f.start:%Y-%m-%d %H:%M}: {f.evidence}")
    found, false, errors = judge(flags, truth, profiles)
    return {"found": found, "false": false, "errors": errors, "truth": len(truth),
            "requests": requests, "wall": wall, "pull": pull}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=6, help="how many seeds (default 6)")
    parser.add_argument("--quick", action="store_true", help="two seeds")
    parser.add_argument("--verbose", action="store_true", help="print every flag")
    args = parser.parse_args()
    seeds = 2 if args.quick else args.seeds
    results = [run(s, args.verbose) for s in range(seeds)]
    truth = sum(r["truth"] for r in results)
    found = sum(sum(r["found"].values()) for r in results)
    false = sum(r["false"] for r in results)
    errors = sorted(abs(e) for r in results for e in r["errors"])
    print(f"health over {DAYS} days of 64 devices, {seeds} seeds, {truth} incidents injected")
    print(f"  recall:                 {found}/{truth} = {found / truth:.1%}  (target >= 95%)")
    for kind in LENGTHS:
        k = sum(r["found"].get(kind, 0) for r in results)
        print(f"    {kind:15s}       {k}/{PER_KIND * seeds}")
    print(f"  false flags per 30 days: {false / seeds:.2f}  ({false} in {seeds} runs; target <= 3)")
    if errors:
        p90 = errors[min(len(errors) - 1, int(0.9 * len(errors)))]
        print(
            f"  start error (hours):    median {statistics.median(errors):.1f}, 90th pct "
            f"{p90:.1f}, max {errors[-1]:.1f}"
        )
    reqs = [r["requests"] for r in results]
    wall = statistics.median(r["wall"] for r in results)
    pull = statistics.median(r["pull"] for r in results)
    print(
        f"  requests per run:       {min(reqs)} to {max(reqs)} "
        "(64 subscribers hourly over 58 days, and SIM counts)"
    )
    print(f"  wall time per run:      {wall:.2f} s median; the hourly pull alone {pull:.2f} s: "
          f"ratio {wall / pull:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
