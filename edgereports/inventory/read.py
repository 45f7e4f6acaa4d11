"""Reading an inventory: frames, CSV and Parquet files, a job file's ``[inventory]`` table.

Every check happens here, before any request, and names the file, the row and the column.
Times: a plain date is that day's UTC midnight; a timestamp needs its UTC offset.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError
from .table import SCOPES

__all__ = [
    "DEVICE_COLUMNS",
    "OPTIONAL_COLUMNS",
    "SCOPES",
    "WINDOW_COLUMNS",
    "devices_frame",
    "read_file",
    "windows_frame",
]

#: The columns every inventory row needs.
DEVICE_COLUMNS = ("msisdn", "imsi", "customer_site_id", "enodeb_ip", "activation_date")
#: The columns an inventory may have besides (a device id: several SIMs in one device).
OPTIONAL_COLUMNS = ("deactivation_date", "device_id", "account_id")
#: The columns of the maintenance windows (``note`` optional).
WINDOW_COLUMNS = ("scope", "subject", "start", "end")
_SUFFIXES = (".csv", ".parquet")


def _missing(value: object) -> bool:
    if value is None or value is pd.NaT:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def instant(value: object, what: str) -> datetime | None:
    """A time of the inventory as a UTC datetime: a date is its UTC midnight; a timestamp
    needs an offset. Missing (None, NaN, empty): None.

    Raises:
        InputError: anything else (``what`` names the row and column).

    Example:
        >>> instant("2024-03-01", "activation_date of row 1")
        datetime.datetime(2024, 3, 1, 0, 0, tzinfo=datetime.timezone.utc)
    """
    if _missing(value):
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            if value.hour or value.minute or value.second or value.microsecond:
                raise InputError(f"{what}: {value.isoformat()} needs a UTC offset (e.g. +05:30)")
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    text = str(value).strip()
    try:
        if len(text) == 10:
            return instant(date.fromisoformat(text), what)
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(
            f"{what}: {text!r} is not a date (2024-03-01) or a timestamp with an offset "
            "(2024-03-01T06:00:00+05:30)"
        ) from None
    if parsed.tzinfo is None:
        raise InputError(f"{what}: {text!r} needs a UTC offset (e.g. {text}+05:30) or be a date")
    return parsed.astimezone(UTC)


def _text(value: object) -> str | None:
    """An id as text (``919876543210`` and ``"919876543210"`` are one subscriber)."""
    if _missing(value):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def _columns(frame: object, needed: Sequence[str], allowed: Sequence[str], where: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"{where} must be a pandas DataFrame, got {type(frame).__name__}")
    names = [str(c) for c in frame.columns]
    missing = [c for c in needed if c not in names]
    if missing:
        optional = ", ".join(c for c in allowed if c not in needed)
        raise InputError(
            f"{where} lacks the column(s) {', '.join(missing)}; it needs {', '.join(needed)} "
            f"(and may have {optional})"
        )
    unknown = [c for c in names if c not in allowed]
    if unknown:
        raise InputError(
            f"{where} has the unknown column {unknown[0]!r}; allowed: {', '.join(allowed)}"
        )


def devices_frame(
    frame: object, where: str, account_id: str | None
) -> tuple[pd.DataFrame, str | None]:
    """Check and coerce an inventory's devices: one row per MSISDN, times in UTC.

    Returns:
        The frame (``msisdn``, ``imsi``, ``device_id``, ``customer_site_id``, ``enodeb_ip``
        as strings; ``activation`` and ``deactivation`` as UTC timestamps) and the account.

    Raises:
        InputError: a missing or unknown column, an empty id, a bad time, a deactivation
            before its activation, an MSISDN listed twice, or several accounts.
    """
    allowed = (*DEVICE_COLUMNS, *OPTIONAL_COLUMNS)
    _columns(frame, DEVICE_COLUMNS, allowed, where)
    assert isinstance(frame, pd.DataFrame)
    frame = frame.rename(columns=str)
    if "account_id" in frame.columns:
        accounts = sorted({a for a in map(_text, frame["account_id"]) if a})
        if account_id is not None:
            frame = frame[frame["account_id"].map(_text) == account_id]
            if not len(frame):
                raise InputError(f"{where} has no row of account {account_id!r}")
        elif len(accounts) > 1:
            raise InputError(
                f"{where} lists {len(accounts)} accounts ({', '.join(accounts[:3])}); "
                "pick one with account_id="
            )
        elif accounts:
            account_id = accounts[0]
    if not len(frame):
        raise InputError(f"{where} lists no device")
    rows = []
    seen: dict[str, int] = {}
    for n, rec in enumerate(frame.to_dict(orient="records"), start=1):
        ids = {c: _text(rec.get(c)) for c in ("msisdn", "imsi", "customer_site_id", "enodeb_ip")}
        for column, value in ids.items():
            if value is None:
                raise InputError(f"{where}: row {n} has no {column}")
        msisdn = str(ids["msisdn"])
        if msisdn in seen:
            raise InputError(
                f"{where}: MSISDN {msisdn} is listed twice (rows {seen[msisdn]} and {n})"
            )
        seen[msisdn] = n
        born = instant(rec.get("activation_date"), f"{where}: activation_date of row {n}")
        if born is None:
            raise InputError(f"{where}: row {n} has no activation_date")
        gone = instant(rec.get("deactivation_date"), f"{where}: deactivation_date of row {n}")
        if gone is not None and gone <= born:
            raise InputError(
                f"{where}: row {n} is deactivated ({gone.date()}) before it is activated "
                f"({born.date()})"
            )
        device = _text(rec.get("device_id")) or msisdn
        rows.append(
            (msisdn, ids["imsi"], device, ids["customer_site_id"], ids["enodeb_ip"], born, gone)
        )
    return _as_frame(rows), account_id


def _as_frame(rows: Sequence[tuple[Any, ...]]) -> pd.DataFrame:
    names = ("msisdn", "imsi", "device_id", "customer_site_id", "enodeb_ip")
    columns: dict[str, Any] = {
        name: pd.Series([r[i] for r in rows], dtype="string") for i, name in enumerate(names)
    }
    for i, name in ((5, "activation"), (6, "deactivation")):
        columns[name] = pd.Series(
            pd.DatetimeIndex([r[i] for r in rows], tz=UTC).as_unit("us")
            if rows
            else pd.DatetimeIndex([], tz=UTC).as_unit("us")
        )
    return pd.DataFrame(columns)


def partial_frame(msisdns: Sequence[str]) -> pd.DataFrame:
    """Devices known by MSISDN only: site, eNodeB and life unknown (learnt from the service)."""
    return _as_frame([(m, None, m, None, None, None, None) for m in msisdns])


def windows_frame(frame: object, where: str) -> pd.DataFrame:
    """Check and coerce maintenance windows: ``scope``, ``subject``, ``start``, ``end`` (UTC),
    ``note``.

    Raises:
        InputError: a missing or unknown column, an unknown scope, a bad time, or an end not
            after its start.
    """
    _columns(frame, WINDOW_COLUMNS, (*WINDOW_COLUMNS, "note"), where)
    assert isinstance(frame, pd.DataFrame)
    rows = []
    for n, rec in enumerate(frame.rename(columns=str).to_dict(orient="records"), start=1):
        scope = _text(rec.get("scope"))
        if scope not in SCOPES:
            raise InputError(
                f"{where}: scope {scope!r} of row {n} must be one of {', '.join(SCOPES)}"
            )
        subject = _text(rec.get("subject"))
        if subject is None:
            raise InputError(f"{where}: row {n} has no subject")
        start = instant(rec.get("start"), f"{where}: start of row {n}")
        end = instant(rec.get("end"), f"{where}: end of row {n}")
        if start is None or end is None:
            raise InputError(f"{where}: row {n} needs a start and an end")
        if end <= start:
            raise InputError(f"{where}: row {n} ends ({end.isoformat()}) before it starts")
        rows.append((scope, subject, start, end, _text(rec.get("note")) or ""))
    out = pd.DataFrame(
        {
            "scope": pd.Series([r[0] for r in rows], dtype="string"),
            "subject": pd.Series([r[1] for r in rows], dtype="string"),
            "start": pd.Series(pd.DatetimeIndex([r[2] for r in rows], tz=UTC).as_unit("us")),
            "end": pd.Series(pd.DatetimeIndex([r[3] for r in rows], tz=UTC).as_unit("us")),
            "note": pd.Series([r[4] for r in rows], dtype="string"),
        }
    )
    return out.sort_values(["start", "scope", "subject"], ignore_index=True)


def read_file(path: str | os.PathLike[str], what: str = "inventory") -> pd.DataFrame:
    """A CSV (every column read as text) or Parquet file as a frame.

    Raises:
        InputError: the file is missing, unreadable or of another kind (names it).
    """
    file = Path(path)
    suffix = file.suffix.lower()
    if suffix not in _SUFFIXES:
        raise InputError(f"{what} file {file} must be CSV (.csv) or Parquet (.parquet)")
    try:
        if suffix == ".parquet":
            return pd.read_parquet(file)
        return pd.read_csv(file, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise InputError(f"{what} file {file} does not exist") from None
    except (OSError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"cannot read {what} file {file}: {first}") from None
