"""The ``edgereports availability`` command: the availability ledger of an account's sites,
eNodeBs or subscribers (exit status: :data:`EPILOG`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ._account import add_account_arguments, connect, range_of
from ._command import add_command
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
    add_account_arguments(
        p,
        last="e.g. 30d, 4w or 48h, up to now",
        tz="zone of the hour classes outages are judged by",
    )
    what = p.add_argument_group("the ledger")
    what.add_argument("--by", default="site", help=f"{', '.join(_BY)} (default site)")
    what.add_argument(
        "--granularity", metavar="GRAIN", help="DAY or MONTH (UTC); default: the whole range"
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

    start, end = range_of(args)
    try:
        by = check_by(args.by)
    except InputError:
        raise InputError(f"--by must be one of {', '.join(_BY)}, got {args.by!r}") from None
    grain = check_granularity(args.granularity)
    if grain == "HOUR":
        raise InputError("--granularity must be DAY or MONTH (HOUR rows: er.availability)")
    with contextlib.ExitStack() as stack:
        client, given = connect(args, stack, verb="count")
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
