"""Start-up of the ``edgereports`` command and of ``import edgereports.reporting``.

Each case is a fresh process, timed by its wall clock from start to exit, against
``python -c "import argparse"`` (the least a command that parses its options can do) measured in
the same run, the cases taking turns round by round. The cases:

- ``edgereports --help`` and ``edgereports report --help`` (the console script, as users run
  it; ``report`` is a command whose work needs pandas);
- ``python -c "import edgereports.reporting"`` (the client, before its first pull).

Beside each median: the modules the process had imported when it ended, and whether pandas,
pyarrow or numpy were among them. Figures are printed; nothing here is a test.

Usage::

    python benchmarks/bench_cli_start.py              # 15 rounds
    python benchmarks/bench_cli_start.py --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

HEAVY = ("pandas", "pyarrow", "numpy")
BASELINE = 'python -c "import argparse"'
# the command's entry point, as the console script calls it
_CLI = "import sys\nfrom edgereports.cli import main\nsys.exit(main(sys.argv[1:]))\n"
# prints what the process imported once it is done (atexit runs after the command)
_COUNT = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('MODULES', len(sys.modules),"
    f" ','.join(m for m in {HEAVY!r} if m in sys.modules) or '-', file=sys.stderr))\n"
)


def _cases() -> dict[str, tuple[list[str], list[str]]]:
    """Per case: the command timed, and the code and arguments that count its modules."""
    script = Path(sys.executable).with_name("edgereports")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "edgereports.cli"]
    return {
        BASELINE: ([sys.executable, "-c", "import argparse"], ["import argparse"]),
        "edgereports --help": ([*command, "--help"], [_CLI, "--help"]),
        "edgereports report --help": ([*command, "report", "--help"], [_CLI, "report", "--help"]),
        'python -c "import edgereports.reporting"': (
            [sys.executable, "-c", "import edgereports.reporting"],
            ["import edgereports.reporting"],
        ),
    }


# every process starts here, so ``python -c`` imports the package that PYTHONPATH or the
# environment names, not a checkout that happens to be the working directory
_HERE = Path(__file__).resolve().parent


def _wall(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, cwd=_HERE
    )
    return time.perf_counter() - start


def _modules(code: str, *args: str) -> tuple[int, str]:
    """The modules a case has imported when it ends, and which of pandas, pyarrow, numpy."""
    argv = [sys.executable, "-c", _COUNT + code, *args]
    out = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=_HERE)
    line = next(x for x in out.stderr.splitlines() if x.startswith("MODULES "))
    _, count, heavy = line.split()
    return int(count), heavy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="rounds of every case (default 15)")
    args = parser.parse_args()

    sys.path.insert(0, str(_HERE))
    from package_bytecode import compile_package

    compile_package()
    cases = _cases()
    times: dict[str, list[float]] = {name: [] for name in cases}
    for argv, _ in cases.values():  # warm the file cache once
        _wall(argv)
    for _ in range(args.rounds):
        for name, (argv, _) in cases.items():
            times[name].append(_wall(argv))
    base = statistics.median(times[BASELINE])
    print(f"{'case':<42} {'median s':>9} {'/ argparse':>11} {'modules':>8}  heavy loaded")
    for name, (_, counted) in cases.items():
        median = statistics.median(times[name])
        count, heavy = _modules(*counted)
        print(f"{name:<42} {median:>9.3f} {median / base:>10.2f}x {count:>8}  {heavy}")
    print(f"\n{args.rounds} rounds, medians; the cases take turns within a round.")


if __name__ == "__main__":
    main()
