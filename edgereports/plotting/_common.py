"""Shared parts of the charts that draw nothing: units, time zones, names and frame facts."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from ..errors import InputError
from ..query.timegrid import bucket_length, shown_range
from ..schema import COMPARE_DTYPES, shape_of

__all__ = ["Scale", "TzLike", "unit_scale"]

TzLike = str | tzinfo | None

#: Friendlier names of the known metrics; others are shown as "Some metric".
_METRIC_NAMES = {
    "time_usage_seconds": "Time usage",
    "uplink_bytes": "Uplink bytes",
    "downlink_bytes": "Downlink bytes",
    "uplink_bandwidth": "Uplink bandwidth",
    "downlink_bandwidth": "Downlink bandwidth",
    "ue_connections": "UE connections",
    "ue_online_status": "UE online status",
    "sim": "SIMs",
}
#: Words of metric names that are acronyms (``ue_session_uplink_bytes`` → ``UE session ...``).
_ACRONYMS = {"ue": "UE", "vlan": "VLAN", "ran": "RAN", "ap": "AP", "sim": "SIM", "ip": "IP"}

# (divisor, unit) from large to small; the first divisor not above the largest value wins.
_BYTES = ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1.0, "bytes"))
_BITS = ((1e9, "Gbps"), (1e6, "Mbps"), (1e3, "kbps"), (1.0, "bps"))
_SECONDS = ((3600.0, "hours"), (60.0, "minutes"), (1.0, "seconds"))


@dataclass(frozen=True)
class Scale:
    """How to show the values of one kind of metric.

    Attributes:
        kind: ``"bytes"``, ``"seconds"``, ``"bandwidth"`` or ``"count"``.
        divisor: divide raw values by this to get the shown number.
        unit: the unit of the shown number (``"MB"``, ``"hours"``, ``"Mbps"``; ``""`` for counts).
    """

    kind: str
    divisor: float
    unit: str

    def label(self, what: str) -> str:
        """Return an axis label such as ``"Downlink bytes (MB)"``."""
        return f"{what} ({self.unit})" if self.unit else what

    def text(self, value: float) -> str:
        """Return one value as text with its unit, e.g. ``"12.3 MB"``."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "n/a"
        number = number_text(value / self.divisor)
        return f"{number} {self.unit}" if self.unit else number


def metric_kind(metric: str) -> str:
    """Return the kind of a metric from its name: bytes, seconds, bandwidth or count."""
    for kind in ("bytes", "seconds", "bandwidth"):
        if metric.endswith(f"_{kind}"):
            return kind
    return "count"


def unit_scale(metric: str, values: Iterable[float]) -> Scale:
    """Pick a readable unit for a metric's values.

    Bytes use decimal units (1 KB = 1000 bytes) up to TB; seconds become minutes or hours
    once the largest value is at least two of them; bandwidth (bits per second) becomes kbps,
    Mbps or Gbps. Other metrics are counts, shown as they are.

    Args:
        metric: the metric name, e.g. ``"downlink_bytes"``.
        values: the raw values (NaN is ignored).

    Returns:
        The :class:`Scale` to use.

    Example:
        >>> unit_scale("downlink_bytes", [2_500_000.0]).unit
        'MB'
    """
    kind = metric_kind(metric)
    array = np.abs(np.asarray(values if isinstance(values, np.ndarray) else list(values), float))
    finite = array[np.isfinite(array)]
    top = float(finite.max()) if len(finite) else 0.0
    if kind == "count":
        return Scale(kind, 1.0, "")
    table = {"bytes": _BYTES, "bandwidth": _BITS, "seconds": _SECONDS}[kind]
    factor = 2.0 if kind == "seconds" else 1.0
    for divisor, unit in table:
        if top >= divisor * factor:
            return Scale(kind, divisor, unit)
    return Scale(kind, table[-1][0], table[-1][1])


def number_text(value: float) -> str:
    """Return a number with at most three significant digits and thousands separators."""
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    if abs(value) >= 1000 or float(value).is_integer():
        return f"{value:,.0f}"
    digits = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:,.{digits}f}"


def metric_title(metric: str) -> str:
    """Return a readable name of a metric (``ue_connections`` → ``UE connections``)."""
    if metric in _METRIC_NAMES:
        return _METRIC_NAMES[metric]
    words = [_ACRONYMS.get(w, w) for w in metric.split("_")]
    text = " ".join(words)
    return text if words and words[0] in _ACRONYMS.values() else text[:1].upper() + text[1:]


def _lower_first(name: str) -> str:
    """``Downlink bytes`` → ``downlink bytes``; an acronym (``UE session ...``) stays."""
    first = name.split(" ", 1)[0]
    return name if first in _ACRONYMS.values() else name[:1].lower() + name[1:]


def metrics_title(metrics: Sequence[str]) -> str:
    """Name several metrics: ``Uplink and downlink bytes``, ``Time usage, UE connections``."""
    names = [metric_title(m) for m in dict.fromkeys(metrics)]
    if len(names) != 2:
        return ", ".join(names)
    first, second = names[0].rsplit(" ", 1), names[1].rsplit(" ", 1)
    if len(first) == len(second) == 2 and first[1] == second[1]:
        return f"{first[0]} and {_lower_first(second[0])} {first[1]}"
    return f"{names[0]} and {_lower_first(names[1])}"


def ordinal(value: float) -> str:
    """Return ``95`` as ``95th``, ``99.9`` as ``99.9th``."""
    if float(value).is_integer():
        n = int(value)
        suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
        return f"{n}{suffix}"
    return f"{value:g}th"


def resolve_tz(tz: TzLike, df: pd.DataFrame) -> tzinfo:
    """Return the zone to show times in: ``tz``, else the report's offset, else UTC.

    Args:
        tz: ``None``, a ``tzinfo``, ``"UTC"``, an offset such as ``"+05:30"`` or an IANA name.
        df: the frame; its ``attrs["request"]["start_date_time"]`` gives the report's offset.

    Returns:
        The zone.

    Raises:
        InputError: ``tz`` is not a zone.
    """
    if isinstance(tz, tzinfo):
        return tz
    if isinstance(tz, str):
        return _parse_zone(tz)
    if tz is not None:
        raise InputError(f"tz must be a time zone name, an offset or a tzinfo, got {tz!r}")
    request = df.attrs.get("request")
    start = request.get("start_date_time") if isinstance(request, Mapping) else None
    if isinstance(start, str):
        try:
            parsed = datetime.fromisoformat(start.replace("Z", "+00:00"))
        except ValueError:
            return UTC
        if parsed.tzinfo is not None:
            offset = parsed.utcoffset() or timedelta(0)
            return UTC if offset == timedelta(0) else timezone(offset)
    return UTC


def _parse_zone(text: str) -> tzinfo:
    name = text.strip()
    if name.upper() in ("UTC", "Z", "GMT"):
        return UTC
    if name[:1] in "+-":
        try:
            offset = datetime.strptime(name, "%z").utcoffset()
        except ValueError:
            raise InputError(f"tz {text!r} is not an offset such as '+05:30'") from None
        return timezone(offset) if offset else UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InputError(
            f"unknown time zone {text!r}; give an IANA name such as 'Asia/Kolkata', "
            "an offset such as '+05:30', or 'UTC'"
        ) from None


def zone_name(tz: tzinfo) -> str:
    """Return a short name of a zone for axis labels (``UTC+05:30``, ``Asia/Kolkata``)."""
    if isinstance(tz, ZoneInfo):
        return tz.key
    return tz.tzname(None) or str(tz)


def chart_frame(df: Any, function: str) -> pd.DataFrame:
    """A frame in any output form (pandas, a ``pyarrow.Table``, polars) as the pandas frame a
    chart reads, with its provenance in ``attrs``.

    Raises:
        InputError: none of these (the message names ``function``).
    """
    from ..normalize.output import as_pandas

    return as_pandas(df, function)


def frame_shape(df: pd.DataFrame, function: str) -> str:
    """Return the shape of a frame; :class:`InputError` naming ``function`` when it has none."""
    if not isinstance(df, pd.DataFrame):
        df = chart_frame(df, function)
    try:
        return shape_of(df)
    except ValueError as exc:
        raise InputError(f"{function}: {exc}") from None


def check_shape(df: pd.DataFrame, wanted: str, function: str) -> None:
    """Raise :class:`InputError` unless ``df`` is a frame of shape ``wanted``."""
    shape = frame_shape(df, function)
    if shape != wanted:
        raise InputError(f"{function} plots {wanted} frames, got a {shape} frame")


def request_range_text(request: object, tz: tzinfo) -> str:
    """The range of a request (its dict) in ``tz``, its last bucket included, as chart titles
    write it: ``1–7 Jul 2022 (UTC)`` for a DAY report of ``[1 Jul, 8 Jul)``.

    Example:
        >>> from datetime import timezone
        >>> request_range_text({"start_date_time": "2022-07-01T00:00:00+00:00",
        ...                     "end_date_time": "2022-07-08T00:00:00+00:00"}, timezone.utc)
        '1–7 Jul 2022 (UTC)'
    """
    if not isinstance(request, Mapping):
        return ""
    start, end = request.get("start_date_time"), request.get("end_date_time")
    if not (isinstance(start, str) and isinstance(end, str)):
        return ""
    try:
        begin = datetime.fromisoformat(start.replace("Z", "+00:00"))
        finish = datetime.fromisoformat(end.replace("Z", "+00:00"))
    except ValueError:
        return f"{start} – {end}"  # keywords such as LAST DAY
    grain = request.get("granularity")
    bucket = bucket_length(grain if isinstance(grain, str) else None)
    first, last, unit = shown_range(begin, finish, tz, bucket)
    if first.utcoffset() != begin.astimezone(tz).utcoffset():  # whole UTC buckets, told so
        return f"{_span(first, last, unit)} (UTC {unit}s)"
    return f"{_span(first, last, unit)} ({zone_name(tz)})"


def _span(first: datetime, last: datetime, unit: str) -> str:
    """``1–7 Jul 2022``, ``30 Jun – 7 Jul 2022``, ``7 Jul 2022 09:00 – 8 Jul 2022 08:00``."""
    if unit == "day":
        if first.date() == last.date():
            return f"{first.day} {first:%b %Y}"
        if (first.year, first.month) == (last.year, last.month):
            return f"{first.day}–{last.day} {last:%b %Y}"
        if first.year == last.year:
            return f"{first.day} {first:%b} – {last.day} {last:%b %Y}"
        return f"{first.day} {first:%b %Y} – {last.day} {last:%b %Y}"
    end_text = f"{last:%H:%M}" if first.date() == last.date() else _moment(last)
    return f"{_moment(first)} – {end_text}"


def _moment(moment: datetime) -> str:
    return f"{moment.day} {moment:%b %Y %H:%M}"


def dimension_columns(df: pd.DataFrame, fixed: Iterable[str]) -> list[str]:
    """Return the dimension columns of a frame (those that are not fixed columns)."""
    skip = {*fixed, *COMPARE_DTYPES}
    return [str(c) for c in df.columns if c not in skip]


def request_granularity(df: pd.DataFrame) -> str | None:
    """Return the request's granularity (upper case) when the frame carries its request."""
    request: Any = df.attrs.get("request")
    grain = request.get("granularity") if isinstance(request, Mapping) else None
    return grain.upper() if isinstance(grain, str) else None


_DIMENSION_NAMES = {
    "msisdn": "MSISDN",
    "imsi": "IMSI",
    "customer_site_id": "customer site",
    "enodeb_ip": "eNodeB IP",
    "ue_ip": "UE IP",
    "lr_id": "LR id",
    "account_id": "account",
    "device": "Edge Point",  # v2: the customer site serving the UE, not a UE
    "enb_ip": "eNodeB IP",
    "seid": "session id",
    "edgepoint": "Edge Point",
}


def dimension_title(dimension: str) -> str:
    """Return a readable name of a dimension (``customer_site_id`` → ``customer site``)."""
    return _DIMENSION_NAMES.get(dimension, dimension.replace("_", " "))


def first_upper(text: str) -> str:
    """Return ``text`` with its first letter upper case (``eNodeB`` stays as it is)."""
    if len(text) > 1 and text[0].islower() and text[1].isupper():
        return text
    return text[:1].upper() + text[1:]


def frame_metrics(df: pd.DataFrame) -> list[tuple[str, str | None, bool]]:
    """Return ``(name, aggregation, has percentile)`` of the frame's rows, else its request's."""
    if not df.empty and "metric" in df:
        table = bare(df)
        pct = table["percentile"].notna() if "percentile" in table else False
        # each distinct row once (in order), then named: the same first occurrences
        cols = table[["metric", "aggregation"]].assign(pct=pct).drop_duplicates().astype(object)
        triples = zip(cols["metric"], cols["aggregation"], cols["pct"], strict=True)
        return list(
            dict.fromkeys(
                (str(m), a if isinstance(a, str) else None, bool(p)) for m, a, p in triples
            )
        )
    request: Any = df.attrs.get("request")
    entries = request.get("metrics") if isinstance(request, Mapping) else None
    out = []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, Mapping):
            agg = entry.get("aggregation_type")
            has_pct = bool(entry.get("metric_filter_clauses"))
            out.append((str(entry.get("name")), agg if isinstance(agg, str) else None, has_pct))
    return out


def request_dimensions(df: pd.DataFrame) -> list[str]:
    """Return the dimensions the frame's request grouped by (empty when unknown)."""
    request: Any = df.attrs.get("request")
    dims = request.get("dimensions") if isinstance(request, Mapping) else None
    return [str(d) for d in dims] if isinstance(dims, list) else []


def bare(df: pd.DataFrame) -> pd.DataFrame:
    """``df``'s columns without its ``attrs`` (the data shared, not copied).

    pandas deep-copies a frame's ``attrs`` into every column it reads and every selection of
    rows; a loop over a frame's series reads the bare frame, and ``df.attrs`` once.
    """
    return pd.DataFrame(df, copy=False)


def row_groups(
    df: pd.DataFrame, keys: Sequence[str], *, sort: bool = False, dropna: bool = False
) -> list[tuple[tuple[Any, ...], np.ndarray]]:
    """The rows of each group of ``df`` by ``keys``, as ``df.groupby(keys, sort=sort,
    dropna=dropna)`` groups them, without a frame per group.

    Returns:
        Per group, in that order: its key (the values of its first row, as ``df`` holds them)
        and the positions of its rows (ascending).

    Example:
        >>> df = pd.DataFrame({"msisdn": ["b", "a", "b"], "value": [1.0, 2.0, 3.0]})
        >>> [(key, rows.tolist()) for key, rows in row_groups(df, ["msisdn"])]
        [(('b',), [0, 2]), (('a',), [1])]
    """
    table = bare(df)
    if table.empty:
        return []
    numbers = table.groupby(list(keys), sort=sort, dropna=dropna).ngroup()
    codes = numbers.to_numpy(dtype=float, na_value=np.nan)  # NaN: a row with a NA key, dropped
    kept = np.flatnonzero(~np.isnan(codes))
    if not len(kept):
        return []
    groups = codes[kept].astype(np.int64)
    order = kept[np.argsort(groups, kind="stable")]
    ends = np.cumsum(np.bincount(groups))
    positions = np.split(order, ends[:-1])
    firsts = [int(p[0]) for p in positions]
    values = [table[k].iloc[firsts].tolist() for k in keys]
    return [(tuple(v[i] for v in values), p) for i, p in enumerate(positions)]
