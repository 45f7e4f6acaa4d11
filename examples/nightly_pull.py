"""Nightly pull: one day of hourly byte usage per subscriber and the enterprise's daily time
usage, written as CSV and Parquet into ``OUT/date=YYYY-MM-DD/``.

Run it from cron after midnight UTC (settings from EDGEREPORTS_API_KEY and
EDGEREPORTS_REPORTING_URL)::

    python nightly_pull.py --account-id 62c40843c7a1909709112345 \
        --subscribers subscribers.txt --out /data/edge

Exit status 0 when everything was written; 1 when a request failed (the report it belongs to
is not written, the others are); 2 for bad arguments or settings.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pandas as pd

import edgereports as er
from edgereports.reporting import ReportingClient


def main(argv: list[str] | None = None) -> int:
    """Pull one day and write it; returns the exit status."""
    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--account-id", required=True)
    parser.add_argument("--subscribers", type=Path, required=True, help="one MSISDN a line")
    parser.add_argument("--day", type=date.fromisoformat, default=yesterday, help="UTC day")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    msisdns = [s.strip() for s in args.subscribers.read_text().splitlines() if s.strip()]
    span = {"account_id": args.account_id, "start": args.day, "end": args.day + timedelta(1)}
    reports = {
        "byte_usage": er.presets.byte_usage_subscriber(msisdn=msisdns, **span),
        "time_usage": er.presets.time_usage_enterprise(**span),
    }
    try:
        client = ReportingClient.from_settings(er.Settings.from_env(), progress=False)
        result = client.fetch_many(reports.values())
    except er.InputError as exc:
        print(f"nightly_pull: {exc}", file=sys.stderr)
        return 2
    except er.EdgeReportsError as exc:
        print(f"nightly_pull: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1

    folder = args.out / f"date={args.day.isoformat()}"
    folder.mkdir(parents=True, exist_ok=True)
    for index, (name, frame) in enumerate(zip(reports, result.frames, strict=True)):
        if frame is None or result.failures_of(index):
            continue  # never write a partial day
        # The service also answers the bucket that starts at the end time: it belongs to the
        # next night's pull.
        frame = frame[frame["time_stamp"] < pd.Timestamp(span["end"], tz="UTC")]
        frame.to_csv(folder / f"{name}.csv", index=False)
        frame.to_parquet(folder / f"{name}.parquet", index=False)
        print(f"{name}: {len(frame)} rows -> {folder}")
    for failure in result.failures:
        print(f"nightly_pull: failed: {failure}", file=sys.stderr)
    return 1 if result.failures else 0


if __name__ == "__main__":
    sys.exit(main())
