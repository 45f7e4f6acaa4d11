"""Availability tables: the ledger of :func:`~edgereports.availability`, exported like a report.

A ``[[reports]]`` table that names ``availability = "site"`` (or ``"enodeb"``, ``"msisdn"``)
instead of a preset is computed, not fetched: each window's UTC days are judged from the job's
``[inventory]`` (with the 28 days before the window as history) and written in the ledger's
long form, a time series frame (``metric`` is ``available_hours``, ``unavailable_hours``, ...,
``availability_pct``), through the same engine and destinations as every report: Parquet,
Delta or Iceberg, with the same watermark, lookback, units and reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..availability import SERIES, aggregation, availability, check_by, place_columns
from ..errors import ConfigError, InputError
from ..query import Report
from ..query.timegrid import is_relative
from .reports import (
    DEFAULT_LOOKBACK,
    ReportJob,
    check_keys,
    check_name,
    parse_lookback,
    parse_start,
    positive_int,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..inventory.model import Inventory
    from ..reporting import ReportingClient
    from .plan import ExportWindow

__all__ = ["LEDGER_KEYS", "LEDGER_WINDOW_DAYS", "Ledger", "parse_ledger"]

#: The keys of a ``[[reports]]`` table of an availability ledger.
LEDGER_KEYS = ("name", "availability", "account_id", "start", "lookback", "window_days")
#: UTC days per window unless the job says: each window pulls its days and 28 more per
#: subscriber, and holds them in memory (8 bytes per subscriber-hour).
LEDGER_WINDOW_DAYS = 31


@dataclass(frozen=True, eq=False)
class Ledger:
    """What an availability table is computed from.

    Attributes:
        by: ``customer_site_id``, ``enodeb`` or ``msisdn``.
        table: the job's ``[inventory]`` table (checked when the job was read).
        base: the folder its relative paths are relative to (the job file's).
        where: the job, for messages.
    """

    by: str
    table: Mapping[str, Any]
    base: Path | None
    where: str

    def inventory(self) -> Inventory:
        """The job's inventory, read now.

        Raises:
            InputError: the table or the files it names are bad.
        """
        from ..inventory.model import Inventory

        return Inventory.from_table(self.table, base=self.base, where=self.where)

    def definition(self, report: Report) -> dict[str, Any]:
        """What the table holds, as a request without its range would say it: the subjects'
        columns, the account and the ledger's counted columns as metrics (:func:`aggregation`)."""
        request = report.to_request()
        metrics = [{"name": n, "aggregation_type": aggregation(n)} for n in SERIES]
        return {
            "granularity": "DAY",
            "dimensions": request.get("dimensions", []),
            "dimension_filter_clauses": request.get("dimension_filter_clauses", []),
            "metrics": metrics,
        }

    def frame(self, client: ReportingClient, start: datetime, end: datetime) -> pd.DataFrame:
        """The ledger's long form over the UTC days ``[start, end)``.

        Raises:
            EdgeReportsError: the inventory cannot be read, or the pull failed.
        """
        from ..availability.frame import ledger_series  # numpy and pandas, with the frame

        ledger = availability(client, inventory=self.inventory(), start=start, end=end,
                              by=self.by, granularity="DAY")  # fmt: skip
        return ledger_series(ledger)

    def cost(self, windows: Sequence[ExportWindow]) -> tuple[int, int]:
        """The requests and rows (at most) of ``windows``: per window, one hourly report per
        subscriber and the SIM counts; per day, a row per subject and counted column."""
        inventory = self.inventory()
        subjects = {"customer_site_id": len(inventory.sites), "enodeb": len(inventory.enodebs),
                    "msisdn": len(inventory)}[self.by]  # fmt: skip
        days = sum((w.end - w.start).days for w in windows)
        return len(windows) * (len(inventory) + 1), days * subjects * len(SERIES)


def parse_ledger(
    item: Mapping[str, Any],
    defaults: Mapping[str, Any],
    where: str,
    i: int,
    inventory: Mapping[str, Any] | None,
    base: Path | None,
) -> ReportJob:
    """Validate the ``i``-th ``[[reports]]`` table of the job file ``where`` when it names an
    ``availability`` ledger (with the job's ``defaults`` and ``[inventory]``).

    Raises:
        ConfigError: the table is invalid, or the job has no ``[inventory]``; the message names
            the file, the report and the key.
    """
    name = item.get("name")
    label = f"{where} reports[{i}]" + (f" ({name!r})" if isinstance(name, str) else "")
    check_keys(item, LEDGER_KEYS, label)
    check_name(name, label)
    assert isinstance(name, str)
    try:
        by = check_by(item["availability"])
    except InputError:
        raise ConfigError(
            f"{label}: availability must be site, enodeb or msisdn (what the ledger is per), "
            f"got {item['availability']!r}"
        ) from None
    if inventory is None:
        raise ConfigError(
            f"{label}: an availability ledger is judged from the job's [inventory]; add one "
            '(devices = "inventory.csv")'
        )
    merged = {**defaults, **{k: v for k, v in item.items() if k in LEDGER_KEYS}}
    account = merged.get("account_id") or inventory.get("account_id")
    if not isinstance(account, str) or not account.strip():
        raise ConfigError(f"{label}: no account_id; set it here, in [defaults] or [inventory]")
    if "start" not in merged:
        raise ConfigError(f"{label}: no start; set start = 2024-01-01 here or in [defaults]")
    report = Report(account_id=account).granularity("DAY").by(*place_columns(by))
    report = report.metric("time_usage_seconds", "COUNT")  # what its hours are read from
    report = report.between(date(2000, 1, 1), date(2000, 1, 2))  # a placeholder: windows set it
    window = merged.get("window_days", LEDGER_WINDOW_DAYS)
    start = merged["start"]
    return ReportJob(
        name=name,
        report=report,
        granularity="DAY",
        start=parse_start(start, f"{label}: key start"),
        lookback=parse_lookback(
            merged.get("lookback", DEFAULT_LOOKBACK.days), f"{label}: key lookback"
        ),
        window_days=positive_int(window, label, "window_days"),
        relative_start=str(start).strip() if is_relative(start) else None,
        ledger=Ledger(by, inventory, base, where),
    )
