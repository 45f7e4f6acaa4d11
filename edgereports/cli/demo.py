"""The ``edgereports demo`` subcommand: every preset into Parquet, PNG charts and an HTML page
(exit status: :data:`EPILOG`)."""

from __future__ import annotations

import argparse
from typing import Any

from ._command import add_command

__all__ = ["add_parser", "cmd_demo"]

DESCRIPTION = """\
Run the eleven report presets end to end and write, under --out, one Parquet file per frame
(frames/), one PNG chart per report (charts/) and index.html showing the charts and tables.
A summary table per report is printed as it arrives.

Without settings the demo starts the local sandbox in-process (seed 0, 64 devices, a fixed
clock, so every run gives the same output) and takes the account, subscribers and sites from
it. It injects two incidents into the sandbox's network (one subscriber offline for 30 hours,
a sensor idle for two days) so that the health section has something to find, and lists them
on the page as the ground truth (--no-incidents leaves them out).

With EDGEREPORTS_API_KEY and EDGEREPORTS_REPORTING_URL set it reports on the live service
instead: give --account-id, and --msisdn/--imsi/--customer-site-id for the presets that need
them (presets without their ids are skipped). --sandbox forces the sandbox.
"""

EPILOG = """\
examples:
  edgereports demo
  edgereports demo --out my-demo --devices 200
  EDGEREPORTS_API_KEY=... EDGEREPORTS_REPORTING_URL=https://... \\
      edgereports demo --account-id 62c40843c7a1909709112345 --msisdn 919876543210

exit status: 0 ok, 1 a preset failed (the others are written), 2 bad arguments or settings.
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``demo`` subcommand (run by :func:`cmd_demo`); returns its parser."""
    p = add_command(
        subparsers,
        "demo",
        cmd_demo,
        help="run every preset into Parquet, PNG charts and an HTML page",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    p.add_argument("--out", default="demo-output", help="output directory (default demo-output)")
    p.add_argument(
        "--sandbox", action="store_true", help="use the local sandbox even when a key is set"
    )
    sb = p.add_argument_group("sandbox")
    sb.add_argument("--seed", type=int, default=0, help="the sandbox's seed (default 0)")
    sb.add_argument("--devices", type=int, default=64, help="devices on the account (default 64)")
    sb.add_argument(
        "--no-incidents",
        dest="incidents",
        action="store_false",
        help="do not inject the demo's two incidents (an offline subscriber, an idle sensor) "
        "that give the health section something to find",
    )
    live = p.add_argument_group("live service (with EDGEREPORTS_API_KEY set)")
    live.add_argument("--account-id", help="the account to report on")
    live.add_argument("--msisdn", action="append", default=[], help="a subscriber (repeat)")
    live.add_argument("--imsi", action="append", default=[], help="a subscriber IMSI (repeat)")
    live.add_argument(
        "--customer-site-id", action="append", default=[], help="a customer site (repeat)"
    )
    return p


def cmd_demo(args: argparse.Namespace) -> int:
    """Run ``edgereports demo``; returns the exit status.

    Raises:
        ConfigError: the live service was chosen without an account.
        EdgeReportsError: a service error outside any one preset.
    """
    import matplotlib

    matplotlib.use("Agg")  # a command draws into files only

    from ..demo import Subjects, run_demo

    subjects = None
    if args.account_id:
        subjects = Subjects(
            account_id=args.account_id,
            msisdns=tuple(args.msisdn),
            imsis=tuple(args.imsi),
            sites=tuple(args.customer_site_id),
            devices=tuple(args.msisdn),
        )
    result = run_demo(
        args.out,
        subjects=subjects,
        sandbox=True if args.sandbox else None,
        seed=args.seed,
        devices=args.devices,
        incidents=args.incidents,
    )
    return 0 if result.ok else 1
