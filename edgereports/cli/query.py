"""The flags that describe one report (a preset or a request), and the ``presets`` and
``query`` commands."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Iterator
from typing import Any

from .. import presets
from ..errors import QueryError
from ..query import Report
from ..query.timegrid import relative_end

__all__ = ["add_parsers", "add_report_arguments", "parse_where", "report_from_args"]


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags that describe one report: a preset with its parameters, or a request."""
    g = parser.add_argument_group("report")
    g.add_argument("--preset", help="a preset name (see 'edgereports presets')")
    g.add_argument("--account-id", help="the account to report on")
    g.add_argument(
        "--start",
        help="range start: ISO-8601 with offset, YYYY-MM-DD, a relative date (7d, 2w, 6h, "
        "yesterday: counted back from the service's present) or a keyword",
    )
    g.add_argument(
        "--end", help="range end: ISO-8601 with offset, YYYY-MM-DD, today, tomorrow, 0h or NOW"
    )
    g.add_argument("--now", action="store_true", help="the current five-minute window")
    g.add_argument(
        "--last",
        metavar="PERIOD",
        help="7d, 2w (whole days to today) or 24h (whole hours to this one), on the service's "
        "clock; or the service's HOUR, DAY, WEEK or MONTH up to NOW",
    )
    g.add_argument("--tz", help="zone for YYYY-MM-DD dates: +05:30, UTC or an IANA name")
    g.add_argument("--granularity", help="DAY or HOUR")
    g.add_argument("--by", action="append", default=[], metavar="DIM", help="group by (repeat)")
    g.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="DIM=V1,V2",
        help="EXACT filter (repeat)",
    )
    g.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="NAME[:AGG][@PCT]",
        help="a metric, e.g. uplink_bytes:COUNT or uplink_bandwidth@95 (repeat)",
    )
    g.add_argument("--msisdn", action="append", help="preset parameter (repeat for several)")
    g.add_argument("--imsi", action="append", help="preset parameter (repeat for several)")
    g.add_argument(
        "--customer-site-id", action="append", help="preset parameter (repeat for several)"
    )
    g.add_argument("--percentile", type=float, help="preset parameter (0-100)")
    g.add_argument("--device", action="append", help="v2 preset parameter (repeat for several)")
    g.add_argument(
        "--customer-name", action="append", help="v2 preset parameter (repeat for several)"
    )
    g.add_argument(
        "--api-version",
        choices=["v1", "v2"],
        help="the reporting API the report is written for (default v1; v2 presets are v2)",
    )
    g.add_argument("--strict", action="store_true", help="unknown names are errors, not warnings")


def _one_or_many(values: list[str] | None) -> str | list[str] | None:
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() else value


def report_from_args(args: argparse.Namespace) -> Report:
    """Build the report the flags describe (a preset, or a request from flags).

    Raises:
        QueryError: the flags do not make a valid report.
    """
    if args.preset:
        start, end = args.start, args.end
        if args.last:
            end = relative_end(args.last)
            start, end = (args.last, end) if end else (f"LAST {args.last.upper()}", "NOW")
        params: dict[str, Any] = {
            "account_id": args.account_id,
            "start": start,
            "end": end,
            "msisdn": _one_or_many(args.msisdn),
            "imsi": _one_or_many(args.imsi),
            "customer_site_id": _one_or_many(args.customer_site_id),
            "percentile": None if args.percentile is None else _number(str(args.percentile)),
            "device": _one_or_many(args.device),
            "customer_name": _one_or_many(args.customer_name),
        }
        info = presets.get(args.preset)
        if args.api_version not in (None, info.api_version):
            raise QueryError(
                f"preset {info.name!r} is a {info.api_version} report, not {args.api_version}; "
                f"{args.api_version} presets: {', '.join(presets.names(args.api_version))}",
                field="api_version",
            )
        allowed = {p.name for p in info.params}
        if "granularity" in allowed:
            params["granularity"] = args.granularity
        params = {k: v for k, v in params.items() if k in allowed or v is not None}
        return _on_top(presets.build(args.preset, **params), args)
    report = Report(
        account_id=args.account_id,
        tz=args.tz,
        strict=args.strict,
        api_version=args.api_version or "v1",
    )
    if args.now:
        report = report.now()
    elif args.last:
        report = report.last(args.last)
    elif args.start or args.end:
        if not (args.start and args.end):
            raise QueryError("give both --start and --end", field="end_date_time")
        report = report.between(args.start, args.end)
    if args.granularity:
        report = report.granularity(args.granularity)
    if args.by:
        report = report.by(args.by)
    report = _filtered(report, args.where)
    for item in args.metric:
        rest, _, pct = item.partition("@")
        name, _, agg = rest.partition(":")
        try:
            percentile = _number(pct) if pct else None
        except ValueError:
            raise QueryError(
                f"--metric {item!r}: {pct!r} is not a number", field="metric"
            ) from None
        report = report.metric(name, agg or None, percentile=percentile)
    return report


def parse_where(items: list[str]) -> Iterator[tuple[str, list[str]]]:
    """The ``--where DIM=V1,V2`` flags, as each one's dimension and values.

    Raises:
        QueryError: a flag without ``=``.
    """
    for item in items:
        dim, sep, values = item.partition("=")
        if not sep:
            raise QueryError(f"--where {item!r} must look like DIM=V1,V2", field="where")
        yield dim.strip(), [v.strip() for v in values.split(",")]


def _filtered(report: Report, items: list[str]) -> Report:
    """``report`` with the ``--where DIM=V1,V2`` filters added."""
    for dim, values in parse_where(items):
        report = report.filter(dim, values)
    return report


def _on_top(report: Report, args: argparse.Namespace) -> Report:
    """A preset's report with the report flags applied on top (``--metric`` is refused).

    ``--tz`` sets the zone of its dates, ``--granularity`` replaces its granularity, ``--by``
    adds dimensions and ``--where`` adds filters; a preset is its metrics, so ``--metric``
    (and ``--now``, which the preset's range decides) is an error rather than dropped.
    """
    refused = [flag for flag, given in (("--metric", args.metric), ("--now", args.now)) if given]
    if refused:
        raise QueryError(
            f"{' and '.join(refused)} cannot be combined with --preset (a preset is its "
            "metrics and range): drop --preset and describe the report with flags",
            field="metric" if args.metric else "start_date_time",
        )
    if args.tz:
        report = report.timezone(args.tz)
    if args.strict:
        report = dataclasses.replace(report, strict=True)
    if args.granularity:
        report = report.granularity(args.granularity)
    if args.by:
        report = report.by(*(report.dimensions or ()), *args.by)
    return _filtered(report, args.where)


def _cmd_presets(args: argparse.Namespace) -> int:
    if args.json:
        rows = [
            {
                "name": p.name,
                "api_version": p.api_version,
                "purpose": p.purpose,
                "params": [
                    {"name": q.name, "required": q.required, "default": q.default, "help": q.help}
                    for q in p.params
                ],
            }
            for p in presets.CATALOGUE
        ]
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(p.name) for p in presets.CATALOGUE)
    for p in presets.CATALOGUE:
        params = ", ".join(_param_text(q) for q in p.params)
        print(f"{p.name:<{width}}  {p.purpose}\n{'':<{width}}  {p.api_version}, params: {params}")
    return 0


def _param_text(param: presets.Param) -> str:
    """``name`` when required, ``[name=default]`` (or ``[name]``) when optional."""
    if param.required:
        return param.name
    if param.name in ("start", "end") and param.default is None:
        return f"[{param.name}=NOW]"  # a current-value preset: now unless given a range
    return f"[{param.name}]" if param.default is None else f"[{param.name}={param.default}]"


def _cmd_query(args: argparse.Namespace) -> int:
    request = report_from_args(args).to_request()
    print(json.dumps(request, indent=None if args.compact else 2))
    return 0


def add_parsers(sub: Any) -> None:
    """Add the ``presets`` and ``query`` commands."""
    p = sub.add_parser("presets", help="list the report presets", description="List the presets.")
    p.add_argument("--json", action="store_true", help="print the catalogue as JSON")
    p.set_defaults(handler=_cmd_presets)

    p = sub.add_parser(
        "query",
        help="print the JSON request of a preset or of flags",
        description="Build a report request from a preset or from flags and print its JSON.",
    )
    add_report_arguments(p)
    p.add_argument("--compact", action="store_true", help="print on one line")
    p.set_defaults(handler=_cmd_query)
