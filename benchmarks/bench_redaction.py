"""What redaction costs: per log line, per new secret, and on texts built to make it slow.

Prints three groups of ratios, each against a baseline timed in the same run:

- redacting one urllib3 DEBUG line with a client's secrets (its key and a URL password), against
  redacting it with none (the patterns every text goes through: URL userinfo, ``apikey=``...);
- the first redaction with a new secret (its pattern compiled) against a later one (cached);
- texts made of what the patterns repeat (backslashes, ``%25``, ``&amp;``, spaces, ``\\n``,
  ``user:``): the time per character at 100,000 characters against at 10,000. A ratio near 1
  is linear time; a pattern that tried many ways of matching one text would show 10 or more.

Run: ``.venv/bin/python benchmarks/bench_redaction.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial

from edgereports.errors import redact  # where it lives in every version

KEY = "sk-live-7f3a9c1e5b2d4e6fA8b0c2d4"
PASSWORD = "pa55w0rd-Zq"
LINE = 'http://127.0.0.1:43359 "POST /connectivity/v1/report?apikey=*** HTTP/1.1" 200 5123'
ADVERSARIAL = {
    "backslashes": "\\",
    "%25": "%25",
    "&amp;": "&amp;",
    "spaces": " ",
    "escaped newlines": "\\n",
    "user: words": " ana:",
    "the key's head": KEY[:12],
}


def best(run: Callable[[], object], repeat: int, number: int) -> float:
    """The fastest of ``repeat`` timings of ``number`` calls, per call."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        for _ in range(number):
            run()
        times.append((time.perf_counter() - started) / number)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    secrets = [KEY, PASSWORD]
    redact(LINE, secrets)  # the patterns compiled
    line = best(lambda: redact(LINE, secrets), repeat, 2000)
    generic = best(lambda: redact(LINE), repeat, 2000)
    print(f"a DEBUG line, a client's two secrets / none: {line / generic:.1f}x "
          f"({line * 1e6:.0f} us a line)")  # fmt: skip

    firsts = []
    for n in range(repeat):
        started = time.perf_counter()
        redact("x", [f"{KEY}-{n}"])
        firsts.append(time.perf_counter() - started)
    later = best(lambda: redact("x", [f"{KEY}-0"]), repeat, 200)
    first = statistics.median(firsts)
    print(
        f"a new secret's first redaction / a later one: {first / later:.0f}x ({first * 1e3:.0f} ms)"
    )

    print("time per character, 100,000 against 10,000 characters (1 = linear):")
    for name, unit in ADVERSARIAL.items():
        short, long = (unit * (size // len(unit)) for size in (10_000, 100_000))
        per_short = best(partial(redact, short, secrets), repeat, 10) / len(short)
        per_long = best(partial(redact, long, secrets), repeat, 1) / len(long)
        print(f"  {name:>16}: {per_long / per_short:.2f}")


if __name__ == "__main__":
    main()
