"""The ``edgereports page`` subcommand: a job file's reports as one HTML file (for cron;
exit status: :data:`EPILOG`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import EdgeReportsError, InputError
from ..reporting.periods import COMPARE_MODES
from ._command import add_command, add_progress
from .export import EXIT_FAILED, EXIT_OK, EXIT_USAGE

__all__ = ["add_parser", "run"]

DESCRIPTION = """\
Fetch every report of a job file (the file 'edgereports export' reads) over the last period
and write one self-contained HTML page: per report a chart, a summary (with the change from
the compared period) and the first rows; a header with the range, the service's clock and
the version. Charts are inline images: the file can be mailed and opened anywhere. The period
is resolved against the service's clock: --last 7d is the seven whole UTC days before today.
"""

EPILOG = """\
exit status: 0 ok; 1 the page was written but some reports failed (named on the page and on
stderr, one line each); 2 bad arguments, job file or settings (no page).

examples:
  edgereports page nightly.toml --last 7d --out weekly.html
  edgereports page nightly.toml --last 7d --compare previous_period --out weekly.html
  edgereports page nightly.toml --last 7d --compare previous_week,previous_year_dow \
      --out weekly.html                   # against last week and the same weekdays last year
  edgereports page nightly.toml --last 24h --health --out today.html
  edgereports page nightly.toml --last 7d --availability --out weekly.html
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``page`` subcommand (run by :func:`run`); returns its parser."""
    p = add_command(
        subparsers,
        "page",
        run,
        help="write a job file's reports over the last period as one HTML page",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    p.add_argument("jobfile", metavar="JOBFILE", help="the TOML job file")
    p.add_argument("--last", required=True, metavar="PERIOD", help="the period: 7d, 4w, 24h, ...")
    p.add_argument(
        "--compare",
        metavar="PERIOD",
        help=f"compare with other periods: {', '.join(COMPARE_MODES)}, or up to 4 of them "
        "separated by commas",
    )
    p.add_argument("--health", action="store_true", help="add the account's health flags")
    p.add_argument(
        "--availability",
        action="store_true",
        help="add each site's availability this month against the previous month",
    )
    p.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write")
    p.add_argument("--title", help="the page's title (default: the job's name and period)")
    add_progress(p, "progress bars (default: when stdout and stderr are terminals)")
    return p


def _compare(text: str | None) -> str | list[str] | None:
    """``--compare``: one period's name, or several separated by commas (a list)."""
    if text is None or "," not in text:
        return text
    return [part.strip() for part in text.split(",")]


def run(args: argparse.Namespace) -> int:
    """Build and write the page; returns the exit status (messages go to stderr)."""
    from ..export.client import make_client
    from ..export.files import check_writable
    from ..export.job import load_job
    from ..page import (
        availability_sections,
        build_page,
        check_compare,
        check_last,
        health_sections,
        load_health,
    )
    from ..page.sections import job_inventory

    try:
        check_last(args.last)
        compare = _compare(args.compare)
        try:
            check_compare(compare)
        except InputError:
            raise InputError(
                f"--compare must be one of {', '.join(COMPARE_MODES)}, or up to 4 of them "
                f"separated by commas, got {args.compare!r}"
            ) from None
        check_writable(args.out, "--out")
        job = load_job(args.jobfile)
        makers = []
        if args.health:
            load_health()  # a missing package is one line, before any request
            job_inventory(job)  # so is a bad [inventory]
            makers.append(health_sections)
        if args.availability:
            job_inventory(job)  # a bad [inventory] is one line, before any request
            makers.append(availability_sections)
        client = make_client(job)
    except InputError as exc:
        print(f"edgereports: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    client.progress = _progress(args.progress)
    _quiet_charts()
    with client:
        try:
            page = build_page(
                job,
                last=args.last,
                compare=compare,
                client=client,
                sections=makers,
                notify=_failed,
                title=args.title,
            )
        except EdgeReportsError as exc:  # e.g. nothing answers to learn the clock
            print(f"edgereports: {type(exc).__name__}: {exc}", file=sys.stderr)
            return EXIT_FAILED
    page.write(args.out)
    if sys.stdout.isatty():
        print(
            f"wrote {args.out}: {len(page.sections)} sections, {len(page.failures)} failed",
        )
    return EXIT_FAILED if page.failures else EXIT_OK


def _failed(line: str) -> None:
    print(f"edgereports: page: {' '.join(line.split())}", file=sys.stderr, flush=True)


def _progress(setting: bool | None) -> bool:
    """Bars only when asked, or when stdout and stderr are terminals (never under cron)."""
    if setting is not None:
        return setting
    return sys.stdout.isatty() and sys.stderr.isatty()


def _quiet_charts() -> None:
    """Draw charts off screen: a scheduled run has no display."""
    import matplotlib

    matplotlib.use("Agg")
