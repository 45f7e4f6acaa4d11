"""The ``edgereports health`` command: health flags of an account's subscribers and sites
(exit status: :data:`EPILOG`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import ConfigError, InputError
from ..query.timegrid import relative_end
from ._command import add_command
from .report import emit

__all__ = ["add_parser", "cmd_health"]

DESCRIPTION = """\
Judge every subscriber and site of an account against its own history and print the flags:
site_dark, device_offline, usage_drop, usage_spike and sim_idle (docs: Health flags). One
hourly report per subscriber is pulled (28 days of history before the range), and the
account's SIM counts.

With EDGEREPORTS_API_KEY and EDGEREPORTS_REPORTING_URL set it asks the live service: give
--account-id (or EDGEREPORTS_ACCOUNT_ID) and the subscribers (--msisdn, or --msisdn-file with
one per line). Without them, or with --sandbox, it starts the local sandbox (seed 0, 64
devices) and checks every subscriber of its account; --incident injects incidents into it.
"""

EPILOG = """\
examples:
  edgereports health --last 7d
  edgereports health --sandbox --now 2024-03-15T12:00:00+05:30 --last 7d \\
      --incident site_dark:CHE-1005:2024-03-12T04:00:00+00:00:6
  edgereports health --account-id A --msisdn-file subscribers.txt --start 2024-06-01 \\
      --end 2024-07-01 --json flags.json

exit status: 0 judged (flags printed, or a line saying there are none), 1 a service or data
error, 2 bad input.
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``health`` subcommand (run by :func:`cmd_health`); returns its parser."""
    p = add_command(
        subparsers,
        "health",
        cmd_health,
        help="flag dark sites, offline devices, usage drops and spikes, idle SIMs",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    when = p.add_argument_group("range (--last, or --start and --end)")
    when.add_argument("--last", metavar="PERIOD", help="e.g. 7d, 2w or 48h, up to now")
    when.add_argument("--start", help="a date, an ISO 8601 timestamp or a relative date")
    when.add_argument("--end", help="the end (exclusive)")
    when.add_argument("--tz", help="zone of hour of day and weekends (default: the range's)")
    who = p.add_argument_group("live service")
    who.add_argument("--account-id", help="the account (default EDGEREPORTS_ACCOUNT_ID)")
    who.add_argument("--msisdn", action="append", default=[], help="a subscriber (repeat)")
    who.add_argument("--msisdn-file", metavar="FILE", help="subscribers, one per line")
    sb = p.add_argument_group("sandbox")
    sb.add_argument("--sandbox", action="store_true", help="use the local sandbox")
    sb.add_argument("--seed", type=int, default=0, help="the sandbox's seed (default 0)")
    sb.add_argument("--now", help="fix the sandbox's clock at this ISO 8601 instant")
    sb.add_argument(
        "--incident",
        action="append",
        default=[],
        metavar="KIND:SUBJECT:START:HOURS",
        help="inject an incident into the sandbox (repeat); see 'edgereports sandbox --help'",
    )
    out = p.add_argument_group("output")
    out.add_argument(
        "--json", nargs="?", const="-", metavar="FILE", help="JSON records to FILE or stdout"
    )
    return p


def _range(args: argparse.Namespace) -> tuple[str, str]:
    if args.last:
        if args.start or args.end:
            raise InputError("give --last, or --start and --end, not both")
        end = relative_end(args.last)
        if end is None:
            raise InputError(f"--last {args.last!r} must look like 7d, 2w or 48h")
        return args.last, end
    if not (args.start and args.end):
        raise InputError("give the range: --last 7d, or --start and --end")
    return str(args.start), str(args.end)


def _subscribers(args: argparse.Namespace) -> list[str]:
    numbers = list(args.msisdn)
    if args.msisdn_file:
        try:
            text = Path(args.msisdn_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(
                f"--msisdn-file: cannot read {args.msisdn_file}: {exc.strerror}"
            ) from None
        numbers += [line.strip() for line in text.splitlines() if line.strip()]
    return numbers


def cmd_health(args: argparse.Namespace) -> int:
    """Run ``edgereports health``; returns the exit status.

    Raises:
        InputError: bad flags or settings (exit 2).
        EdgeReportsError: the pull failed (exit 1).
    """
    from ..health import flags_table, health
    from ..reporting import ReportingClient

    start, end = _range(args)
    settings = Settings.from_env()
    live = settings.api_key is not None and settings.reporting_url is not None
    with contextlib.ExitStack() as stack:
        if args.sandbox or not live:
            from ..sandbox import serve

            try:
                sb = stack.enter_context(
                    serve(seed=args.seed, clock=args.now, incidents=args.incident)
                )
            except ValueError as exc:
                raise InputError(str(exc)) from None
            account: str | None = sb.account_id
            numbers = _subscribers(args) or [s.msisdn for s in sb.network.sims_of(sb.account_id)]
            client = ReportingClient(sb.api_key, sb.reporting_url)
        else:
            if args.incident or args.now:
                raise InputError("--incident and --now are for the sandbox (add --sandbox)")
            account = args.account_id or settings.account_id
            if not account:
                raise ConfigError("give --account-id (or set EDGEREPORTS_ACCOUNT_ID)")
            numbers = _subscribers(args)
            client = ReportingClient.from_settings(settings)
        stack.enter_context(client)
        assert account is not None
        flags = health(client, account_id=account, msisdn=numbers, start=start, end=end, tz=args.tz)
    if args.json:
        records = [
            {**row, "start": row["start"].isoformat(), "end": row["end"].isoformat()}
            for row in flags.to_dict(orient="records")
        ]
        emit(args.json, json.dumps(records, indent=1) + "\n")
    else:
        print(flags_table(flags))
    if args.json and not len(flags):
        span = flags.attrs.get("range") or ["", ""]
        print(f"edgereports: no flags from {span[0]} to {span[1]}", file=sys.stderr)
    return 0
