"""What the commands that judge an account share (``health``, ``availability``): their range,
account and sandbox flags, the account's subjects (an inventory or subscribers) checked before
any request, and the client they ask: the local sandbox's, or the live service's."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..errors import ConfigError, InputError
from ..query.timegrid import relative_end

if TYPE_CHECKING:
    from ..reporting import ReportingClient

__all__ = ["add_account_arguments", "connect", "range_of"]


def add_account_arguments(
    p: argparse.ArgumentParser, *, last: str, tz: str
) -> argparse._ArgumentGroup:
    """Add the range, account and sandbox flags (``last`` and ``tz`` are their help's
    words); returns the account's group, for a command's own flags there."""
    when = p.add_argument_group("range (--last, or --start and --end)")
    when.add_argument("--last", metavar="PERIOD", help=last)
    when.add_argument("--start", help="a date, an ISO 8601 timestamp or a relative date")
    when.add_argument("--end", help="the end (exclusive)")
    when.add_argument("--tz", help=tz)
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
    return who


def range_of(args: argparse.Namespace) -> tuple[str, str]:
    """The range the flags give: ``--last``, or ``--start`` and ``--end``."""
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


def connect(
    args: argparse.Namespace, stack: contextlib.ExitStack, *, verb: str
) -> tuple[ReportingClient, dict[str, Any]]:
    """The client to ask and the subjects to ``verb`` (``inventory=``, or ``msisdn=`` and
    ``account_id=``), both checked before any request: the local sandbox's (with
    ``--sandbox``, or when no service is configured: its own inventory unless subjects are
    given), else the live service's. Both are entered into ``stack``."""
    from ..reporting import ReportingClient

    settings = Settings.from_env()
    live = settings.api_key is not None and settings.reporting_url is not None
    if args.sandbox or not live:
        from ..inventory.model import Inventory
        from ..sandbox import serve

        try:
            sb = stack.enter_context(serve(seed=args.seed, clock=args.now, incidents=args.incident))
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
                f"msisdn must name the subscribers to {verb} (--msisdn, --msisdn-file), or "
                "give the account's --inventory: the service has no list of its devices"
            )
        if not account and not given["inventory"].account_id:
            raise ConfigError(
                "give --account-id (or set EDGEREPORTS_ACCOUNT_ID): the inventory names none"
            )
        client = ReportingClient.from_settings(settings)
    stack.enter_context(client)
    return client, given
