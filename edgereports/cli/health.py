"""The ``edgereports health`` command: health flags of an account's sites, eNodeBs and
subscribers (exit status: :data:`EPILOG`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..errors import ConfigError, InputError
from ..query.timegrid import relative_end
from ._command import add_command
from .report import emit

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["add_parser", "cmd_health"]

DESCRIPTION = """\
Judge an account's sites, eNodeBs and subscribers against their own history and print the
episodes and flags: site_dark, enodeb_dark, device_offline, usage_drop, usage_spike and
sim_idle (docs: Health flags), times in the zone judged (--tz, else the range's) with their
offset. One hourly report per subscriber is pulled (28 days of history before the range), the
account's SIM counts, and with a partial list each site's own report.

Give the account's inventory (--inventory FILE, CSV or Parquet: one row per SIM with its site,
eNodeB and dates; --maintenance FILE for planned windows), or only subscribers (--msisdn,
--msisdn-file): a partial list, judged from what the service tells. With EDGEREPORTS_API_KEY and
EDGEREPORTS_REPORTING_URL set it asks the live service (--account-id or EDGEREPORTS_ACCOUNT_ID,
else the inventory's). Without them, or with --sandbox, it starts the local sandbox (seed 0, 64
devices) and judges its own inventory; --incident injects incidents into it.

--shard i/n judges the sites of one shard of n (--json FILE keeps it whole); --merge puts the
shards' files back together into the account's flags.
"""

EPILOG = """\
examples:
  edgereports health --last 7d
  edgereports health --sandbox --now 2024-03-15T12:00:00+05:30 --last 7d \\
      --incident site_dark:CHE-1005:2024-03-12T04:00:00+00:00:6
  edgereports health --inventory inventory.csv --start 2024-06-01 --end 2024-07-01 --json flags.json
  edgereports health --inventory inventory.csv --last 7d --shard 2/4 --json shard-2.json
  edgereports health --merge shard-1.json shard-2.json shard-3.json shard-4.json

exit status: 0 judged (flags printed, or a line saying there are none), 1 a service or data
error, 2 bad input.
"""

_ATTRS = ("range", "zone", "history", "judged_until", "inventory", "subjects", "sites", "bases",
          "episodes", "deactivated", "unjudged", "maintenance", "suppressed", "shard")  # fmt: skip


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``health`` subcommand (run by :func:`cmd_health`); returns its parser."""
    p = add_command(
        subparsers,
        "health",
        cmd_health,
        help="flag dark sites and eNodeBs, offline devices, usage drops and spikes, idle SIMs",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    when = p.add_argument_group("range (--last, or --start and --end)")
    when.add_argument("--last", metavar="PERIOD", help="e.g. 7d, 2w or 48h, up to now")
    when.add_argument("--start", help="a date, an ISO 8601 timestamp or a relative date")
    when.add_argument("--end", help="the end (exclusive)")
    when.add_argument("--tz", help="zone of hour of day, weekends and the times printed")
    who = p.add_argument_group("the account")
    who.add_argument("--inventory", metavar="FILE", help="the account's inventory, CSV or Parquet")
    who.add_argument("--maintenance", metavar="FILE", help="maintenance windows, CSV or Parquet")
    who.add_argument("--account-id", help="the account (default EDGEREPORTS_ACCOUNT_ID)")
    who.add_argument("--msisdn", action="append", default=[], help="a subscriber (repeat)")
    who.add_argument("--msisdn-file", metavar="FILE", help="subscribers, one per line")
    who.add_argument("--shard", metavar="I/N", help="judge the sites of shard I of N only")
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
    out.add_argument(
        "--merge", nargs="+", metavar="FILE", help="merge the --json files of the shards of a run"
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


def _given(args: argparse.Namespace, account: str | None) -> dict[str, Any]:
    """``inventory=`` or ``msisdn=`` as the flags say (checked before any request)."""
    from ..inventory.model import Inventory

    numbers = _subscribers(args)
    if args.inventory and numbers:
        raise InputError("give --inventory or --msisdn/--msisdn-file, not both")
    if args.maintenance and not args.inventory:
        raise InputError("--maintenance goes with --inventory")
    if args.inventory:
        return {"inventory": Inventory.from_file(args.inventory, args.maintenance,
                                                 account_id=account)}  # fmt: skip
    return {"msisdn": numbers, "account_id": account} if numbers else {}


def cmd_health(args: argparse.Namespace) -> int:
    """Run ``edgereports health``; returns the exit status.

    Raises:
        InputError: bad flags, settings or files (exit 2).
        EdgeReportsError: the pull failed (exit 1).
    """
    if args.merge:
        return _merge(args)
    from ..health import health, parse_shard
    from ..reporting import ReportingClient

    start, end = _range(args)
    shard = parse_shard(args.shard)
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
                    "msisdn must name the subscribers to check (--msisdn, --msisdn-file), or "
                    "give the account's --inventory: the service has no list of its devices"
                )
            if not account and not given["inventory"].account_id:
                raise ConfigError(
                    "give --account-id (or set EDGEREPORTS_ACCOUNT_ID): the inventory names none"
                )
            client = ReportingClient.from_settings(settings)
        stack.enter_context(client)
        flags = health(client, **given, start=start, end=end, tz=args.tz, shard=shard)
    _print(flags, args)
    return 0


def _print(flags: pd.DataFrame, args: argparse.Namespace) -> None:
    """The flags as a table, or as JSON (records; with a shard, the records and what the
    merge needs)."""
    from ..health import flags_table

    if not args.json:
        print(flags_table(flags, tz=args.tz))
        return
    records = [
        {**row, "start": row["start"].isoformat(), "end": row["end"].isoformat(),
         "episode": row["episode"] if isinstance(row["episode"], str) else None}
        for row in flags.to_dict(orient="records")
    ]  # fmt: skip
    data: Any = records
    if "/" in str(flags.attrs.get("shard") or ""):  # a shard: with what merging needs
        data = {"flags": records, **{k: flags.attrs.get(k) for k in _ATTRS}}
    emit(args.json, json.dumps(data, indent=1, default=str) + "\n")
    if not len(flags):
        span = flags.attrs.get("range") or ["", ""]
        print(f"edgereports: no flags from {span[0]} to {span[1]}", file=sys.stderr)


def _merge(args: argparse.Namespace) -> int:
    """``--merge FILE...``: the shards' JSON files as the account's flags."""
    import pandas as pd

    from ..health import merge
    from ..health.frame import empty_flags

    frames = []
    for name in args.merge:
        try:
            data = json.loads(Path(name).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"--merge: cannot read {name}: {exc}") from None
        if not isinstance(data, dict) or "flags" not in data or not data.get("shard"):
            raise InputError(f"--merge: {name} is not the --json file of a shard (--shard i/n)")
        frame = empty_flags()
        if data["flags"]:
            rows = pd.DataFrame(data["flags"])
            for column in ("start", "end"):
                rows[column] = pd.to_datetime(rows[column], utc=True)
            frame = rows[list(frame.columns)].astype(frame.dtypes.to_dict())
        frame.attrs = {"shape": "health", **{k: data.get(k) for k in _ATTRS}}
        frames.append(frame)
    _print(merge(frames), args)
    return 0
