"""The ``edgereports availability`` command: the availability ledger of an account's sites,
eNodeBs or subscribers (exit status: :data:`EPILOG`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..errors import ConfigError, InputError
from ._command import add_command
from .health import _given, _range
from .report import emit

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["add_parser", "cmd_availability"]

DESCRIPTION = """\
Count an account's hours per site, eNodeB or subscriber as available, unavailable, excluded
(maintenance windows; SIMs not yet or no longer active) and unknown, and print the
availability: available / (available + unavailable), the unknown hours left out (docs:
Availability). An hour is available when the service shows time online there, unavailable
when it shows none and health finds an outage covering every active device there (a silence
its own history makes unlikely), and unknown otherwise: an idle device and a dead one look
alike. Hours are whole UTC hours; --granularity DAY or MONTH counts them per UTC day or month,
else one row per subject covers the whole range.

It pulls what 'edgereports health' pulls: one hourly report per subscriber (with 28 days of
history before the range), the account's SIM counts, and with a partial list each site's own
report. Give the account's inventory (--inventory FILE, CSV or Parquet; --maintenance FILE for
planned windows), or only subscribers (--msisdn, --msisdn-file): a partial list, which the
ledger says it judged from. With EDGEREPORTS_API_KEY and EDGEREPORTS_REPORTING_URL set it asks
the live service (--account-id or EDGEREPORTS_ACCOUNT_ID, else the inventory's). Without them,
or with --sandbox, it starts the local sandbox (seed 0, 64 devices) and counts its own
inventory; --incident injects outages into it.
"""

EPILOG = """\
examples:
  edgereports availability --last 30d
  edgereports availability --last 30d --by enodeb --granularity DAY --json days.json
  edgereports availability --sandbox --now 2024-03-15T12:00:00+05:30 --last 30d \\
      --incident site_dark:CHE-1005:2024-03-12T04:00:00+00:00:6
  edgereports availability --inventory inventory.csv --maintenance windows.csv \\
      --start 2024-06-01 --end 2024-07-01 --by msisdn --json

exit status: 0 counted (the ledger printed), 1 a service or data error, 2 bad input.
"""

_BY = ("site", "enodeb", "msisdn")
_ATTRS = ("rule", "by", "granularity", "range", "zone", "history", "judged_until", "inventory",
          "maintenance", "outages", "unjudged", "deactivated")  # fmt: skip


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``availability`` subcommand (run by :func:`cmd_availability`); returns its
    parser."""
    p = add_command(
        subparsers,
        "availability",
        cmd_availability,
        help="count available, unavailable, excluded and unknown hours per site or subscriber",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    when = p.add_argument_group("range (--last, or --start and --end)")
    when.add_argument("--last", metavar="PERIOD", help="e.g. 30d, 4w or 48h, up to now")
    when.add_argument("--start", help="a date, an ISO 8601 timestamp or a relative date")
    when.add_argument("--end", help="the end (exclusive)")
    when.add_argument("--tz", help="zone of the hour classes outages are judged by")
    what = p.add_argument_group("the ledger")
    what.add_argument("--by", default="site", help=f"{', '.join(_BY)} (default site)")
    what.add_argument(
        "--granularity", metavar="GRAIN", help="DAY or MONTH (UTC); default: the whole range"
    )
    who = p.add_argument_group("the account")
    who.add_argument("--inventory", metavar="FILE", help="the account's inventory, CSV or Parquet")
    who.add_argument("--maintenance", metavar="FILE", help="maintenance windows, CSV or Parquet")
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


def cmd_availability(args: argparse.Namespace) -> int:
    """Run ``edgereports availability``; returns the exit status.

    Raises:
        InputError: bad flags, settings or files (exit 2).
        EdgeReportsError: the pull failed (exit 1).
    """
    from ..availability import availability, check_by, check_granularity
    from ..reporting import ReportingClient

    start, end = _range(args)
    try:
        by = check_by(args.by)
    except InputError:
        raise InputError(f"--by must be one of {', '.join(_BY)}, got {args.by!r}") from None
    grain = check_granularity(args.granularity)
    if grain == "HOUR":
        raise InputError("--granularity must be DAY or MONTH (HOUR rows: er.availability)")
    settings = Settings.from_env()
    live = settings.api_key is not None and settings.reporting_url is not None
    with contextlib.ExitStack() as stack:
        if args.sandbox or not live:
            from ..inventory.model import Inventory
            from ..sandbox import serve

            try:
                sb = stack.enter_context(
                    serve(seed=args.seed, clock=args.now, incidents=args.incident)
                )
            except ValueError as exc:
                raise InputError(str(exc)) from None
            given = _given(args, args.account_id or sb.account_id) or {
                "inventory": Inventory.from_sandbox(sb)
            }
            client = ReportingClient(sb.api_key, sb.reporting_url)
        else:
            if args.incident or args.now:
                raise InputError("--incident and --now are for the sandbox (add --sandbox)")
            account = args.account_id or settings.account_id
            if not account and not args.inventory:
                raise ConfigError("give --account-id (or set EDGEREPORTS_ACCOUNT_ID)")
            given = _given(args, account)
            if not given:
                raise InputError(
                    "msisdn must name the subscribers to count (--msisdn, --msisdn-file), or "
                    "give the account's --inventory: the service has no list of its devices"
                )
            client = ReportingClient.from_settings(settings)
        stack.enter_context(client)
        ledger = availability(client, **given, start=start, end=end, by=by, granularity=grain,
                              tz=args.tz)  # fmt: skip
    _print(ledger, args)
    return 0


def _print(ledger: pd.DataFrame, args: argparse.Namespace) -> None:
    """The ledger as a table, or as JSON: its rows and what they rest on."""
    from ..availability import ledger_table

    if not args.json:
        print(ledger_table(ledger))
        return
    rows = []
    for row in ledger.to_dict(orient="records"):
        pct = row["availability_pct"]
        rows.append({**row, "time_stamp": row["time_stamp"].isoformat(),
                     "availability_pct": None if pct != pct else float(pct)})  # fmt: skip
    data = {"rows": rows, **{k: ledger.attrs.get(k) for k in _ATTRS}}
    emit(args.json, json.dumps(data, indent=1, default=_plain) + "\n")
    if not len(ledger):
        print("edgereports: no subject to count", file=sys.stderr)


def _plain(value: object) -> object:
    """JSON for pandas' scalars (an Int64 count is a number)."""
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return str(value)
