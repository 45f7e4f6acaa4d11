"""Per-subscriber report: hours online and data used per subscriber over a range.

    python subscriber_report.py --account-id 62c40843c7a1909709112345 \
        --msisdn 917775035851 --msisdn 919329015626 --start 2022-06-01 --end 2022-07-01

(two handsets of the local sandbox, ``edgereports sandbox``). Prints one row per subscriber
(hours online, MB up, MB down, busiest hour in UTC); ``--csv FILE`` also writes it. A subscriber
without any row is named on stderr; with no row at all the script says why and exits 1.
Settings from EDGEREPORTS_API_KEY and EDGEREPORTS_REPORTING_URL.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import pandas as pd

import edgereports as er
from edgereports.reporting import ReportingClient


def summarize(time_usage: pd.DataFrame, byte_usage: pd.DataFrame) -> pd.DataFrame:
    """One row per subscriber from the daily time usage and hourly byte usage frames."""
    hours = time_usage.groupby("msisdn")["value"].sum() / 3600
    volume = byte_usage.pivot_table(
        index="msisdn", columns="metric", values="value", aggfunc="sum", observed=True
    ).reindex(columns=["uplink_bytes", "downlink_bytes"])
    per_hour = byte_usage.groupby(["msisdn", "time_stamp"], observed=True)["value"].sum()
    busiest = per_hour.groupby(level="msisdn", observed=True).idxmax().map(lambda key: key[1])
    out = pd.DataFrame(
        {
            "hours_online": hours,
            "uplink_mb": volume["uplink_bytes"] / 1e6,
            "downlink_mb": volume["downlink_bytes"] / 1e6,
        }
    ).round(2)
    out["busiest_hour_utc"] = busiest.dt.strftime("%Y-%m-%d %H:00")
    out.index.name = "msisdn"
    return out.sort_index()


def main(argv: list[str] | None = None) -> int:
    """Fetch, summarize and print; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--account-id", required=True)
    parser.add_argument("--msisdn", action="append", required=True, help="repeat for several")
    parser.add_argument("--start", required=True)
    parser.add_argument("--end", required=True)
    parser.add_argument("--csv", type=Path, help="also write the table here")
    args = parser.parse_args(argv)

    span = {"account_id": args.account_id, "start": args.start, "end": args.end}
    try:
        client = ReportingClient.from_settings(er.Settings.from_env())
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always", er.EdgeReportsWarning)
            time_usage = client.fetch(er.presets.time_usage_subscriber(msisdn=args.msisdn, **span))
            byte_usage = client.fetch(er.presets.byte_usage_subscriber(msisdn=args.msisdn, **span))
    except er.InputError as exc:
        print(f"subscriber_report: {exc}", file=sys.stderr)
        return 2
    except er.EdgeReportsError as exc:
        print(f"subscriber_report: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    for warning in {str(w.message) for w in seen}:
        print(f"subscriber_report: {warning}", file=sys.stderr)
    if time_usage.empty or byte_usage.empty:
        print("subscriber_report: no rows to summarize", file=sys.stderr)
        return 1
    table = summarize(time_usage, byte_usage)
    print(table.to_string())
    if args.csv:
        table.to_csv(args.csv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
