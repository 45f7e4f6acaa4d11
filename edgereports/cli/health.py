"""The ``edgereports health`` command: health flags of an account's sites, eNodeBs and
subscribers (exit status: :data:`EPILOG`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ._account import add_account_arguments, connect, range_of
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
    who = add_account_arguments(
        p,
        last="e.g. 7d, 2w or 48h, up to now",
        tz="zone of hour of day, weekends and the times printed",
    )
    who.add_argument("--shard", metavar="I/N", help="judge the sites of shard I of N only")
    out = p.add_argument_group("output")
    out.add_argument(
        "--json", nargs="?", const="-", metavar="FILE", help="JSON records to FILE or stdout"
    )
    out.add_argument(
        "--merge", nargs="+", metavar="FILE", help="merge the --json files of the shards of a run"
    )
    return p


def cmd_health(args: argparse.Namespace) -> int:
    """Run ``edgereports health``; returns the exit status.

    Raises:
        InputError: bad flags, settings or files (exit 2).
        EdgeReportsError: the pull failed (exit 1).
    """
    if args.merge:
        return _merge(args)
    from ..health import health, parse_shard

    start, end = range_of(args)
    shard = parse_shard(args.shard)
    with contextlib.ExitStack() as stack:
        client, given = connect(args, stack, verb="check")
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
