"""One ``[[reports]]`` table of a job file: a preset with parameters, or a full request.

Validated into a frozen :class:`ReportJob`; every problem is a
:class:`~edgereports.errors.ConfigError` naming the file, the report and the key.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from .. import presets
from ..errors import ConfigError, QueryError
from ..query import Report
from ..query.timegrid import BUCKETS, bucket_length, is_relative, resolve_relative
from ..query.versions import API_VERSIONS
from ..reporting.plan import branches, metric_groups

if TYPE_CHECKING:
    from .availability import Ledger

__all__ = [
    "DEFAULT_KEYS",
    "DEFAULT_LOOKBACK",
    "MAX_WINDOW_DAYS",
    "WINDOW_ROWS",
    "ReportJob",
    "check_name",
    "parse_lookback",
    "parse_report",
    "parse_start",
    "to_utc",
]

#: How far back each run re-fetches unless a report says otherwise.
DEFAULT_LOOKBACK = timedelta(days=2)
#: The rows one export window holds at most by default (fan-out values x buckets x metrics):
#: a window is held in memory whole, so this bounds memory while letting one request per
#: subscriber cover months.
WINDOW_ROWS = 1_000_000
#: The longest default window in days: a year, the longest window one request asks for.
MAX_WINDOW_DAYS = 366
#: The keys ``[defaults]`` may set for every report.
DEFAULT_KEYS = ("account_id", "start", "lookback", "window_days")

_REPORT_KEYS = (
    "name",
    "preset",
    "params",
    "request",
    "granularity",
    "account_id",
    "start",
    "lookback",
    "window_days",
    "shard_size",
    "api_version",
)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_LOOKBACK = re.compile(r"(\d+)\s*(d|day|days|h|hour|hours)", re.IGNORECASE)
_PLACEHOLDER = (date(2000, 1, 1), date(2000, 1, 2))


@dataclass(frozen=True)
class ReportJob:
    """One report of a job: what to fetch, from when, and where it goes.

    Attributes:
        name: the output name (the directory under the output root).
        report: the request without its range (a placeholder range; see :meth:`for_window`).
        granularity: ``"DAY"`` or ``"HOUR"``; ``None`` for SIM counts (daily).
        start: the first UTC midnight to export.
        relative_start: the relative date ``start`` was written as (``"60d"``), resolved
            again against the service's present by :meth:`at`; None for a date.
        lookback: how far before the watermark each run re-fetches (rounded out to whole days).
        window_days: UTC days per fetch window.
        shard_size: fan-out values per shard when a long range is fetched in shards (each
            shard's windows as long as a request may be); 0: never sharded (the job set
            ``window_days``, or the values are few enough for long windows anyway).
        ledger: for an availability table, what its rows are computed from (its windows are
            computed, not fetched: :mod:`.availability`); None for a report.
    """

    name: str
    report: Report
    granularity: str | None
    start: datetime
    lookback: timedelta
    window_days: int
    shard_size: int = 0
    relative_start: str | None = None
    ledger: Ledger | None = None

    def at(self, now: datetime) -> ReportJob:
        """The report job with a relative ``start`` resolved against ``now`` (the service's
        present when a run has a client), rounded down to a UTC midnight."""
        if self.relative_start is None:
            return self
        start = parse_start(self.relative_start, "start", now=now)
        return dataclasses.replace(self, start=start)

    @property
    def shape(self) -> str:
        """The frame shape: ``"timeseries"`` or ``"sim_count"``."""
        return "timeseries" if self.granularity is not None else "sim_count"

    @property
    def time_column(self) -> str:
        """The column that holds the bucket: ``time_stamp`` or ``date`` (SIM counts)."""
        return "time_stamp" if self.granularity is not None else "date"

    @property
    def bucket(self) -> timedelta:
        """The bucket size (one day for SIM counts)."""
        bucket = bucket_length(self.granularity, daily=True)
        assert bucket is not None  # DAY or HOUR, checked when the job was read
        return bucket

    def for_window(self, start: datetime, end: datetime) -> Report:
        """The report over ``[start, end)``."""
        return self.report.between(start, end)

    def definition(self) -> dict[str, Any]:
        """The request without its range: what the dataset's rows mean (no secret in it); for
        an availability table, the ledger's rule and subjects."""
        if self.ledger is not None:
            return self.ledger.definition(self.report)
        request = self.report.to_request()
        return {k: v for k, v in request.items() if k not in ("start_date_time", "end_date_time")}


def parse_lookback(value: object, where: str, what: str = "lookback") -> timedelta:
    """Read a lookback: a number of days, or a string such as ``"2d"`` or ``"36h"``.

    Raises:
        ConfigError: anything else, naming ``where``.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return timedelta(days=value)
    if isinstance(value, str):
        match = _LOOKBACK.fullmatch(value.strip())
        if match:
            amount, unit = int(match[1]), match[2].lower()
            return timedelta(hours=amount) if unit.startswith("h") else timedelta(days=amount)
    raise ConfigError(
        f'{where}: {what} must be a number of days or a string like "2d" or "36h", got {value!r}'
    )


def to_utc(value: datetime | date | str, what: str = "--until") -> datetime:
    """Read an instant: an aware datetime, a date (UTC midnight) or an ISO-8601 string.

    Raises:
        ConfigError: a naive datetime or an unreadable string.
    """
    if isinstance(value, str):
        text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
        try:
            value = date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
        except ValueError:
            raise ConfigError(
                f"{what} {value!r} is not a date (2024-06-30) or an ISO-8601 timestamp with "
                "an offset (2024-06-30T00:00:00Z)"
            ) from None
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ConfigError(f"{what} {value.isoformat()!r} has no UTC offset")
        return value.astimezone(UTC)
    return datetime(value.year, value.month, value.day, tzinfo=UTC)


def parse_start(value: object, where: str, *, now: datetime | None = None) -> datetime:
    """Read a start: a TOML date, an offset datetime, such a string, or a relative date
    (``"60d"``, ``"8w"``, ``"yesterday"``: UTC midnights before ``now``, the local clock when
    None); floored to a UTC day.

    Raises:
        ConfigError: anything else, naming ``where``.
    """
    if is_relative(value):
        try:
            value = resolve_relative(value, UTC, now)
        except OverflowError:
            value = None
    try:
        when = to_utc(value, where) if isinstance(value, str | date) else None
    except ConfigError:
        when = None
    if when is None:
        raise ConfigError(
            f"{where}: start must be a date such as 2024-01-01, a timestamp with an offset "
            "such as 2024-01-01T00:00:00Z (it is rounded down to a UTC day) or a relative date "
            'such as "60d" (days before the service\'s today)'
        )
    return when.replace(hour=0, minute=0, second=0, microsecond=0)


def parse_report(
    item: Mapping[str, Any], defaults: Mapping[str, Any], where: str, i: int
) -> ReportJob:
    """Validate the ``i``-th ``[[reports]]`` table of the job file ``where`` (with the job's
    ``defaults``).

    Raises:
        ConfigError: the table is invalid; the message names the file, report and key.
    """
    raw_name = item.get("name", item.get("preset"))
    label = f"{where} reports[{i}]" + (f" ({raw_name!r})" if isinstance(raw_name, str) else "")
    check_keys(item, _REPORT_KEYS, label)
    check_name(raw_name, label)
    merged = {**defaults, **{k: v for k, v in item.items() if k in DEFAULT_KEYS}}
    report = _build(item, merged, label)
    grain = item.get("granularity")
    if grain is not None:
        if not isinstance(grain, str) or grain.strip().upper() not in BUCKETS:
            raise ConfigError(f'{label}: granularity must be "DAY" or "HOUR", got {grain!r}')
        report = report.granularity(grain.strip().upper())
    report = _check_exportable(report, label)
    if "start" not in merged:
        raise ConfigError(f"{label}: no start; set start = 2024-01-01 here or in [defaults]")
    start = parse_start(merged["start"], f"{label}: key start")
    lookback = parse_lookback(
        merged.get("lookback", DEFAULT_LOOKBACK.days), f"{label}: key lookback"
    )
    shard_size = 0
    if "window_days" in merged:
        window_days = positive_int(merged["window_days"], label, "window_days")
    else:
        window_days = default_window_days(report)
        shard_size = default_shard_size(report)
    if "shard_size" in item:
        shard_size = positive_int(item["shard_size"], label, "shard_size")
    return ReportJob(
        name=raw_name,
        report=report,
        granularity=report.grain,
        start=start,
        lookback=lookback,
        window_days=window_days,
        shard_size=shard_size,
        relative_start=str(merged["start"]).strip() if is_relative(merged["start"]) else None,
    )


def check_name(name: object, label: str) -> None:
    """Check a report's name: a directory name of letters, digits, ``_``, ``.`` or ``-``.

    Raises:
        ConfigError: anything else, naming ``label``.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(
            f"{label}: name must be a directory name of letters, digits, '_', '.' or '-' "
            f"that does not start with '_' or '.', got {name!r}"
        )


def default_window_days(report: Report) -> int:
    """The days of one export window when the job does not say: as many as keep a window's
    frame within :data:`WINDOW_ROWS` rows, from 1 to :data:`MAX_WINDOW_DAYS`.

    Each window costs one request per fan-out value (a subscriber, say), so long windows are
    what make an export cheap; the cap on rows is what keeps its memory flat.

    Example:
        >>> from edgereports import presets
        >>> r = presets.byte_usage_subscriber(account_id="A", msisdn=["91", "92"],
        ...     start="2024-01-01", end="2024-01-02").granularity("HOUR")
        >>> default_window_days(r)  # 2 subscribers x 24 hours x 2 metrics: 96 rows a day
        366
        >>> default_window_days(r.where(msisdn=[str(n) for n in range(1000)]))
        20
    """
    buckets = 24 if report.grain == "HOUR" else 1
    per_day = len(branches(report)) * buckets * max(1, len(report.metrics))
    return max(1, min(MAX_WINDOW_DAYS, WINDOW_ROWS // per_day))


def default_shard_size(report: Report) -> int:
    """The fan-out values per shard that let one window span :data:`MAX_WINDOW_DAYS` within
    :data:`WINDOW_ROWS` rows; 0 when the report's values fit in such windows unsharded.

    Example:
        >>> from edgereports import presets
        >>> r = presets.byte_usage_subscriber(account_id="A", msisdn=[str(n) for n in range(
        ...     10_000)], start="2024-01-01", end="2024-01-02").granularity("HOUR")
        >>> default_shard_size(r)  # 24 hours x 2 metrics a day: 56 subscribers over a year
        56
    """
    buckets = 24 if report.grain == "HOUR" else 1
    values = len(branches(report)) // max(1, len(metric_groups(report)))
    size = max(1, WINDOW_ROWS // (MAX_WINDOW_DAYS * buckets * max(1, len(report.metrics))))
    return size if values > size else 0


def _build(item: Mapping[str, Any], merged: Mapping[str, Any], label: str) -> Report:
    has_preset, has_request = "preset" in item, "request" in item
    if has_preset == has_request:
        raise ConfigError(
            f"{label}: give either preset (with params) or request (a full request table), "
            "not both and not neither"
        )
    if has_request:
        if "params" in item:
            raise ConfigError(f"{label}: params go with preset, not with request")
        request = item["request"]
        if not isinstance(request, Mapping):
            raise ConfigError(f"{label}: request must be a table (the JSON request)")
        note = "from start, the watermark and the lookback"
        _refuse_range(request, "request", ("start_date_time", "end_date_time"), label, note)
        version = item.get("api_version", "v1")
        if version not in API_VERSIONS:
            allowed = ", ".join(map(repr, API_VERSIONS))
            raise ConfigError(f"{label}: key api_version must be one of {allowed}, got {version!r}")
        try:
            report = Report.from_request(request, api_version=version)
            report = report.between(*_PLACEHOLDER).validate()
        except QueryError as exc:
            raise ConfigError(f"{label}: key request.{exc.field or ''}: {exc}") from None
        if report.account_id is None and "account_id" in merged:
            try:
                report = dataclasses.replace(report, account_id=merged["account_id"])
            except QueryError as exc:
                raise ConfigError(f"{label}: key account_id: {exc}") from None
        elif report.account_id is not None and "account_id" in item:
            raise ConfigError(
                f"{label}: key account_id: the request already filters on an account; "
                "remove account_id from this report"
            )
        return report
    preset = item["preset"]
    if not isinstance(preset, str):
        raise ConfigError(f"{label}: preset must be a preset name, got {preset!r}")
    params = item.get("params", {})
    if not isinstance(params, Mapping):
        raise ConfigError(f"{label}: params must be a table, e.g. params = {{ msisdn = [...] }}")
    note = "(use start = ... on the report for the first day)"
    _refuse_range(params, "params", ("start", "end"), label, note)
    try:
        info = presets.get(preset)
    except QueryError as exc:
        raise ConfigError(f"{label}: key preset: {exc}") from None
    ranged = any(p.name == "start" for p in info.params)  # NOW unless given a range
    if info.is_now and not (ranged and (item.get("granularity") or params.get("granularity"))):
        how = ': add granularity = "DAY" or "HOUR" to the report' if ranged else ""
        raise ConfigError(
            f"{label}: key preset: {preset!r} reports the current value (NOW) without a "
            f"granularity; the export needs a report over dates with a granularity, or SIM "
            f"counts{how}"
        )
    if item.get("api_version", info.api_version) != info.api_version:
        raise ConfigError(
            f"{label}: key api_version: preset {preset!r} is a {info.api_version} report, "
            f"not {item['api_version']!r}"
        )
    args: dict[str, Any] = dict(params)
    takes_account = any(p.name == "account_id" for p in info.params)
    if "account_id" in merged and "account_id" not in args and takes_account:
        args["account_id"] = merged["account_id"]
    try:
        return presets.build(preset, start=_PLACEHOLDER[0], end=_PLACEHOLDER[1], **args)
    except QueryError as exc:
        key = "account_id" if exc.field == "account_id" else f"params.{exc.field}"
        raise ConfigError(f"{label}: key {key}: {exc}") from None


def _refuse_range(
    table: Mapping[str, Any], where: str, keys: tuple[str, str], label: str, note: str
) -> None:
    """Refuse the range keys in a report's ``request`` or ``params``: the export sets the range."""
    for key in keys:
        if key in table:
            raise ConfigError(
                f"{label}: key {where}.{key}: remove it; the export sets the range per window "
                + note
            )


def _check_exportable(report: Report, label: str) -> Report:
    metrics = report.metrics
    if report.dimensions and "day" in report.dimensions:
        raise ConfigError(f"{label}: a dimension named 'day' clashes with the partition column")
    if any(m.percentile is not None for m in metrics):
        raise ConfigError(
            f"{label}: PERCENTILE metrics give one value over the whole range; the export "
            "writes time series (DAY or HOUR) and SIM counts"
        )
    is_sim = any(m.name == "sim" for m in metrics)
    if is_sim:
        if report.grain is not None or len(metrics) != 1:
            raise ConfigError(
                f"{label}: a SIM count report has the one metric sim (COUNT) and no granularity"
            )
        return report
    if report.grain is None:
        raise ConfigError(
            f'{label}: no granularity; add granularity = "DAY" or "HOUR" (the export writes '
            "time series and SIM counts)"
        )
    if report.grain not in BUCKETS:
        raise ConfigError(f'{label}: granularity must be "DAY" or "HOUR", got {report.grain!r}')
    return report


def check_keys(table: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    for key in table:
        if key not in allowed:
            raise ConfigError(
                f"{where}: unknown key {key!r}{hint(str(key), allowed)} "
                f"(allowed: {', '.join(allowed)})"
            )


def positive_int(value: object, where: str, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{where}: {key} must be a whole number of at least 1, got {value!r}")
    return value


def hint(word: str, choices: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
