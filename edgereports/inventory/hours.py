"""Whole UTC hours as the inventory counts them, and the maintenance window."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import InputError

__all__ = ["MaintenanceWindow", "hour_numbers", "hours_of", "texts"]

_HOUR_NS = 3_600_000_000_000
_NEVER = np.iinfo(np.int64).max // 2


@dataclass(frozen=True)
class MaintenanceWindow:
    """A planned window: hours of ``subject`` (a site, eNodeB or MSISDN, by ``scope``) that are
    neither flagged nor counted against it.

    Attributes:
        scope: ``"site"``, ``"enodeb"`` or ``"msisdn"``.
        subject: the customer site id, the eNodeB's IP address or the MSISDN.
        start: the start (UTC).
        end: the end (UTC, exclusive).
        note: the operator's words, if any.
    """

    scope: str
    subject: str
    start: datetime
    end: datetime
    note: str = ""

    def to_dict(self) -> dict[str, str]:
        """The window as JSON-ready data (times in UTC ISO 8601)."""
        return {"scope": self.scope, "subject": self.subject, "start": self.start.isoformat(),
                "end": self.end.isoformat(), "note": self.note}  # fmt: skip


def hours_of(values: pd.Series, *, up: bool) -> npt.NDArray[np.int64]:
    """UTC timestamps as hours since the epoch, floored (``up``: ceiled); NaT: far away."""
    ns = values.to_numpy(dtype="datetime64[ns]").astype(np.int64)
    missing = values.isna().to_numpy()
    out = ns // _HOUR_NS if not up else -(-ns // _HOUR_NS)
    far = _NEVER if up else -_NEVER
    result: npt.NDArray[np.int64] = np.where(missing, far, out).astype(np.int64)
    return result


def texts(values: pd.Series) -> list[str | None]:
    """Texts of a string column, missing values as None."""
    return [None if v is None or v is pd.NA else str(v) for v in values.tolist()]


def hour_numbers(hours: Sequence[datetime] | pd.DatetimeIndex) -> npt.NDArray[np.int64]:
    """Whole UTC hours (tz-aware) as hours since the epoch."""
    index = hours if isinstance(hours, pd.DatetimeIndex) else pd.DatetimeIndex(list(hours))
    if index.tz is None:
        raise InputError("hours must be tz-aware (whole UTC hours)")
    ns = index.tz_convert(UTC).as_unit("ns").asi8
    result: npt.NDArray[np.int64] = ns // _HOUR_NS
    return result
