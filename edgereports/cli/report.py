"""The ``edgereports report`` command: fetch a report and print or write it (exit status:
:data:`EPILOG`)."""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import DEFAULT_MAX_WORKERS
from ..errors import EdgeReportsError, EdgeReportsWarning, InputError, PartialFailure
from ..export.files import atomic_write, check_writable, save_parquet
from ._command import add_command, add_progress, settings_from
from ._errors import say
from .query import add_report_arguments, report_from_args

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "EPILOG",
    "add_output_arguments",
    "add_parser",
    "cmd_report",
    "emit",
    "fetch_and_write",
    "parse_compare",
    "parse_compare_by",
    "parse_duration",
    "write_frame",
]

EPILOG = """\
examples:
  edgereports report --preset time_usage_enterprise --account-id A \\
      --start 2024-01-01 --end 2025-01-01 --csv usage.csv
  edgereports report --preset byte_usage_subscriber --account-id A --msisdn 919876543210 \\
      --msisdn 919876543211 --start 2024-06-01 --end 2024-07-01 --parquet bytes.parquet

  edgereports report --preset ue_session_bytes --account-id A --start 2024-08-13 \
      --end 2024-08-14 --csv ue.csv           # a v2 preset: sent to /connectivity/v2/report
  edgereports report --preset time_usage_enterprise --account-id A --start 7d --end today \
      --compare previous_period               # this week against the week before
  edgereports report --preset time_usage_enterprise --account-id A --start 7d --end today \
      --compare previous_week,previous_year_dow   # and the same weekdays a year before
  edgereports report --preset time_usage_subscriber --account-id A --msisdn 919876543210 \
      --start 7d --end today --compare-by msisdn=919876543210,919876543211   # one SIM vs another

Relative dates (--start 7d --end today, --last 7d) count back from the service's present, as
its answers state it, not from this machine's clock.
settings come from EDGEREPORTS_API_KEY and EDGEREPORTS_REPORTING_URL (or --reporting-url).
The API version is the report's: --api-version v2 for a report from flags, v2 presets are v2.
Without --json/--csv/--parquet the frame is printed as a table. The report flags (--tz,
--granularity, --by, --where) apply on top of a --preset; --metric with --preset is refused.
A result without any row is one line on stderr naming the filters that matched nothing, and
no file is written unless --allow-empty.

exit status:
  0  the whole report was fetched and written (or it had no row: see stderr)
  1  a service, transport or data error, including a partial failure (nothing is written)
  2  bad input: flags, a query the service does not allow, missing settings
"""

_DURATION = re.compile(r"^\s*(\d+)\s*([hdw])\s*$", re.IGNORECASE)
_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}


def parse_duration(text: str | None) -> timedelta | None:
    """Read a window length such as ``12h``, ``7d`` or ``2w``; None stays None.

    Raises:
        InputError: the text is not a whole number of hours, days or weeks.

    Example:
        >>> parse_duration("7d")
        datetime.timedelta(days=7)
    """
    if text is None:
        return None
    match = _DURATION.match(text)
    if not match or int(match[1]) == 0:
        raise InputError(f"--window {text!r} must look like 12h, 7d or 2w")
    return int(match[1]) * _UNITS[match[2].lower()]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``report`` subcommand (run by :func:`cmd_report`); returns its parser."""
    p = add_command(
        subparsers,
        "report",
        cmd_report,
        help="fetch a report and print it, or write JSON, CSV or Parquet",
        description="Fetch a report (windows, fan-out and retries included) as one tidy table.",
        epilog=EPILOG,
    )
    add_report_arguments(p)
    add_output_arguments(p)
    net = p.add_argument_group("fetching")
    net.add_argument(
        "--reporting-url", help="the reporting API (default EDGEREPORTS_REPORTING_URL)"
    )
    net.add_argument("--window", metavar="DURATION", help="window length, e.g. 12h, 7d, 2w")
    net.add_argument(
        "--compare",
        metavar="PERIOD",
        help="also fetch another period and add compare_time_stamp, compare_value, change, "
        "change_pct and compare_partial: previous_period, previous_week, previous_year, "
        "previous_year_dow or START..END; up to 4 separated by commas (a period column names "
        "each)",
    )
    net.add_argument(
        "--compare-by",
        metavar="DIM=A,B",
        help="compare cohorts over the same range: the report for A against it for B (and "
        "more values; a cohort column names each), e.g. customer_site_id=S1,S2",
    )
    net.add_argument(
        "--workers",
        type=int,
        default=DEFAULT_MAX_WORKERS,
        help=f"requests in flight (default {DEFAULT_MAX_WORKERS})",
    )
    net.add_argument("--retries", type=int, default=4, help="retries per request (default 4)")
    net.add_argument(
        "--accept", choices=["json", "csv"], default="json", help="answer format to ask for"
    )
    net.add_argument(
        "--partial",
        choices=["keep", "drop", "prorate"],
        default="keep",
        help="the buckets a range covers only in part (a range off the UTC grid): keep them, "
        "named on stderr (default), drop them, or (with --compare) keep them and scale the "
        "other period's totals to the same share of time",
    )
    add_progress(net, "progress bar (default: when stderr is a terminal)")
    return p


def add_output_arguments(p: argparse.ArgumentParser) -> None:
    """The output flags: ``--json``, ``--csv`` or ``--parquet`` (see :func:`write_frame`)."""
    out = p.add_argument_group("output (one of; default: a table on stdout)")
    only = out.add_mutually_exclusive_group()
    only.add_argument(
        "--json", nargs="?", const="-", metavar="FILE", help="JSON records to FILE or stdout"
    )
    only.add_argument("--csv", nargs="?", const="-", metavar="FILE", help="CSV to FILE or stdout")
    only.add_argument("--parquet", metavar="FILE", help="a Parquet file")
    out.add_argument(
        "--allow-empty",
        action="store_true",
        help="write the output file even when the report has no row",
    )
    out.add_argument(
        "--all",
        action="store_true",
        help="print every row of the table (default: the first and last rows and the row count)",
    )


def cmd_report(args: argparse.Namespace) -> int:
    """Run ``edgereports report``; returns the exit status (errors are printed to stderr)."""
    return fetch_and_write(_fetch, args)


def fetch_and_write(
    fetch: Callable[[argparse.Namespace], pd.DataFrame], args: argparse.Namespace
) -> int:
    """Fetch a frame with ``fetch(args)`` and write it; errors become a line and a status.

    Returns:
        0 on success, 2 for bad input, 1 for a service, transport or data error.
    """
    try:
        for flag in ("parquet", "csv", "json"):  # before any request is sent
            target = getattr(args, flag)
            if target and target != "-":
                check_writable(target, f"--{flag}")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always", EdgeReportsWarning)
            frame = fetch(args)
        for warning in seen:  # one line each, as the CLI's own messages
            if issubclass(warning.category, EdgeReportsWarning):
                name = warning.category.__name__
                print(f"edgereports: {name}: {warning.message}", file=sys.stderr)
        if frame.empty and not args.allow_empty and (args.parquet or _to_file(args)):
            print("edgereports: nothing written (pass --allow-empty to write it)", file=sys.stderr)
            return 0
        write_frame(frame, args)
    except InputError as exc:
        say("edgereports: error: ", exc)
        return 2
    except PartialFailure as exc:
        say("edgereports: PartialFailure: ", exc)
        return 1
    except EdgeReportsError as exc:
        say(f"edgereports: {type(exc).__name__}: ", exc)
        for note in getattr(exc, "__notes__", ()):
            print(f"edgereports: {note}", file=sys.stderr)
        return 1
    return 0


def _fetch(args: argparse.Namespace) -> pd.DataFrame:
    from ..reporting import CSV, JSON, ReportingClient

    report = report_from_args(args)
    window = parse_duration(args.window)
    settings = settings_from(args, ("reporting_url",))
    if args.workers < 1 or args.retries < 0:
        raise InputError("--workers must be 1 or more and --retries 0 or more")
    with ReportingClient.from_settings(
        settings,
        max_workers=args.workers,
        retries=args.retries,
        progress=args.progress,
        api_version=report.api_version,
    ) as client:
        return client.fetch(
            report,
            window=window,
            accept=CSV if args.accept == "csv" else JSON,
            partial=args.partial,
            compare=parse_compare(args.compare),
            compare_by=parse_compare_by(args.compare_by),
        )


Period = str | tuple[str, str]


def parse_compare(text: str | None) -> Period | list[Period] | None:
    """Read ``--compare``: a named period, ``START..END``, or several separated by commas (a
    list); None stays None.

    The value itself is checked by the client, before any request.

    Example:
        >>> parse_compare("2024-06-01..2024-07-01")
        ('2024-06-01', '2024-07-01')
        >>> parse_compare("previous_week,previous_year_dow")
        ['previous_week', 'previous_year_dow']
    """
    if text is None:
        return None
    if "," in text:
        periods = [parse_compare(part) for part in text.split(",")]
        return [p for p in periods if p is not None and not isinstance(p, list)]
    start, dots, end = text.partition("..")
    if dots:
        return start.strip(), end.strip()
    return text.strip()


def parse_compare_by(text: str | None) -> dict[str, list[str]] | None:
    """Read ``--compare-by DIM=A,B``: ``{"DIM": ["A", "B"]}``; None stays None.

    Raises:
        InputError: no ``=`` or no value.

    Example:
        >>> parse_compare_by("customer_site_id=S1, S2")
        {'customer_site_id': ['S1', 'S2']}
    """
    if text is None:
        return None
    dimension, equals, values = text.partition("=")
    listed = [v.strip() for v in values.split(",") if v.strip()]
    if not equals or not dimension.strip() or not listed:
        raise InputError(f"--compare-by must look like customer_site_id=S1,S2, got {text!r}")
    return {dimension.strip(): listed}


def _to_file(args: argparse.Namespace) -> bool:
    """Whether the output goes to a file (not stdout)."""
    return any(target not in (None, "-") for target in (args.csv, args.json))


def _table(frame: pd.DataFrame, rows: int | None) -> str:
    """The frame as a table: a top talker's column says the row is a total; times in the
    report's zone (the zone of its request's dates); like pandas, only the first and last
    ``rows`` rows and the row count when it has more (all of them when ``rows`` is None)."""
    from ..plotting import shown_columns

    if not len(frame):
        return "(no rows)"
    text: str = shown_columns(_in_zone(frame)).to_string(
        index=False,
        max_rows=rows,
        min_rows=rows,
        show_dimensions="truncate",  # type: ignore[call-overload]  # pandas-stubs: bool only
    )
    return text


def _in_zone(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its time columns in the offset of the request's start (UTC if none)."""
    from datetime import datetime

    start = (frame.attrs.get("request") or {}).get("start_date_time", "")
    try:
        zone = datetime.fromisoformat(start).tzinfo
    except (TypeError, ValueError):
        return frame  # NOW / LAST ... reports: UTC, as the service states them
    times = [c for c in ("time_stamp", "start_time", "end_time") if c in frame.columns]
    return frame.assign(**{c: frame[c].dt.tz_convert(zone) for c in times})


def write_frame(frame: pd.DataFrame, args: argparse.Namespace) -> None:
    """Write ``frame`` where ``--parquet``/``--csv``/``--json`` say, else print it as a table.

    A file written is named in one line on stdout, with its rows and columns.

    Raises:
        InputError: the disk refused an output file.
    """
    if args.parquet:
        _atomic(args.parquet, lambda path: save_parquet(frame, path, make_parents=False))
    elif args.csv:
        emit(args.csv, frame.to_csv(index=False))
    elif args.json:
        text = frame.to_json(orient="records", date_format="iso", date_unit="us")
        emit(args.json, (text or "[]") + "\n")
    else:
        print(_table(frame, None if args.all else _TABLE_ROWS))
        return
    target = args.parquet or args.csv or args.json
    if target != "-":  # a file: say what it holds (stdout output speaks for itself)
        print(f"wrote {len(frame)} rows × {len(frame.columns)} columns to {target}")


_TABLE_ROWS = 10


def emit(target: str, text: str) -> None:
    """Write ``text`` to the file ``target`` (atomically), or to stdout for ``-``.

    Raises:
        InputError: the disk refused the file.
    """
    if target == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        data = text.encode("utf-8")
        _atomic(
            target, lambda path: atomic_write(path, lambda fh: fh.write(data), make_parents=False)
        )


def _atomic(target: str, write: Callable[[Path], object]) -> None:
    """Write one output file atomically; a refusal of the disk is one line (exit 2)."""
    path = Path(target)
    try:
        write(path)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
