"""JSON records of the content and campaign endpoints → DataFrames with pinned dtypes.

The frames of areas A and B keep the documented field names as columns, in the documented order,
followed by any extra field the service sent (in first-seen order, as ``object``). Dtypes follow
the conventions of the report frames: text ``string`` (pyarrow storage), timestamps
``datetime64[us, UTC]``, integers ``Int64``, booleans ``boolean``. A missing field is a null; an
empty answer is an empty frame with every column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

from .._dependencies import lazy_import
from ..errors import SchemaError

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_import("pandas")

__all__ = ["Kind", "check_object", "check_records", "frame", "parse_bool"]

Kind = Literal["string", "timestamp", "int", "bool"]

_TRUE: Final = frozenset({"true", "1", "yes"})
_FALSE: Final = frozenset({"false", "0", "no"})


def check_records(payload: object, what: str) -> list[Mapping[str, Any]]:
    """Return ``payload`` if it is a JSON array of objects.

    Raises:
        SchemaError: anything else, saying what came instead.
    """
    if not isinstance(payload, list):
        raise SchemaError(
            f"{what} returned {type(payload).__name__}, expected an array of objects", where=""
        )
    for i, item in enumerate(payload):
        if not isinstance(item, dict):
            raise SchemaError(
                f"{what} item {i} is {type(item).__name__}, expected an object", where=f"[{i}]"
            )
    return payload


def check_object(payload: object, what: str, *keys: str) -> Mapping[str, Any]:
    """Return ``payload`` if it is a JSON object holding every one of ``keys``.

    Raises:
        SchemaError: not an object, or a key is missing.
    """
    if not isinstance(payload, dict):
        raise SchemaError(f"{what} returned {type(payload).__name__}, expected an object")
    missing = [k for k in keys if k not in payload]
    if missing:
        raise SchemaError(f"{what} returned an object without {', '.join(missing)}", where="")
    return payload


def parse_bool(value: object) -> bool | None:
    """Return a JSON boolean or a textual boolean (``'true'``/``'false'``) as a bool, else None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    return None


def _column(values: list[Any], kind: Kind, name: str, what: str) -> pd.Series:
    if kind == "string":
        text = [None if v is None else v if isinstance(v, str) else str(v) for v in values]
        return pd.Series(pd.array(text, dtype=pd.StringDtype("pyarrow")))
    if kind == "timestamp":
        try:
            stamps = pd.to_datetime(pd.Series(values, dtype=object), utc=True, format="ISO8601")
        except (ValueError, TypeError) as exc:
            raise SchemaError(f"{what}: {name} is not an ISO 8601 timestamp ({exc})") from None
        return stamps.astype(pd.DatetimeTZDtype(unit="us", tz="UTC"))
    if kind == "int":
        ints: list[int | None] = []
        for i, v in enumerate(values):
            if v is None or v == "":
                ints.append(None)
                continue
            try:
                number = float(v)
                if not number.is_integer() or isinstance(v, bool):
                    raise ValueError
            except (TypeError, ValueError):
                raise SchemaError(
                    f"{what}: {name} of item {i} is {v!r}, expected an integer", where=f"[{i}]"
                ) from None
            ints.append(int(number))
        return pd.Series(pd.array(ints, dtype="Int64"))
    return pd.Series(pd.array([parse_bool(v) for v in values], dtype="boolean"))


def frame(
    records: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, Kind]], what: str
) -> pd.DataFrame:
    """One row per record: the ``(name, kind)`` columns first, then any extra field; ``what``
    (the endpoint) names it in messages.

    Raises:
        SchemaError: a value cannot be read as its column's kind.
    """
    known = [name for name, _ in columns]
    extra: list[str] = []
    for record in records:
        extra.extend(k for k in record if k not in known and k not in extra)
    data: dict[str, pd.Series] = {}
    for name, kind in columns:
        data[name] = _column([r.get(name) for r in records], kind, name, what)
    for name in extra:
        data[name] = pd.Series([r.get(name) for r in records], dtype=object)
    return pd.DataFrame(data, index=pd.RangeIndex(len(records)))
