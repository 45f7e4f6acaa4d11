"""Command line: ``python -m edgereports.sandbox [options]`` (also ``edgereports sandbox``)."""

from __future__ import annotations

import argparse
import contextlib
import errno
import logging
import shlex
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

from .extras import SandboxExtrasMissing, require_extras
from .inventory import write_inventory
from .web.faults import FaultConfig
from .web.server import DEFAULT_API_KEY, DEFAULT_PARTNER, serve
from .web.state import Limits

__all__ = ["build_parser", "main"]

_EPILOG = """\
examples:
  python -m edgereports.sandbox                      # http://127.0.0.1:8080, real-time clock
  python -m edgereports.sandbox --port 0 --seed 7 --devices 500
  python -m edgereports.sandbox --now 2022-07-08T10:00:00+05:30 --sync-delay 0
  python -m edgereports.sandbox --fault-rate 0.1 --rate-limit-rate 0.05 --retry-after 0
  python -m edgereports.sandbox --requests-per-second 50   # 429 above 50 requests/s per key
  python -m edgereports.sandbox --incident site_dark:BLR-1001:2024-03-10T04:00:00+00:00:6
  python -m edgereports.sandbox --write-inventory inventory.csv --duration 0

Per-request faults: send the header X-Sandbox-Fault (e.g. "503", "429;retry-after=1",
"drop", "latency=0.2"). Helper routes: /sandbox/info, /sandbox/network, /sandbox/faults,
/sandbox/requests, /sandbox/clock, /sandbox/rate-limit, /sandbox/incidents; the OpenAPI
document is at /openapi.json.
"""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line and a pointer to ``--help``."""

    def error(self, message: str) -> NoReturn:
        """Print ``prog: error: message`` and where the options are told; exit with 2."""
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the sandbox command."""
    p = _Parser(
        prog="edgereports sandbox",
        description="Run a local emulator of the edge video, campaign and connectivity "
        "reporting service over a deterministic synthetic network.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback)")
    p.add_argument("--port", type=_port, default=8080, help="TCP port, 0 for any free one")
    p.add_argument("--seed", type=int, default=0, help="seed of the synthetic network")
    p.add_argument("--devices", type=int, default=64, help="devices on the primary account")
    p.add_argument("--extra-accounts", type=int, default=1, help="further, smaller accounts")
    p.add_argument(
        "--sync-delay",
        type=float,
        default=3.0,
        help="seconds until onboarded content is synced (default 3)",
    )
    p.add_argument("--now", help="fix the clock at this ISO 8601 instant (with offset)")
    p.add_argument("--api-key", default=DEFAULT_API_KEY, help="the accepted API key")
    p.add_argument("--partner-name", default=DEFAULT_PARTNER, help="the accepted partner_name")
    p.add_argument(
        "--report-points",
        type=_positive,
        default=Limits.report_points,
        help=f"points one report answer may hold, else 400 (default {Limits.report_points:,})",
    )
    f = p.add_argument_group("faults (random, seeded)")
    f.add_argument("--latency", type=float, default=0.0, help="seconds added to API requests")
    f.add_argument("--latency-rate", type=float, default=1.0, help="share of requests delayed")
    f.add_argument(
        "--fault-rate",
        type=float,
        default=0.0,
        help="share of API requests answered with a 5xx error",
    )
    f.add_argument(
        "--fault-statuses",
        default="500,502,503",
        help="comma-separated statuses for --fault-rate (default 500,502,503)",
    )
    f.add_argument(
        "--rate-limit-rate", type=float, default=0.0, help="share of API requests answered 429"
    )
    f.add_argument(
        "--retry-after",
        type=float,
        default=1.0,
        help="Retry-After seconds of a 429 (default 1; 0 allowed)",
    )
    f.add_argument(
        "--drop-rate",
        type=float,
        default=0.0,
        help="share of API requests whose connection drops mid-body",
    )
    f.add_argument("--fault-seed", type=int, default=0, help="seed of the fault draws")
    p.add_argument(
        "--requests-per-second",
        type=int,
        default=None,
        metavar="N",
        help="rate-limit mode: answer 429 with Retry-After above N API requests per key in "
        "any sliding second (default: no limit)",
    )
    p.add_argument(
        "--incident",
        action="append",
        default=[],
        metavar="KIND:SUBJECT:START:HOURS",
        help="inject an incident (repeat): site_dark (SUBJECT a customer site id), "
        "enodeb_dark (an eNodeB IP), device_offline, usage_drop, usage_spike or sim_idle "
        "(an MSISDN); START an ISO 8601 instant on a whole UTC hour, e.g. device_offline:"
        "919876543210:2024-03-10T04:00:00+00:00:12; sim_deactivated:MSISDN:START (a UTC "
        "midnight, no hours) deactivates a SIM; listed at /sandbox/incidents",
    )
    p.add_argument(
        "--write-inventory",
        metavar="FILE",
        help="write the primary account's inventory (one row per SIM: MSISDN, IMSI, site, "
        "eNodeB, activation and deactivation dates) to FILE, CSV or .parquet, on start",
    )
    p.add_argument("--verbose", action="store_true", help="log requests (keys are redacted)")
    p.add_argument(
        "--duration",
        type=float,
        default=None,
        help="stop after this many seconds (default: run until Ctrl-C)",
    )
    return p


def _port(text: str) -> int:
    """A TCP port, 0 to 65535 (argparse names the option when it is not)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a TCP port from 0 to 65535, got {text!r}")
    return value


def _positive(text: str) -> int:
    """An integer of at least 1 (argparse names the option when it is not)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text!r}")
    return value


def settings_env(sb: Any) -> dict[str, str]:
    """The ``EDGEREPORTS_*`` settings that point a client at ``sb``: what the command prints.

    The v1 key and partner, the addresses, the primary account, and the v2 reporting
    service's token and core id. A key or token given on the command line is not repeated.
    """
    given = "<the key given by --api-key>"
    return {
        "EDGEREPORTS_API_KEY": sb.api_key if sb.api_key == DEFAULT_API_KEY else given,
        "EDGEREPORTS_REPORTING_URL": sb.reporting_url,
        "EDGEREPORTS_BASE_URL": sb.base_url,
        "EDGEREPORTS_PARTNER_NAME": sb.partner_name,
        "EDGEREPORTS_ACCOUNT_ID": sb.account_id,
        "EDGEREPORTS_SERVICE_TOKEN": sb.service_token,
        "EDGEREPORTS_CORE_ID": sb.core_id,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sandbox until Ctrl-C (or ``--duration``); return the exit status.

    Args:
        argv: the arguments (default: ``sys.argv[1:]``).

    Returns:
        0 after a clean stop, 2 for bad options, an address that cannot be bound or missing
        packages of the ``[sandbox]`` extra (one line on stderr names the pip command).
    """
    args = build_parser().parse_args(argv)
    try:
        require_extras()
    except SandboxExtrasMissing as exc:
        print(f"edgereports sandbox: {exc}", file=sys.stderr)
        return 2
    log = logging.getLogger("edgereports.sandbox")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    if args.verbose:  # request lines (keys redacted) go to stderr while the sandbox runs
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    try:
        statuses = tuple(int(s) for s in args.fault_statuses.split(",") if s.strip())
        faults = FaultConfig(
            latency=args.latency,
            latency_rate=args.latency_rate,
            error_rate=args.fault_rate,
            error_statuses=statuses,
            rate_limit_rate=args.rate_limit_rate,
            retry_after=args.retry_after,
            drop_rate=args.drop_rate,
            seed=args.fault_seed,
        )
        ctx = serve(
            seed=args.seed,
            devices=args.devices,
            extra_accounts=args.extra_accounts,
            host=args.host,
            port=args.port,
            clock=args.now,
            faults=faults,
            sync_delay=args.sync_delay,
            api_key=args.api_key,
            partner_name=args.partner_name,
            limits=Limits(
                report_points=args.report_points, requests_per_second=args.requests_per_second
            ),
            quiet=not args.verbose,
            incidents=args.incident,
        )
        with _quiet_bind(ctx) as sb:
            shown_key = sb.api_key if sb.api_key == DEFAULT_API_KEY else "(as given by --api-key)"
            primary = len(sb.network.sims_of(sb.account_id))
            print(
                f"edgereports sandbox: seed {sb.seed}, {primary} devices on the primary account "
                f"({len(sb.network.devices)} in all), clock {sb.clock.now().isoformat()}"
                f"{' (fixed)' if sb.clock.fixed else ''}"
            )
            print(f"  base URL:       {sb.base_url}")
            print(f"  reporting URL:  {sb.reporting_url}  (POST {sb.report_endpoint})")
            print(f"  API key:        {shown_key}")
            print(f"  partner name:   {sb.partner_name}")
            print(f"  account id:     {sb.account_id}")
            print(f"  OpenAPI:        {sb.base_url}/openapi.json")
            for inc in sb.incidents:
                lasts = "" if inc["hours"] is None else f" for {inc['hours']} h"
                print(f"  incident:       {inc['kind']} {inc['subject']} {inc['start']}{lasts}")
            if args.write_inventory:
                written = write_inventory(sb.inventory(), args.write_inventory)
                print(f"  inventory:      {written} ({len(sb.inventory())} SIMs)")
            env = settings_env(sb)
            print("Settings for another shell (paste them):")
            print("\n".join(f"export {k}={shlex.quote(v)}" for k, v in env.items()))
            print(
                "Press Ctrl-C to stop."
                if args.duration is None
                else f"Stopping after {args.duration:g} s.",
                flush=True,
            )
            try:
                deadline = None if args.duration is None else time.monotonic() + args.duration
                while deadline is None or time.monotonic() < deadline:
                    time.sleep(0.2 if deadline is not None else 1.0)
            except KeyboardInterrupt:
                print("stopped", flush=True)
    except (ValueError, OSError) as exc:
        print(f"edgereports sandbox: {_bind_message(exc, args)}", file=sys.stderr)
        return 2
    finally:
        log.removeHandler(handler)
    return 0


@contextlib.contextmanager
def _quiet_bind(ctx: contextlib.AbstractContextManager[Any]) -> Iterator[Any]:
    """Enter the server; a failed bind is one line, without cheroot's unclosed-socket warning."""
    with contextlib.ExitStack() as stack:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=ResourceWarning, module=r"cheroot\b")
            handle = stack.enter_context(ctx)
        yield handle


def _bind_message(exc: Exception, args: argparse.Namespace) -> str:
    """One line for an error; a port in use says so and how to choose another."""
    text = str(exc)
    in_use = getattr(exc, "errno", None) == errno.EADDRINUSE or "already in use" in text
    if isinstance(exc, OSError) and in_use:
        return (
            f"port {args.port} on {args.host} is already in use; choose another with --port "
            "(--port 0 picks a free one)"
        )
    return text.splitlines()[0] if text else type(exc).__name__


if __name__ == "__main__":
    raise SystemExit(main())
