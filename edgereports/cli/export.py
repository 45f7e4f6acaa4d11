"""The ``edgereports export`` subcommand: run an export job file (made for cron and systemd;
exit status: :data:`EPILOG`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..errors import EdgeReportsError, ExportLocked, InputError
from ._command import add_command, add_progress
from ._errors import ShortErrors, say

__all__ = ["EXIT_FAILED", "EXIT_LOCKED", "EXIT_OK", "EXIT_USAGE", "add_parser", "run"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_LOCKED = 3

DESCRIPTION = """\
Fetch what is new for every report of a job file and write it to
OUTPUT/<report>/day=YYYY-MM-DD/part.parquet. The first run fetches from each report's start
date; later runs from the saved watermark minus the lookback (in whole UTC days), up to the
last complete bucket. Each day's file is replaced whole and atomically, so re-runs never
duplicate rows. The API key comes from the environment (EDGEREPORTS_API_KEY or the variable
named by api_key_env); the reporting URL from EDGEREPORTS_REPORTING_URL unless the job file
sets it. With format = "delta" in the job file, each report is a Delta table (local or
s3://...), and --only NAME --from D --until E runs one unit of work: it replaces exactly the
UTC days [D, E), so orchestrators can run units on several machines at once (with --shard K/N,
only shard K of N of the report's subscribers, sites or IMSIs). --dry-run prints the windows,
their requests and rows, and the time they take at the job's rate_limit; --maintain compacts
the reports' files instead of fetching.
"""

EPILOG = """\
exit status: 0 ok, 1 some windows failed (the others are written; the next run retries),
2 bad job file or arguments, 3 another run holds the lock.

examples:
  edgereports export nightly.toml --dry-run
  edgereports export nightly.toml --json
  edgereports export nightly.toml
  edgereports export nightly.toml --only usage_daily --full-refresh
  edgereports export nightly.toml --until 2024-06-30
  edgereports export nightly.toml --only usage_daily --from 2024-06-01 --until 2024-06-02
  edgereports export nightly.toml --only bytes --from 2023-01-01 --until 2024-01-01 --shard 1/179
  edgereports export nightly.toml --maintain
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``export`` subcommand (run by :func:`run`); returns its parser."""
    p = add_command(
        subparsers,
        "export",
        run,
        help="run a scheduled export job (TOML) to partitioned Parquet",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    p.add_argument("jobfile", metavar="JOBFILE", help="the TOML job file")
    p.add_argument(
        "--until",
        metavar="T",
        help="stop at T (YYYY-MM-DD or ISO-8601 with offset), rounded down to a UTC midnight",
    )
    p.add_argument(
        "--from",
        dest="start",
        metavar="D",
        help="run the UTC days [D, --until) as a unit of work: fetch and replace exactly those "
        "days, whatever the watermark (YYYY-MM-DD or ISO-8601 with offset)",
    )
    p.add_argument(
        "--shard",
        metavar="K/N",
        help="with --from: run shard K of N of each report's fan-out values (subscribers...); "
        "the days count as written once all N shards are in (see --dry-run of the job)",
    )
    p.add_argument(
        "--only",
        metavar="NAME",
        action="append",
        help="run only this report (repeat for several)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the windows it would fetch, their requests and rows, and the time at the "
        "job's rate_limit",
    )
    p.add_argument(
        "--maintain",
        action="store_true",
        help="fetch nothing: compact each report's files (Delta: and checkpoint, and remove "
        "files older than the job's retention); rows and readers are unaffected",
    )
    p.add_argument(
        "--full-refresh",
        action="store_true",
        help="ignore the watermarks and rebuild each report from its start date",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the summary (or the plan of --dry-run) as one JSON object instead of text: "
        "per report its plan, windows, rows, files, bytes added, watermark and failures",
    )
    add_progress(p, "progress bars (default: when stderr is a terminal)")
    return p


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; print the plan or the summary; return the exit status."""
    # pyarrow's Parquet writer takes its buffers from Arrow's process-wide default pool, whose
    # allocator keeps several MiB of huge pages per process; the system allocator keeps an
    # export's peak memory bounded (benchmarks/bench_export.py). It must be chosen before
    # pyarrow is imported, so only this command's own process does it, and a value the user
    # set wins.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    from ..export import maintain, run_export
    from ..export.files import describe_os_error

    try:
        if args.maintain:
            if args.dry_run or args.full_refresh or args.start or args.until or args.shard:
                print(
                    "edgereports: error: --maintain fetches nothing; it takes no --dry-run, "
                    "--full-refresh, --from, --until or --shard (only --only)",
                    file=sys.stderr,
                )
                return EXIT_USAGE
            for done in maintain(args.jobfile, only=args.only):
                print(done)
            return EXIT_OK
        summary = run_export(
            args.jobfile,
            until=args.until,
            only=args.only,
            dry_run=args.dry_run,
            full_refresh=args.full_refresh,
            progress=args.progress,
            start=args.start,
            shard=args.shard,
        )
    except ExportLocked as exc:
        say("edgereports: export locked: ", exc)
        return EXIT_LOCKED
    except InputError as exc:
        say("edgereports: error: ", exc)
        return EXIT_USAGE
    except EdgeReportsError as exc:
        say(f"edgereports: {type(exc).__name__}: ", exc)
        return EXIT_FAILED
    except OSError as exc:  # read-only, not a directory, disk full: the state stays valid
        say("edgereports: error: cannot write the export: ", describe_os_error(exc))
        return EXIT_FAILED
    print(json.dumps(summary.to_dict(), indent=2) if args.json else summary)
    return summary.exit_code


def main(argv: list[str] | None = None) -> int:
    """Run ``edgereports export`` on its own (what the tests and ``python -m`` use)."""
    parser = ShortErrors(prog="edgereports")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["export", *(sys.argv[1:] if argv is None else argv)])
    return int(args.handler(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
