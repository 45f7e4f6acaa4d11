"""SIM count answers: ``[{"date": "dd-mm-yyyy", "physical": n, "esim": n}, ...]``.

Dates may also be written ``yyyy-mm-dd`` (as a frame written back to CSV has them). Rows come
out sorted by date (stable). ``account_id`` comes from the item when it carries one, else from
the request's account_id EXACT filter. Other members of an item are ignored.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._dependencies import lazy_import
from ..schema import COUNT, DATE, SIM_COUNT
from ._request import RequestInfo
from ._util import fail, ident, join, strings

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy_import("numpy")
    pd = lazy_import("pandas")

_DMY = re.compile(r"\s*(\d{1,2})-(\d{1,2})-(\d{4})\s*")
_YMD = re.compile(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ]00:00(?::00(?:\.0+)?)?)?\s*")
_EPOCH = dt.datetime(1970, 1, 1)
_INT64 = 2**63


def read_items(items: Sequence[tuple[Any, str]], req: RequestInfo | None) -> pd.DataFrame:
    """Read ``(item, path)`` pairs of SIM counts into the sim_count frame (attrs not yet set).

    Raises:
        SchemaError: for an item that is not an object, a date that is not ``dd-mm-yyyy``, or
            a count that is not a whole number.
    """
    if not items:
        return SIM_COUNT.empty()
    request_account = req.account_id if req is not None else None
    dates: list[int] = []
    accounts: list[str | None] = []
    physical: list[int | None] = []
    esim: list[int | None] = []
    for item, prefix in items:
        if not isinstance(item, Mapping):
            fail("SIM count item is not an object", prefix, item)
        if "date" not in item:
            fail("SIM count item has no date", prefix, item)
        dates.append(_date(item["date"], join(prefix, "date")))
        account = ident(item.get("account_id"), join(prefix, "account_id"))
        accounts.append(account if account is not None else request_account)
        physical.append(_count(item.get("physical"), join(prefix, "physical")))
        esim.append(_count(item.get("esim"), join(prefix, "esim")))
    micros = np.array(dates, dtype=np.int64)
    order = np.argsort(micros, kind="stable")
    pick = order.tolist()
    return pd.DataFrame(
        {
            "date": micros[order].view("datetime64[us]").astype(DATE),
            "account_id": strings([accounts[i] for i in pick]),
            "physical": pd.Series(pd.array([physical[i] for i in pick], dtype=COUNT)),
            "esim": pd.Series(pd.array([esim[i] for i in pick], dtype=COUNT)),
        }
    )


def _date(value: object, where: str) -> int:
    """Return midnight of a ``dd-mm-yyyy`` (or ``yyyy-mm-dd``) date as epoch microseconds."""
    if not isinstance(value, str):
        fail("date is not text", where, value)
    m = _DMY.fullmatch(value)
    if m:
        day, month, year = (int(g) for g in m.groups())
    else:
        m = _YMD.fullmatch(value)
        if not m:
            fail("date is not a dd-mm-yyyy date", where, value)
        year, month, day = (int(g) for g in m.groups())
    try:
        midnight = dt.datetime(year, month, day)
    except ValueError:
        fail("date is not a calendar date", where, value)
    return (midnight - _EPOCH) // dt.timedelta(microseconds=1)


def _count(value: object, where: str) -> int | None:
    """Return a whole-number count; None for null or empty text."""
    if value is None:
        return None
    if isinstance(value, bool):
        fail("count is a boolean, not a whole number", where, value)
    number: Any = value
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            number = int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                fail("count is not a whole number", where, value)
    if isinstance(number, float):
        if math.isnan(number):
            return None
        if not number.is_integer():
            fail("count is not a whole number", where, value)
        number = int(number)
    if not isinstance(number, int):
        fail("count is not a whole number", where, value)
    if not -_INT64 <= number < _INT64:
        fail("count is out of range", where, value)
    return number
