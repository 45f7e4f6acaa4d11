"""Assembly benchmark: what a pull does on its own thread once the last answer is in.

The pull of ``bench_peers.py`` (N subscribers x D days of HOUR uplink and downlink bytes, one
request per subscriber) is fetched once from a sandbox in a child process, keeping its plan and
its answers' rows. The assembly (``assemble_pull``: each answer's table, the rows each window
owns, the canonical order, the frame and its marks) is then timed again and again on them, in
this process, against a baseline: the frame it makes converted to Arrow and back
(``pyarrow.Table.from_pandas`` and ``to_pandas``, one pass over its rows each way). The two are
timed in turns; the medians and their ratio are printed. Nothing here is a test.

Usage::

    python benchmarks/bench_assembly.py                  # 50 subscribers x 90 days
    python benchmarks/bench_assembly.py --subscribers 10 --days 14 --rounds 40

To compare two trees, run it with ``PYTHONPATH`` pointing at each, in turns.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import pyarrow as pa
from bench_peers import _client, _subscribers, sandbox

import edgereports.reporting.client as client_module


def _captured(subscribers: int, days: int) -> tuple[Any, ...]:
    """The arguments of the pull's ``assemble_pull`` (its plans, answers and present)."""
    captured: list[tuple[Any, ...]] = []
    assemble = client_module.assemble_pull

    def keep(plans: Any, outcomes: list[Any], *rest: Any) -> Any:
        captured.append((plans, list(outcomes), *rest))
        return assemble(plans, outcomes, *rest)

    client_module.assemble_pull = keep  # type: ignore[assignment]
    try:
        with sandbox(0.0, max(64, subscribers)) as sb:
            _client(sb, _subscribers(sb, subscribers), days)
    finally:
        client_module.assemble_pull = assemble  # type: ignore[assignment]
    return captured[0]


def _seconds(work: Any) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subscribers", type=int, default=50)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--rounds", type=int, default=60)
    args = parser.parse_args()
    plans, outcomes, *rest = _captured(args.subscribers, args.days)

    def assembly() -> None:
        client_module.assemble_pull(plans, list(outcomes), *rest)

    frame = client_module.assemble_pull(plans, list(outcomes), *rest).frames[0]

    def baseline() -> None:
        pa.Table.from_pandas(frame, preserve_index=False).to_pandas()

    times: dict[str, list[float]] = {"assembly": [], "round trip": []}
    for _ in range(args.rounds):
        times["assembly"].append(_seconds(assembly))
        times["round trip"].append(_seconds(baseline))
    print(f"pull: {args.subscribers} subscribers x {args.days} days HOUR, {len(outcomes)} "
          f"answers, {len(frame):,} rows; {args.rounds} rounds each, in turns")  # fmt: skip
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, value in medians.items():
        print(f"{name:<11} median {value * 1000:7.2f} ms   min {min(times[name]) * 1000:7.2f} ms")
    print(f"assembly / round trip: {medians['assembly'] / medians['round trip']:.2f}x")


if __name__ == "__main__":
    main()
