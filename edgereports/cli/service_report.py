"""The ``edgereports service-report`` command: one request of the v2 reporting service (exit
status as for ``edgereports report``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..errors import InputError, QueryError
from ..query import ServiceReport
from ..reporting import ReportingServiceClient
from ._command import add_command, settings_from
from .query import parse_where
from .report import add_output_arguments, fetch_and_write

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["add_parser", "cmd_service_report", "service_report_from_args"]

EPILOG = """\
examples:
  edgereports service-report --last HOUR --step 5m --metric ap_count:COUNT --where device=PHI-1
  edgereports service-report --start 2024-08-13T20:00:00Z --end 2024-08-13T22:00:00Z \\
      --step 15m --metric ue_status:MAX --csv ues.csv

settings come from EDGEREPORTS_SERVICE_TOKEN, EDGEREPORTS_BASE_URL (or --base-url) and
EDGEREPORTS_CORE_ID (or --core-id). How to obtain a token is not documented by the service.
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``service-report`` subcommand to an ``add_subparsers()`` object."""
    p = add_command(
        subparsers,
        "service-report",
        cmd_service_report,
        help="fetch one report of the v2 reporting service (access points, UEs)",
        description="Fetch one request of the v2 reporting service as a tidy table.",
        epilog=EPILOG,
    )
    g = p.add_argument_group("request")
    g.add_argument("--start", help="range start: ISO-8601 with offset")
    g.add_argument("--end", help="range end: ISO-8601 with offset")
    g.add_argument("--last", metavar="PERIOD", help="MINUTE, HOUR, DAY, WEEK or MONTH up to NOW")
    g.add_argument("--step", required=True, help="a duration such as 5m, 1h30m or 1d")
    g.add_argument("--metric", required=True, metavar="NAME:AGG", help="e.g. ap_count:COUNT")
    g.add_argument("--where", action="append", default=[], metavar="DIM=V1,V2", help="a filter")
    add_output_arguments(p)
    net = p.add_argument_group("reporting service")
    net.add_argument("--base-url", help="the service address (default EDGEREPORTS_BASE_URL)")
    net.add_argument("--core-id", help="the mobile core id (default EDGEREPORTS_CORE_ID)")
    net.add_argument("--retries", type=int, default=4, help="retries per request (default 4)")
    return p


def service_report_from_args(args: argparse.Namespace) -> ServiceReport:
    """Build the request the flags describe.

    Raises:
        QueryError: the flags do not make a valid request.
    """
    report = ServiceReport()
    if args.last:
        report = report.last(args.last)
    elif args.start and args.end:
        report = report.between(args.start, args.end)
    else:
        raise QueryError("give --last PERIOD, or both --start and --end", field="start_date_time")
    report = report.step(args.step)
    for dim, values in parse_where(args.where):
        report = report.where(**{dim: values})
    name, sep, agg = args.metric.partition(":")
    if not sep:
        raise QueryError(f"--metric {args.metric!r} must look like NAME:AGG", field="metrics")
    return report.metric(name.strip(), agg.strip())


def cmd_service_report(args: argparse.Namespace) -> int:
    """Run ``edgereports service-report``; returns the exit status."""
    return fetch_and_write(_fetch, args)


def _fetch(args: argparse.Namespace) -> pd.DataFrame:
    report = service_report_from_args(args)
    settings = settings_from(args, ("base_url", "core_id"))
    if args.retries < 0:
        raise InputError("--retries must be 0 or more")
    with ReportingServiceClient.from_settings(settings, retries=args.retries) as client:
        return client.fetch(report)
