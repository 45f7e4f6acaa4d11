"""Quality and cost of ``er.health`` against ground truth injected into the sandbox (loopback).

Two ways to pick what is measured:

- the tuning seeds (default: seeds 0 to 5; the method was developed on seeds below 1,000), and
- ``--held-out``: seeds, the weeks judged and the subjects drawn at run time from the system's
  random source (seeds from 1,000 up: never one the method was developed on), so the figures
  hold for accounts the method never saw. The seeds drawn are printed (``--seed-list`` repeats
  their accounts; the weeks and subjects are drawn again).

Each seed is an account of 64 devices with incidents injected at random: ``--per-kind`` (2) of
each kind, each at a random whole UTC hour of the 30 days judged (28 days of history before
them), lasting from the documented minimum of its kind up (docs/health.md, "What it catches"):

===============  ===========  ===========================================================
kind             hours        what the sandbox does
===============  ===========  ===========================================================
site_dark        6 to 24      every device of the site: no session
enodeb_dark      24 to 48     every device of one eNodeB (of a site with another eNodeB
                              carrying active devices): no session
device_offline   36 to 96     the device: no session
usage_drop       48 to 120    the device's rates x 0.1
usage_spike      48 to 120    the device's rates x 6
sim_idle         24 to 96     the device's sessions carry no byte
sim_deactivated  -            the SIM is deactivated at a UTC midnight inside the 30 days
===============  ===========  ===========================================================

Subjects are devices whose SIM is active from the history's start to the end, on sites (and
eNodeBs) with at least two such devices; no two incidents share a device. ``er.health`` judges
the account twice: with the sandbox's inventory (``inventory=``, complete) and with only the
MSISDNs (``msisdn=``, a partial list: sites from their own reports, lives from the SIM counts).

Printed, per mode: recall per kind (a ``site_dark``, ``enodeb_dark``, ``device_offline``,
``usage_*`` or ``sim_idle`` incident is found when a flag of its kind and subject overlaps it; a
``sim_deactivated`` one when the SIM is listed in ``attrs["deactivated"]`` and no flag concerns
it after its deactivation; target at least 95% each); flags that no incident explains (a flag
is explained when it overlaps an incident that silenced or changed its subject); high flags on
deactivated SIMs (every SIM deactivated before the flag's end, by an incident or its own life;
target 0); the episodes per injected eNodeB outage (distinct episodes among the flags that
overlap it and concern the eNodeB, its site or its devices, a flag without one counting as one;
target exactly 1 in at least 95%); the start error; requests and wall time per run against the
pull alone (the same subscribers' hourly report fetched by the same kind of client).

Then, on accounts with no incidents (``--calm`` seeds, 64 devices): false flags per 30 days per
1,000 devices (target at most 3). With ``--fleet``: ``er.health`` run in a subprocess against
accounts of 1,000 and 10,000 devices (37 days: 28 of history, 9 judged; the sandbox stays in
this process) for its peak memory (the subprocess's maximum RSS, against a subprocess that only
imports what health imports: the baseline), requests and wall time, and the false flags of the
10,000 (target at most 3 per 30 days per 1,000 devices). Figures are printed; nothing here is a
test.

Usage::

    python benchmarks/bench_health.py                       # tuning seeds 0-5
    python benchmarks/bench_health.py --held-out            # 8 seeds drawn now
    python benchmarks/bench_health.py --held-out --seeds 12 --calm 6
    python benchmarks/bench_health.py --held-out --fleet    # and 1,000 and 10,000 devices
    python benchmarks/bench_health.py --seed-list 5123,88412 --verbose
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import edgereports as er
from edgereports.health.pull import device_report
from edgereports.sandbox import build_network, serve
from edgereports.sandbox.inventory import write_inventory

DAYS = 30
HISTORY = timedelta(days=28)
LENGTHS: dict[str, tuple[int, int] | None] = {
    "site_dark": (6, 24),
    "enodeb_dark": (24, 48),
    "device_offline": (36, 96),
    "usage_drop": (48, 120),
    "usage_spike": (48, 120),
    "sim_idle": (24, 96),
    "sim_deactivated": None,
}
#: The seeds the method was developed on are below this; held-out seeds are drawn above it.
DEVELOPED_BELOW = 1_000
TUNING = range(6)
#: Ends of the 30 days judged are drawn from these years' days (SIMs live 2021 to 2025).
ENDS = (date(2022, 3, 1), date(2025, 9, 1))
MODES = ("inventory", "msisdn")


def _end_of(rng: random.Random) -> datetime:
    """A random end of the 30 days judged (a UTC midnight)."""
    span = (ENDS[1] - ENDS[0]).days
    day = ENDS[0] + timedelta(days=rng.randrange(span))
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def incidents_for(
    seed: int, start: datetime, end: datetime, rng: random.Random, per_kind: int, devices: int
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``per_kind`` incidents of each kind at random subjects and hours inside ``[start, end)``,
    and the network's facts the judging needs."""
    net = build_network(seed, devices)
    account = net.primary_account_id
    sims = {s.msisdn: s for s in net.sims}
    first, last = (start - HISTORY).date(), end.date()
    live = [
        d
        for d in net.devices
        if d.account_id == account
        and sims[d.msisdn].active_on(first)
        and sims[d.msisdn].active_on(last)
    ]
    by_site: dict[str, list[Any]] = {}
    by_cell: dict[str, list[Any]] = {}
    for d in live:
        by_site.setdefault(d.customer_site_id, []).append(d)
        by_cell.setdefault(d.enodeb_ip, []).append(d)
    sites = sorted(s for s, ds in by_site.items() if len(ds) >= 2)
    dark = rng.sample(sites, min(per_kind, len(sites)))
    cells = sorted(
        c
        for c, ds in by_cell.items()
        if len(ds) >= 2
        and ds[0].customer_site_id not in dark
        and any(d.enodeb_ip != c for d in by_site[ds[0].customer_site_id])
    )
    cut = rng.sample(cells, min(per_kind, len(cells)))
    taken = {d.msisdn for s in dark for d in by_site[s]} | {
        d.msisdn for c in cut for d in by_cell[c]
    }
    others = [d.msisdn for d in live if d.msisdn not in taken]
    singles = [k for k, v in LENGTHS.items() if k not in ("site_dark", "enodeb_dark")]
    chosen = rng.sample(others, min(len(others), per_kind * len(singles)))
    span = int((end - start).total_seconds() // 3600)
    out: list[dict[str, Any]] = []
    for kind, lengths in LENGTHS.items():
        if kind == "site_dark":
            subjects = dark
        elif kind == "enodeb_dark":
            subjects = cut
        else:
            subjects = [chosen.pop() for _ in range(per_kind) if chosen]
        for subject in subjects:
            if lengths is None:
                day = start + timedelta(days=rng.randrange(1, DAYS - 1))
                out.append({"kind": kind, "subject": subject, "start": day.isoformat()})
                continue
            hours = rng.randint(*lengths)
            at = start + timedelta(hours=rng.randrange(0, span - hours))
            out.append({"kind": kind, "subject": subject, "start": at.isoformat(), "hours": hours})
    facts = {
        "profile": {d.msisdn: d.profile for d in net.devices},
        "site": {d.msisdn: d.customer_site_id for d in net.devices},
        "cell": {d.msisdn: d.enodeb_ip for d in net.devices},
        "cells_of_site": {s: sorted({d.enodeb_ip for d in ds}) for s, ds in by_site.items()},
    }
    return out, facts


def _hit(inc: dict[str, Any], facts: dict[str, Any]) -> set[str]:
    """The subjects (devices, eNodeB, site) an incident silences or changes."""
    s = inc["subject"]
    if inc["kind"] == "site_dark":
        return (
            {s}
            | {m for m, x in facts["site"].items() if x == s}
            | set(facts["cells_of_site"].get(s, []))
        )
    if inc["kind"] == "enodeb_dark":
        members = {m for m, x in facts["cell"].items() if x == s}
        return {s} | members | {facts["site"][m] for m in members}
    return {s}


def _span(inc: dict[str, Any], end: datetime) -> tuple[datetime, datetime]:
    t0 = datetime.fromisoformat(inc["start"])
    return t0, (t0 + timedelta(hours=inc["hours"]) if inc.get("hours") else end + timedelta(days=1))


def _gone(net_sims: dict[str, Any], subject: str, before: datetime) -> bool:
    sim = net_sims.get(subject)
    return bool(
        sim is not None
        and sim.deactivation_date is not None
        and sim.deactivation_date < before.date()
    )


def judge(
    flags: Any,
    truth: list[dict[str, Any]],
    facts: dict[str, Any],
    end: datetime,
    sims: dict[str, Any],
    verbose: bool,
) -> dict[str, Any]:
    """Found incidents per kind, unexplained flags, high flags on deactivated SIMs, episodes
    per eNodeB outage and start errors."""
    rows = list(flags.itertuples(index=False))
    explained = [False] * len(rows)
    found: Counter[str] = Counter()
    errors: list[float] = []
    episodes: list[int] = []
    gone = {d["msisdn"] for d in flags.attrs.get("deactivated", [])}
    for inc in truth:
        t0, t1 = _span(inc, end)
        touched = _hit(inc, facts)
        for i, f in enumerate(rows):
            if f.subject in touched and f.start < t1 and f.end > t0:
                explained[i] = True
        if inc["kind"] == "sim_deactivated":
            after = [f for f in rows if f.subject == inc["subject"] and f.end > t0]
            if inc["subject"] in gone and not after:
                found[inc["kind"]] += 1
            elif verbose:
                print(f"    missed: {inc['kind']} {inc['subject']} on {inc['start']} "
                      f"(listed: {inc['subject'] in gone}, flags after: {len(after)})")  # fmt: skip
            continue
        hits = [f for f in rows if f.kind == inc["kind"] and f.subject == inc["subject"]
                and f.start < t1 and f.end > t0]  # fmt: skip
        if hits:
            found[inc["kind"]] += 1
            errors.append((min(f.start for f in hits) - t0).total_seconds() / 3600)
        elif verbose:
            what = facts["profile"].get(inc["subject"], "a group")
            print(f"    missed: {inc['kind']} {inc['subject']} from {inc['start']} for "
                  f"{inc['hours']} h ({what})")  # fmt: skip
        if inc["kind"] == "enodeb_dark":
            near = [f for f in rows if f.subject in touched and f.start < t1 and f.end > t0]
            ids = {f.episode for f in near if isinstance(f.episode, str)}
            episodes.append(len(ids) + sum(1 for f in near if not isinstance(f.episode, str)))
    false = [f for f, ok in zip(rows, explained, strict=True) if not ok]
    for f in false:
        if verbose:
            print(f"    unexplained: {f.kind} {f.subject} {f.start:%Y-%m-%d %H:%M} {f.severity}: "
                  f"{f.evidence}")  # fmt: skip
    high_gone = [f for f in rows if f.severity == "high" and _gone(sims, f.subject, f.end)]
    return {"found": found, "false": len(false), "high_gone": len(high_gone),
            "episodes": episodes, "errors": errors}  # fmt: skip


def run_seed(seed: int, rng: random.Random, args: argparse.Namespace) -> dict[str, Any]:
    end = _end_of(rng)
    start = end - timedelta(days=DAYS)
    truth, facts = incidents_for(seed, start, end, rng, args.per_kind, 64)
    clock = (end + timedelta(hours=6)).isoformat()
    out: dict[str, Any] = {"truth": truth}
    with serve(seed=seed, clock=clock, incidents=truth) as sb:
        numbers = [s.msisdn for s in sb.network.sims_of(sb.account_id)]
        sims = {s.msisdn: s for s in sb.network.sims}
        with er.ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
            t = time.perf_counter()
            client.fetch(device_report(sb.account_id, numbers, start - HISTORY, end))
            out["pull"] = time.perf_counter() - t
        for mode in args.modes:
            sb.reset_counters()
            with er.ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
                t = time.perf_counter()
                given: dict[str, Any] = (
                    {"inventory": er.Inventory.from_sandbox(sb)}
                    if mode == "inventory"
                    else {"msisdn": numbers, "account_id": sb.account_id}
                )
                flags = er.health(client, **given, start=start, end=end)
                wall = time.perf_counter() - t
            if args.verbose:
                print(f"  seed {seed} ({mode}): {len(flags)} flags")
            res = judge(flags, truth, facts, end, sims, args.verbose)
            out[mode] = {**res, "wall": wall, "requests": sb.request_count()}
    return out


def run_calm(seed: int, rng: random.Random, args: argparse.Namespace) -> dict[str, Any]:
    end = _end_of(rng)
    start = end - timedelta(days=DAYS)
    with serve(seed=seed, clock=(end + timedelta(hours=6)).isoformat()) as sb:
        sims = {s.msisdn: s for s in sb.network.sims}
        out = {}
        for mode in args.modes:
            with er.ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
                given: dict[str, Any] = (
                    {"inventory": er.Inventory.from_sandbox(sb)}
                    if mode == "inventory"
                    else {"msisdn": [s.msisdn for s in sb.network.sims_of(sb.account_id)],
                          "account_id": sb.account_id}
                )  # fmt: skip
                flags = er.health(client, **given, start=start, end=end)
            for f in flags.itertuples(index=False):
                if args.verbose:
                    print(f"    calm seed {seed} ({mode}): {f.kind} {f.subject} {f.severity}: "
                          f"{f.evidence}")  # fmt: skip
            high_gone = sum(
                1
                for f in flags.itertuples()
                if f.severity == "high" and _gone(sims, f.subject, f.end)
            )
            out[mode] = {"flags": len(flags), "kinds": Counter(flags.kind), "high_gone": high_gone}
    return out


# -- the fleet: health in a subprocess, for its memory ---------------------------------------------


def _peak_mib() -> float:
    """This process's peak resident memory since it started (Linux: VmHWM), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise SystemExit("the fleet runs read their peak memory from /proc (Linux)")


def child(spec: dict[str, Any]) -> None:
    """Run in the subprocess: health over the sandbox named in ``spec`` (or only the imports);
    prints its flags, wall time and peak memory."""
    if spec.get("baseline"):
        import pandas  # noqa: F401

        import edgereports.health.run  # noqa: F401  (what health imports, nothing pulled)

        print(json.dumps({"flags": [], "rss": _peak_mib()}))
        return
    inventory = er.Inventory.from_file(spec["inventory"])
    with er.ReportingClient(spec["key"], spec["url"], progress=False) as client:
        t = time.perf_counter()
        flags = er.health(client, inventory=inventory, start=spec["start"], end=spec["end"])
        wall = time.perf_counter() - t
    rows = [{"kind": f.kind, "subject": f.subject, "severity": f.severity, "end": f.end.isoformat(),
             "evidence": f.evidence} for f in flags.itertuples()]  # fmt: skip
    print(json.dumps({"flags": rows, "wall": wall, "rss": _peak_mib()}))


def _in_child(spec: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """Run :func:`child` in a subprocess; its answer and its peak RSS (MiB)."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(spec)],
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"the health subprocess failed ({done.returncode})")
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    return answer, float(answer["rss"])


def fleet(devices: int, seed: int, rng: random.Random, args: argparse.Namespace) -> dict[str, Any]:
    end = _end_of(rng)
    start = end - timedelta(days=9)
    with serve(seed=seed, devices=devices, clock=(end + timedelta(hours=6)).isoformat()) as sb, \
            tempfile.TemporaryDirectory() as tmp:  # fmt: skip
        path = write_inventory(sb.inventory(), Path(tmp) / "inventory.csv")
        spec = {"url": sb.reporting_url, "key": sb.api_key, "inventory": str(path),
                "start": start.isoformat(), "end": end.isoformat()}  # fmt: skip
        sb.reset_counters()
        t = time.perf_counter()
        answer, rss = _in_child(spec)
        wall = time.perf_counter() - t
        requests = sb.request_count()
        with er.ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
            numbers = [s.msisdn for s in sb.network.sims_of(sb.account_id)]
            t = time.perf_counter()
            for c0 in range(0, len(numbers), 128):
                client.fetch(device_report(sb.account_id, numbers[c0 : c0 + 128],
                                           start - HISTORY, end))  # fmt: skip
            pull = time.perf_counter() - t
        sims = {s.msisdn: s for s in sb.network.sims}
    high_gone = sum(
        1 for f in answer["flags"]
        if f["severity"] == "high" and _gone(sims, f["subject"], datetime.fromisoformat(f["end"]))
    )  # fmt: skip
    if args.verbose:
        for f in answer["flags"]:
            print(
                f"    fleet {devices}: {f['kind']} {f['subject']} {f['severity']}: {f['evidence']}"
            )
    return {"devices": devices, "rss": rss, "wall": answer["wall"], "process": wall,
            "pull": pull, "requests": requests, "flags": len(answer["flags"]),
            "kinds": Counter(f["kind"] for f in answer["flags"]), "high_gone": high_gone,
            "days": (end - start).days}  # fmt: skip


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} = {k / n:.1%}" if n else "0/0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--held-out", action="store_true", help="seeds and weeks drawn now")
    parser.add_argument("--seeds", type=int, default=None, help="how many seeds (6; 8 held out)")
    parser.add_argument("--seed-list", help="these seeds (comma-separated), e.g. to repeat a run")
    parser.add_argument("--calm", type=int, default=4, help="accounts without incidents (4)")
    parser.add_argument("--per-kind", type=int, default=2, help="incidents of each kind per seed")
    parser.add_argument("--modes", default="inventory,msisdn", help="inventory, msisdn or both")
    parser.add_argument("--fleet", action="store_true", help="also 1,000 and 10,000 devices")
    parser.add_argument("--fleet-sizes", default="1000,10000", help="devices of the fleet runs")
    parser.add_argument("--verbose", action="store_true", help="print misses and stray flags")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    args.modes = [m for m in args.modes.split(",") if m in MODES]
    draw = random.SystemRandom()
    if args.seed_list:
        seeds = [int(s) for s in args.seed_list.split(",")]
    elif args.held_out:
        count = 8 if args.seeds is None else args.seeds
        seeds = [draw.randrange(DEVELOPED_BELOW, 1_000_000) for _ in range(count)]
    else:
        seeds = list(range(len(TUNING) if args.seeds is None else args.seeds))
    calm = [
        draw.randrange(DEVELOPED_BELOW, 1_000_000) if args.held_out else 100 + i
        for i in range(args.calm)
    ]
    rng = random.Random(draw.random() if args.held_out else 0)
    print(f"{'held-out' if args.held_out else 'tuning'} seeds: {','.join(map(str, seeds))}; "
          f"calm seeds: {','.join(map(str, calm))}")  # fmt: skip
    results = []
    for s in seeds:
        results.append(run_seed(s, random.Random(rng.random() if args.held_out else s), args))
    for mode in args.modes if results else ():
        print(f"\nhealth with {mode}= over {DAYS} days of 64 devices, {len(seeds)} seeds")
        for kind in LENGTHS:
            n = sum(1 for r in results for i in r["truth"] if i["kind"] == kind)
            k = sum(r[mode]["found"].get(kind, 0) for r in results)
            print(f"  recall {kind:16s} {_pct(k, n):>18s}  (target >= 95%)")
        false = sum(r[mode]["false"] for r in results)
        print(f"  flags no incident explains: {false} in {len(seeds)} runs")
        gone = sum(r[mode]["high_gone"] for r in results)
        print(f"  high flags on deactivated SIMs: {gone} (target 0)")
        eps = [e for r in results for e in r[mode]["episodes"]]
        one = sum(1 for e in eps if e == 1)
        print(f"  eNodeB outages with exactly one episode: {_pct(one, len(eps))} (target >= 95%); "
              f"episodes each: {dict(sorted(Counter(eps).items()))}")  # fmt: skip
        errors = sorted(abs(e) for r in results for e in r[mode]["errors"])
        if errors:
            p90 = errors[min(len(errors) - 1, int(0.9 * len(errors)))]
            print(f"  start error (hours): median {statistics.median(errors):.1f}, 90th pct "
                  f"{p90:.1f}, max {errors[-1]:.1f}")  # fmt: skip
        reqs = [r[mode]["requests"] for r in results]
        wall = statistics.median(r[mode]["wall"] for r in results)
        pull = statistics.median(r["pull"] for r in results)
        print(f"  requests per run: {min(reqs)} to {max(reqs)}; wall {wall:.2f} s median, the "
              f"hourly pull alone {pull:.2f} s: ratio {wall / pull:.2f}")  # fmt: skip
    if calm:
        calm_runs = [run_calm(s, random.Random(rng.random() if args.held_out else s), args)
                 for s in calm]  # fmt: skip
        for mode in args.modes:
            flags = sum(c[mode]["flags"] for c in calm_runs)
            kinds = sum((c[mode]["kinds"] for c in calm_runs), Counter())
            rate = flags / len(calm) * 1000 / 64
            print(f"\nno incidents, {mode}=, {len(calm)} accounts of 64 devices x {DAYS} days: "
                  f"{flags} flags = {rate:.2f} per 30 days per 1,000 devices (target <= 3) "
                  f"{dict(kinds)}; high on deactivated SIMs: "
                  f"{sum(c[mode]['high_gone'] for c in calm_runs)}")  # fmt: skip
    if args.fleet:
        _, base_rss = _in_child({"baseline": True})
        print(f"\nfleet (inventory=, no incidents; a subprocess's peak RSS; baseline: the "
              f"imports alone, {base_rss:.0f} MiB)")  # fmt: skip
        for devices in (int(x) for x in args.fleet_sizes.split(",")):
            seed = calm[0] if calm else 100
            f = fleet(devices, seed, random.Random(rng.random() if args.held_out else seed), args)
            rate = f["flags"] * 30 / f["days"] * 1000 / devices
            print(f"  {devices:>6,} devices x {f['days'] + 28} days: peak RSS {f['rss']:.0f} MiB "
                  f"({f['rss'] / base_rss:.1f}x the imports); {f['requests']:,} requests; wall "
                  f"{f['wall']:.0f} s, the chunked pull alone {f['pull']:.0f} s: ratio "
                  f"{f['wall'] / f['pull']:.2f}; {f['flags']} flags = {rate:.2f} per 30 days per "
                  f"1,000 devices {dict(f['kinds'])}; high on deactivated SIMs: "
                  f"{f['high_gone']}")  # fmt: skip


if __name__ == "__main__":
    main()
