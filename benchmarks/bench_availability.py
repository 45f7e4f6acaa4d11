"""The availability ledger against ground truth injected into the sandbox (loopback).

Each seed (drawn at run time from the system's random source, from 1,000 up; ``--seed-list``
repeats some) is an account of 64 devices judged over one UTC calendar month (drawn from the
seed, with 28 days of history before it), into which are injected at random (from the seed):

===============  ===========  ===========================================================
kind             hours        what the sandbox does
===============  ===========  ===========================================================
site_dark        6 to 24      every device of the site: no session
enodeb_dark      24 to 48     every device of one eNodeB: no session
device_offline   36 to 96     the device: no session
===============  ===========  ===========================================================

(``--per-kind`` of each, 2 by default; ``--short`` draws every outage from 1 hour up instead,
shorter than the silences an idle device makes, to show what the rule leaves unknown), and
``--windows`` declared maintenance windows (3; on a site, an eNodeB or a subscriber, 2 to 12
hours, starting at any minute), half of them with the outage they plan (the same subject dark
for the window's whole hours).

The ground truth is the sandbox's: its network (which SIM is active in which hour), its
activity model with the incidents (per device and hour, whether it had a session; computed by
the sandbox's own kernel, not through the service) and the incidents and windows themselves.
Per site and hour, as docs/availability.md defines the ledger: inactive (no active device),
maintenance (a window on the site, or on every active device there), available (an active
device had a session), unavailable (every active device outside maintenance was silenced by an
incident), else idle: up, but nobody used it, which the data cannot tell from down (the ledger
must call it unknown). The truth's availability is available / (available + unavailable).

Printed: per site and month, the largest difference between ``er.availability``'s percentage
and the truth's (target at most 0.1 percentage point), with the hours behind the differences
(outage hours the ledger left unknown, idle hours it counted unavailable); the same by eNodeB
and by subscriber (the same definition per group and per device); the maintenance hours
excluded exactly (rows of every site, eNodeB and subscriber whose maintenance hours equal the
truth's; target 100%); and, with ``--fleet``, ``er.availability`` in a subprocess against
10,000 devices x 30 days (the sandbox stays in this process): the requests it sent (target at
most 10,001), its wall time, and its peak memory (the subprocess's maximum RSS, against a
subprocess that only imports what it imports: the baseline). Figures are printed; nothing here
is a test.

Usage::

    python benchmarks/bench_availability.py                  # 6 seeds drawn now
    python benchmarks/bench_availability.py --seeds 12 --fleet
    python benchmarks/bench_availability.py --short          # outages from 1 hour up
    python benchmarks/bench_availability.py --seed-list 5123,88412 --verbose
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import edgereports as er
from edgereports.sandbox import build_network, serve
from edgereports.sandbox.inventory import write_inventory
from edgereports.sandbox.model.accumulate import accumulate

HISTORY = timedelta(days=28)
LENGTHS = {"site_dark": (6, 24), "enodeb_dark": (24, 48), "device_offline": (36, 96)}
SHORT = (1, 24)
MONTHS = (datetime(2022, 3, 1, tzinfo=UTC), datetime(2025, 8, 1, tzinfo=UTC))
BY = ("customer_site_id", "enodeb", "msisdn")
COLUMN = {"customer_site_id": "customer_site_id", "enodeb": "enodeb_ip", "msisdn": "msisdn"}
AVAILABLE, UNAVAILABLE, MAINTENANCE, INACTIVE, IDLE = range(5)


def _month(rng: random.Random) -> tuple[datetime, datetime]:
    """A random UTC calendar month between :data:`MONTHS`."""
    months = (MONTHS[1].year - MONTHS[0].year) * 12 + MONTHS[1].month - MONTHS[0].month
    n = MONTHS[0].month - 1 + rng.randrange(months)
    start = datetime(MONTHS[0].year + n // 12, n % 12 + 1, 1, tzinfo=UTC)
    n += 1
    return start, datetime(MONTHS[0].year + n // 12, n % 12 + 1, 1, tzinfo=UTC)


@dataclass
class Account:
    """One drawn account: its month, incidents, windows and the sandbox's facts."""

    seed: int
    start: datetime
    end: datetime
    incidents: list[dict[str, Any]]
    windows: list[dict[str, Any]]
    devices: list[Any]
    sims: dict[str, Any]


def draw(seed: int, rng: random.Random, args: argparse.Namespace) -> Account:
    """An account with its outages and windows drawn at random inside its month."""
    start, end = _month(rng)
    net = build_network(seed, 64)
    account = net.primary_account_id
    sims = {s.msisdn: s for s in net.sims}
    devices = [d for d in net.devices if d.account_id == account]
    first, last = (start - HISTORY).date(), (end - timedelta(days=1)).date()
    live = [d for d in devices if all(sims[d.msisdn].active_on(day) for day in (first, last))]
    groups: dict[str, dict[str, list[str]]] = {"site_dark": {}, "enodeb_dark": {}}
    for d in live:
        groups["site_dark"].setdefault(d.customer_site_id, []).append(d.msisdn)
        groups["enodeb_dark"].setdefault(d.enodeb_ip, []).append(d.msisdn)
    hours = int((end - start).total_seconds() // 3600)
    incidents: list[dict[str, Any]] = []
    for kind, lengths in LENGTHS.items():
        if kind == "device_offline":
            subjects = sorted(d.msisdn for d in live)
        else:
            subjects = sorted(s for s, ms in groups[kind].items() if len(ms) >= 2)
        for subject in rng.sample(subjects, min(args.per_kind, len(subjects))):
            low, high = SHORT if args.short else lengths
            length = rng.randint(low, high)
            at = start + timedelta(hours=rng.randrange(0, hours - length))
            incidents.append({"kind": kind, "subject": subject, "start": at.isoformat(),
                              "hours": length})  # fmt: skip
    windows = []
    scopes = {"site": sorted({d.customer_site_id for d in devices}),
              "enodeb": sorted({d.enodeb_ip for d in devices}),
              "msisdn": sorted(d.msisdn for d in devices)}  # fmt: skip
    dark = {"site": "site_dark", "enodeb": "enodeb_dark", "msisdn": "device_offline"}
    for n in range(args.windows):
        scope = rng.choice(list(scopes))
        subject = rng.choice(scopes[scope])
        minutes = rng.randint(120, 720)
        at = start + timedelta(minutes=rng.randrange(0, hours * 60 - minutes))
        until = at + timedelta(minutes=minutes)
        windows.append({"scope": scope, "subject": subject, "start": at.isoformat(),
                        "end": until.isoformat(), "note": f"window {n + 1}"})  # fmt: skip
        if n % 2 == 0:  # the work it plans takes its subject down
            first_hour = at.replace(minute=0, second=0, microsecond=0)
            whole = int(-(-(until - first_hour).total_seconds() // 3600))
            incidents.append({"kind": dark[scope], "subject": subject,
                              "start": first_hour.isoformat(), "hours": whole})  # fmt: skip
    return Account(seed, start, end, incidents, windows, devices, sims)


def _hour(text: str) -> int:
    return int(datetime.fromisoformat(text).timestamp()) // 3600


def truth(acct: Account) -> dict[str, dict[str, Any]]:
    """Per ``by`` and subject, the states of its hours by the sandbox's own knowledge."""
    net = build_network(acct.seed, 64).with_incidents(acct.incidents)
    h0 = int(acct.start.timestamp()) // 3600
    h = int((acct.end - acct.start).total_seconds() // 3600)
    hours = np.arange(h0, h0 + h)
    index = {d.msisdn: i for i, d in enumerate(net.devices)}
    rows = np.array([index[d.msisdn] for d in acct.devices], dtype=np.int64)
    n = len(rows)
    act = net.arrays["act_hour"][rows][:, None]
    deact = net.arrays["deact_hour"][rows][:, None]
    active = (act <= hours[None, :]) & (hours[None, :] < deact)
    lit = np.zeros((n, h), dtype=bool)
    for j, r in enumerate(rows.tolist()):
        done = accumulate(net, np.array([r]), h0, h, bases=("T",), per_device=False)
        lit[j] = done.totals["T"] > 0
    where = {"site": [d.customer_site_id for d in acct.devices],
             "enodeb": [d.enodeb_ip for d in acct.devices],
             "msisdn": [d.msisdn for d in acct.devices]}  # fmt: skip
    kinds = {"site_dark": "site", "enodeb_dark": "enodeb", "device_offline": "msisdn"}
    down = np.zeros((n, h), dtype=bool)
    for inc in acct.incidents:
        a = _hour(inc["start"]) - h0
        hit = np.array([v == inc["subject"] for v in where[kinds[inc["kind"]]]])
        down[hit, max(a, 0) : max(a + inc["hours"], 0)] = True
    maint = np.zeros((n, h), dtype=bool)
    own = np.zeros((len(acct.windows), h), dtype=bool)  # each window's hours
    for k, w in enumerate(acct.windows):
        a = int(datetime.fromisoformat(w["start"]).timestamp()) // 3600 - h0
        b = -(-int(datetime.fromisoformat(w["end"]).timestamp()) // 3600) - h0
        own[k, max(a, 0) : max(b, 0)] = True
        hit = np.array([v == w["subject"] for v in where[w["scope"]]])
        maint[hit] |= own[k]
    out: dict[str, dict[str, Any]] = {by: {} for by in BY}
    for j, d in enumerate(acct.devices):
        s = np.full(h, IDLE, dtype=np.int8)
        s[down[j]] = UNAVAILABLE
        s[lit[j]] = AVAILABLE
        s[maint[j]] = MAINTENANCE
        s[~active[j]] = INACTIVE
        out["msisdn"][d.msisdn] = s
    for by, scope in (("customer_site_id", "site"), ("enodeb", "enodeb")):
        for g in sorted(set(where[scope])):
            members = np.array([v == g for v in where[scope]])
            site = acct.devices[int(np.argmax(members))].customer_site_id
            covered = np.zeros(h, dtype=bool)
            for k, w in enumerate(acct.windows):
                if (w["scope"], w["subject"]) in {("site", site), (scope, g)}:
                    covered |= own[k]
            a, free = active[members], active[members] & ~maint[members]
            s = np.full(h, IDLE, dtype=np.int8)
            s[free.any(axis=0) & ~(free & ~down[members]).any(axis=0)] = UNAVAILABLE
            s[(lit[members] & a).any(axis=0)] = AVAILABLE
            s[covered | (a.any(axis=0) & ~free.any(axis=0))] = MAINTENANCE
            s[~a.any(axis=0)] = INACTIVE
            out[by][g] = s
    return out


def _pct(states: np.ndarray) -> float:
    up, down = int((states == AVAILABLE).sum()), int((states == UNAVAILABLE).sum())
    return 100.0 * up / (up + down) if up + down else float("nan")


def measure(acct: Account, args: argparse.Namespace) -> dict[str, Any]:
    """The ledgers of one account by site, eNodeB and subscriber, against the truth."""
    clock = acct.end + timedelta(hours=6)
    truths = truth(acct)
    found: dict[str, Any] = {}
    with serve(seed=acct.seed, clock=clock.isoformat(), incidents=acct.incidents) as sb, \
            tempfile.TemporaryDirectory() as tmp:  # fmt: skip
        inventory = er.Inventory.from_frame(
            pd.DataFrame(sb.inventory()), pd.DataFrame(acct.windows)
        )
        with er.ReportingClient(sb.api_key, sb.reporting_url, progress=False, cache=tmp) as c:
            for by in BY:
                t = time.perf_counter()
                ledger = er.availability(c, inventory=inventory, start=acct.start, end=acct.end,
                                         by=by, granularity="MONTH")  # fmt: skip
                found[by] = (ledger, time.perf_counter() - t)
    result: dict[str, Any] = {}
    for by in BY:
        ledger = found[by][0]
        diffs, maint_ok, rows, missed, extra, idle_unknown = [], 0, 0, 0, 0, 0
        for row in ledger.to_dict(orient="records"):
            s = truths[by][row[COLUMN[by]]]
            rows += 1
            maint_ok += int(row["maintenance_hours"] == int((s == MAINTENANCE).sum()))
            want, got = _pct(s), float(row["availability_pct"])
            if not (np.isnan(want) and np.isnan(got)):
                gap = abs(want - got) if not (np.isnan(want) or np.isnan(got)) else 100.0
                diffs.append((gap, row[COLUMN[by]]))
            missed += max(0, int((s == UNAVAILABLE).sum()) - int(row["unavailable_hours"]))
            extra += max(0, int(row["unavailable_hours"]) - int((s == UNAVAILABLE).sum()))
            idle_unknown += int((s == IDLE).sum())
        diffs.sort(reverse=True)
        close = sum(1 for gap, _ in diffs if gap <= 0.1) + rows - len(diffs)
        result[by] = {"max": diffs[0] if diffs else (0.0, "-"), "rows": rows, "close": close,
                      "maint_ok": maint_ok, "missed": missed, "extra": extra,
                      "idle": idle_unknown, "wall": found[by][1]}  # fmt: skip
        if args.verbose and diffs and diffs[0][0] > 0.1:
            print(f"    seed {acct.seed} {by} {diffs[0][1]}: {diffs[0][0]:.3f} pp")
    return result


# -- the fleet: the ledger in a subprocess, for its requests and memory -------------------------


def _peak_mib() -> float:
    """This process's peak resident memory since it started (Linux: VmHWM), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise SystemExit("the fleet run reads its peak memory from /proc (Linux)")


def child(spec: dict[str, Any]) -> None:
    """Run in the subprocess: the ledger over the sandbox named in ``spec`` (or only the
    imports); prints its rows, wall time and peak memory."""
    if spec.get("baseline"):
        import edgereports.availability.ledger  # noqa: F401  (what it imports, nothing pulled)

        print(json.dumps({"rows": 0, "rss": _peak_mib()}))
        return
    inventory = er.Inventory.from_file(spec["inventory"])
    with er.ReportingClient(spec["key"], spec["url"], progress=False) as client:
        t = time.perf_counter()
        ledger = er.availability(client, inventory=inventory, start=spec["start"],
                                 end=spec["end"], by=spec["by"], granularity="DAY")  # fmt: skip
        wall = time.perf_counter() - t
    print(json.dumps({"rows": len(ledger), "wall": wall, "rss": _peak_mib()}))


def _in_child(spec: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)],
                          stdout=subprocess.PIPE, text=True, check=False)  # fmt: skip
    if done.returncode:
        raise SystemExit(f"the ledger subprocess failed ({done.returncode})")
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def fleet(devices: int, seed: int, rng: random.Random) -> dict[str, Any]:
    start, _ = _month(rng)
    end = start + timedelta(days=30)
    with serve(seed=seed, devices=devices, clock=(end + timedelta(hours=6)).isoformat()) as sb, \
            tempfile.TemporaryDirectory() as tmp:  # fmt: skip
        path = write_inventory(sb.inventory(), Path(tmp) / "inventory.csv")
        spec = {"url": sb.reporting_url, "key": sb.api_key, "inventory": str(path),
                "start": start.isoformat(), "end": end.isoformat(), "by": "msisdn"}  # fmt: skip
        base = _in_child({"baseline": True})
        sb.reset_counters()
        answer = _in_child(spec)
        requests = sb.request_count()
    return {"devices": devices, "requests": requests, "wall": answer["wall"],
            "rss": answer["rss"], "base": base["rss"], "rows": answer["rows"]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=6, help="accounts drawn now (6)")
    parser.add_argument("--seed-list", help="these seeds (comma-separated), e.g. to repeat some")
    parser.add_argument("--per-kind", type=int, default=2, help="outages of each kind (2)")
    parser.add_argument("--windows", type=int, default=3, help="maintenance windows (3)")
    parser.add_argument("--short", action="store_true", help="outages from 1 hour up")
    parser.add_argument("--fleet", action="store_true", help="10,000 devices x 30 days too")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    draws = random.SystemRandom()
    if args.seed_list:
        seeds = [int(s) for s in args.seed_list.split(",")]
    else:
        seeds = [draws.randrange(1_000, 1_000_000) for _ in range(args.seeds)]
    print(f"seeds: {','.join(map(str, seeds))}")
    kinds: Counter[str] = Counter()
    results = []
    for seed in seeds:
        acct = draw(seed, random.Random(seed), args)  # the seed repeats the whole draw
        kinds.update(i["kind"] for i in acct.incidents)
        results.append(measure(acct, args))
    lengths = "from 1 hour up" if args.short else "from each kind's documented minimum up"
    print(f"\n{len(seeds)} accounts of 64 devices, one UTC month each; outages {lengths}: "
          f"{dict(kinds)}; {args.windows} maintenance windows each")  # fmt: skip
    for by in BY:
        worst = max((r[by]["max"] for r in results), key=lambda m: m[0])
        rows = sum(r[by]["rows"] for r in results)
        ok = sum(r[by]["maint_ok"] for r in results)
        target = "  (target <= 0.1)" if by == "customer_site_id" else ""
        close = sum(r[by]["close"] for r in results)
        print(f"  by {by:<17} largest |ledger - truth| per subject and month: "
              f"{worst[0]:.3f} pp ({worst[1]}){target}; within 0.1 pp: {close}/{rows} = "
              f"{close / rows:.1%}")  # fmt: skip
        print(f"  {'':20} outage hours left unknown {sum(r[by]['missed'] for r in results)}, "
              f"idle hours counted unavailable {sum(r[by]['extra'] for r in results)}, idle "
              f"hours (unknown by the rule) {sum(r[by]['idle'] for r in results)}; maintenance "
              f"hours exact in {ok}/{rows} rows = {ok / rows:.1%} (target 100%)")  # fmt: skip
    walls = [r[by]["wall"] for r in results for by in BY]
    print(f"  wall per ledger (64 devices, a month and 28 days of history): "
          f"median {sorted(walls)[len(walls) // 2]:.2f} s")  # fmt: skip
    if args.fleet:
        got = fleet(10_000, draws.randrange(1_000, 1_000_000), draws)
        print(f"\nfleet: {got['devices']:,} devices x 30 days by msisdn, DAY: {got['requests']:,} "
              f"requests (target <= 10,001); wall {got['wall']:.0f} s; peak RSS "
              f"{got['rss']:.0f} MiB against {got['base']:.0f} MiB for the imports alone "
              f"({got['rss'] / got['base']:.1f}x); {got['rows']:,} rows")  # fmt: skip


if __name__ == "__main__":
    main()
