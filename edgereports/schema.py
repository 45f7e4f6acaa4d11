"""The pinned columns and dtypes of every frame (pandas and pyarrow forms), and the CSV layouts.

Three frame shapes come out of :mod:`edgereports.normalize`: :data:`TIMESERIES`,
:data:`CURRENT` and :data:`SIM_COUNT` (docs/frames.md shows them). Their dtypes are the same on
pandas 2.2 and 3.x: the ``string`` storage is pinned to pyarrow, since pandas 2.2 defaults to
``python``. The dtype constants are pandas' names of the dtypes (pandas takes a name wherever it
takes a dtype), so importing the schema loads neither pandas nor pyarrow;
:meth:`FrameSchema.dtypes` gives the dtypes themselves. Of the package, this module imports only
the errors (and the lazy proxy); its checks raise :class:`InputError` (a ``ValueError``) naming
the column or shape.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ._dependencies import lazy_import
from .errors import InputError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
else:
    pd = lazy_import("pandas")
    pa = lazy_import("pyarrow")

__all__ = [
    "COMPARE_COLUMNS",
    "COMPARE_DTYPES",
    "COMPARE_LABELS",
    "COUNT",
    "CSV_CURRENT_FIXED",
    "CSV_SIM_COUNT_HEADER",
    "CSV_TIMESERIES_HEADER",
    "CURRENT",
    "DATE",
    "FLOAT",
    "SCHEMAS",
    "SHAPES",
    "SIM_COUNT",
    "STRING",
    "TIMESERIES",
    "TIMESTAMP",
    "FrameSchema",
    "arrow_schema",
    "compared_columns",
    "empty_frame",
    "identifier",
    "schema_for",
    "shape_of",
    "validate_frame",
]

#: Identifiers and names: pandas' ``string`` dtype with pinned pyarrow storage.
STRING: Final = "string[pyarrow]"
#: Timestamps: microseconds, UTC.
TIMESTAMP: Final = "datetime64[us, UTC]"
#: SIM count dates: naive midnight, microseconds.
DATE: Final = "datetime64[us]"
#: Measures.
FLOAT: Final = "float64"
#: Counts that are integral by definition (nullable).
COUNT: Final = "Int64"

#: The columns a comparison with another period adds at the end of a frame (only then):
#: the other period's bucket and value at the same offset, the change from it, and whether a
#: partial or provisional bucket lies on either side.
COMPARE_COLUMNS: Final = (
    "compare_time_stamp",
    "compare_value",
    "change",
    "change_pct",
    "compare_partial",
)
#: The column naming the other period (``period``) or cohort (``cohort``) of each row, before
#: :data:`COMPARE_COLUMNS`, in a frame compared with several (one block of rows each).
COMPARE_LABELS: Final = ("period", "cohort")
#: The dtypes of the comparison's columns, in their order.
COMPARE_DTYPES: Final[dict[str, str]] = {
    "period": STRING,
    "cohort": STRING,
    "compare_time_stamp": TIMESTAMP,
    "compare_value": FLOAT,
    "change": FLOAT,
    "change_pct": FLOAT,
    "compare_partial": "bool",
}

#: The shape names, as found in ``df.attrs["shape"]``.
SHAPES: Final = ("timeseries", "current", "sim_count")

#: Time-series CSV: these columns, then the echoed keys (``account_id``, dimensions).
CSV_TIMESERIES_HEADER: Final = ("time_stamp", "name", "aggregation_type", "value")
#: Current-value CSV: these columns, the metric columns and the echoed keys, in any order.
CSV_CURRENT_FIXED: Final = ("start_time", "end_time")
#: SIM count CSV.
CSV_SIM_COUNT_HEADER: Final = ("date", "physical", "esim")

Column = tuple[str, str]


@functools.cache
def _pandas_dtype(name: str) -> Any:
    """The pandas dtype of a dtype name of this module."""
    return pd.api.types.pandas_dtype(name)


@functools.cache
def _arrow_types() -> dict[str, pa.DataType]:
    """The Arrow type of each dtype name of this module."""
    return {
        STRING: pa.string(),
        TIMESTAMP: pa.timestamp("us", tz="UTC"),
        DATE: pa.timestamp("us"),
        FLOAT: pa.float64(),
        COUNT: pa.int64(),
        "bool": pa.bool_(),
    }


@dataclass(frozen=True)
class FrameSchema:
    """The columns and dtypes of one frame shape.

    Attributes:
        shape: ``"timeseries"``, ``"current"`` or ``"sim_count"``.
        head: the fixed columns before the dimension columns, as ``(name, dtype name)``.
        tail: the fixed columns after the dimension columns.
        has_dimensions: whether dimension columns (all ``string``) sit between head and tail.
        required: the columns that never hold nulls.
    """

    shape: str
    head: tuple[Column, ...]
    tail: tuple[Column, ...]
    has_dimensions: bool
    required: frozenset[str]

    @property
    def fixed(self) -> tuple[str, ...]:
        """Names of the fixed columns (head then tail)."""
        return tuple(name for name, _ in (*self.head, *self.tail))

    def columns(self, dimensions: Sequence[str] = ()) -> list[str]:
        """Return the column names in order, with ``dimensions`` in their slot (see dtypes)."""
        return list(self._dtype_names(dimensions))

    def dtypes(
        self, dimensions: Sequence[str] = (), compared: Sequence[str] = ()
    ) -> dict[str, Any]:
        """Return ``{column: dtype}`` in column order.

        Args:
            dimensions: dimension column names, in order.
            compared: the comparison's columns the frame has (:data:`COMPARE_DTYPES`); they
                come last, in their order.

        Returns:
            The ordered mapping of column name to pandas dtype.

        Raises:
            InputError: for dimensions on a shape without them, duplicate dimensions, or a
                dimension named like a fixed column.
        """
        return {
            name: _pandas_dtype(dtype)
            for name, dtype in self._dtype_names(dimensions, compared).items()
        }

    def _dtype_names(
        self, dimensions: Sequence[str], compared: Sequence[str] = ()
    ) -> dict[str, str]:
        """``{column: dtype name}`` in column order (see dtypes)."""
        dims = self._dims(dimensions)
        out = dict(self.head)
        out.update(dict.fromkeys(dims, STRING))
        out.update(dict(self.tail))
        out.update({c: t for c, t in COMPARE_DTYPES.items() if c in compared})
        return out

    def arrow_schema(
        self, dimensions: Sequence[str] = (), compared: Sequence[str] = ()
    ) -> pa.Schema:
        """Return the pyarrow schema of the frame (for Parquet and ``Table.from_pandas``).

        Args:
            dimensions: dimension column names, in order.
            compared: the comparison's columns the frame has.

        Returns:
            A ``pyarrow.Schema``; columns in ``required`` are not nullable.
        """
        return pa.schema(
            [
                pa.field(name, _arrow_types()[dtype], nullable=name not in self.required)
                for name, dtype in self._dtype_names(dimensions, compared).items()
            ]
        )

    def empty(self, dimensions: Sequence[str] = ()) -> pd.DataFrame:
        """Return an empty frame with every column and dtype, and ``attrs["shape"]`` set."""
        df = pd.DataFrame(
            {name: pd.Series([], dtype=dtype) for name, dtype in self.dtypes(dimensions).items()}
        )
        df.attrs["shape"] = self.shape
        return df

    def dimensions_of(self, df: pd.DataFrame) -> tuple[str, ...]:
        """Return the dimension columns of ``df`` (every column that is not a fixed one, nor
        one of the columns a comparison adds, :data:`COMPARE_DTYPES`)."""
        fixed = {*self.fixed, *COMPARE_DTYPES}
        return tuple(str(c) for c in df.columns if c not in fixed)

    def validate(self, df: pd.DataFrame) -> pd.DataFrame:
        """Check ``df`` against the schema and return it with canonical order and dtypes.

        Columns are put in schema order (dimension columns keep their relative order) and cast
        to the pinned dtypes: numbers in identifier columns become their integer text
        (``919876543210.0`` → ``"919876543210"``), naive timestamps are taken as UTC, others
        are converted to UTC. The columns a comparison adds (:data:`COMPARE_DTYPES`) are kept
        after them. ``attrs`` are kept. A frame that already conforms is returned as an equal
        frame without copying data.

        Args:
            df: the frame to check.

        Returns:
            The conforming frame.

        Raises:
            InputError: when a column is missing, an extra column appears where the shape has
                no dimension columns, a required column holds nulls, or a column cannot be
                converted to its dtype; the message names the column.
        """
        if not isinstance(df, pd.DataFrame):
            raise InputError(f"{self.shape} frame expected, got {type(df).__name__}")
        names = list(df.columns)
        if len(set(names)) != len(names):
            raise InputError(f"{self.shape} frame has duplicate columns: {names}")
        if any(not isinstance(c, str) for c in names):
            raise InputError(f"{self.shape} frame has non-text column names: {names}")
        missing = [c for c in self.fixed if c not in df.columns]
        if missing:
            raise InputError(f"{self.shape} frame lacks column(s) {', '.join(missing)}")
        # a comparison's columns stay at the end, in their dtypes
        dtypes = self._dtype_names(self.dimensions_of(df), compared_columns(df))
        out = {name: _coerce(df[name], name, dtype) for name, dtype in dtypes.items()}
        result = pd.DataFrame(out, index=df.index)
        for name in self.required:
            if bool(result[name].isna().any()):
                raise InputError(f"{self.shape} frame has nulls in required column {name}")
        result.attrs.update(df.attrs)
        result.attrs.setdefault("shape", self.shape)
        return result

    def _dims(self, dimensions: Sequence[str]) -> list[str]:
        dims = [str(d) for d in dimensions]
        if dims and not self.has_dimensions:
            raise InputError(f"{self.shape} frames have no dimension columns, got {dims}")
        fixed = set(self.fixed)
        clash = [d for d in dims if d in fixed]
        if clash:
            raise InputError(f"dimension name(s) {clash} clash with fixed columns")
        if len(set(dims)) != len(dims):
            raise InputError(f"duplicate dimension names: {dims}")
        return dims


TIMESERIES: Final = FrameSchema(
    shape="timeseries",
    head=(("time_stamp", TIMESTAMP), ("account_id", STRING)),
    tail=(("metric", STRING), ("aggregation", STRING), ("percentile", FLOAT), ("value", FLOAT)),
    has_dimensions=True,
    required=frozenset({"time_stamp", "metric"}),
)
CURRENT: Final = FrameSchema(
    shape="current",
    head=(("start_time", TIMESTAMP), ("end_time", TIMESTAMP), ("account_id", STRING)),
    tail=(("metric", STRING), ("aggregation", STRING), ("value", FLOAT), ("value_text", STRING)),
    has_dimensions=True,
    required=frozenset({"start_time", "end_time", "metric"}),
)
SIM_COUNT: Final = FrameSchema(
    shape="sim_count",
    head=(("date", DATE), ("account_id", STRING), ("physical", COUNT), ("esim", COUNT)),
    tail=(),
    has_dimensions=False,
    required=frozenset({"date"}),
)
#: Every schema by shape name.
SCHEMAS: Final[dict[str, FrameSchema]] = {s.shape: s for s in (TIMESERIES, CURRENT, SIM_COUNT)}


def compared_columns(df: pd.DataFrame) -> list[str]:
    """The comparison's columns (:data:`COMPARE_DTYPES`) that ``df`` has, in their order."""
    return [c for c in COMPARE_DTYPES if c in df.columns]


def schema_for(shape: str) -> FrameSchema:
    """Return the schema of a shape.

    Args:
        shape: ``"timeseries"``, ``"current"`` or ``"sim_count"``.

    Returns:
        The :class:`FrameSchema`.

    Raises:
        InputError: for an unknown shape name.
    """
    try:
        return SCHEMAS[shape]
    except (KeyError, TypeError):
        raise InputError(f"unknown frame shape {shape!r}; known: {', '.join(SHAPES)}") from None


def shape_of(df: pd.DataFrame) -> str:
    """Return the shape of a frame: from ``df.attrs["shape"]``, else from its columns.

    Args:
        df: a normalized frame.

    Returns:
        The shape name.

    Raises:
        InputError: when neither the attrs nor the columns tell.
    """
    shape = df.attrs.get("shape")
    if shape in SCHEMAS:
        return str(shape)
    cols = set(df.columns)
    for schema in (TIMESERIES, CURRENT, SIM_COUNT):
        if set(schema.fixed) <= cols:
            return schema.shape
    raise InputError(f"cannot tell the shape of a frame with columns {list(df.columns)}")


def empty_frame(shape: str, dimensions: Sequence[str] = ()) -> pd.DataFrame:
    """Return an empty frame of ``shape`` with the full schema.

    Args:
        shape: the shape name.
        dimensions: dimension column names (time series and current values).

    Returns:
        A frame with no rows, every column and ``attrs["shape"]``.

    Raises:
        InputError: for an unknown shape or dimensions on ``sim_count``.

    Example:
        >>> list(empty_frame("timeseries", ["msisdn"]).columns)[:3]
        ['time_stamp', 'account_id', 'msisdn']
    """
    return schema_for(shape).empty(dimensions)


def arrow_schema(shape: str, dimensions: Sequence[str] = ()) -> pa.Schema:
    """Return the pyarrow schema of ``shape``.

    Args:
        shape: the shape name.
        dimensions: dimension column names.

    Returns:
        The ``pyarrow.Schema``.

    Raises:
        InputError: for an unknown shape or dimensions on ``sim_count``.
    """
    return schema_for(shape).arrow_schema(dimensions)


def validate_frame(df: pd.DataFrame, shape: str | None = None) -> pd.DataFrame:
    """Check a frame against its schema and return it with canonical order and dtypes.

    Args:
        df: the frame.
        shape: the expected shape; by default :func:`shape_of` ``(df)``.

    Returns:
        The conforming frame (see :meth:`FrameSchema.validate`).

    Raises:
        InputError: when the frame does not fit the schema.
    """
    return schema_for(shape if shape is not None else shape_of(df)).validate(df)


_EXACT = 2**53  # float64 holds every integer below this exactly


def identifier(value: object) -> str | None:
    """Return the text of an identifier echoed as a JSON number or string.

    Integral numbers are written without a fraction, so ``919876543210``,
    ``919876543210.0`` and ``"919876543210"`` all give ``"919876543210"``.

    Args:
        value: ``None``, a string, an int, a float or a bool.

    Returns:
        The text, or ``None`` for ``None``, NaN and an empty string (the v2 service echoes an
        unknown ``account_id`` as ``""``; a CSV cell says the same with an empty field).

    Raises:
        InputError: for other types (lists, dicts, ...), and an integral float beyond 2**53
            (its digits are not all known).
    """
    if value is None or isinstance(value, str):
        return value or None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if value.is_integer():
            if not abs(value) < _EXACT:
                # e.g. a JSON integer beyond 64 bits, which orjson reads as a float
                raise InputError("an identifier given as a number beyond 2**53 has lost digits")
            return str(int(value))
        return repr(value)
    raise InputError(f"an identifier must be a string or a number, not {type(value).__name__}")


def _coerce(col: pd.Series, name: str, dtype: str) -> pd.Series:
    """Cast one column to the dtype named ``dtype``; raise InputError naming the column when it
    cannot."""
    if col.dtype == _pandas_dtype(dtype):
        return col
    try:
        if dtype == TIMESTAMP:
            return _to_utc(col)
        if dtype == STRING:
            if col.dtype.kind in "iufb" or col.dtype == object:
                return pd.Series(
                    [identifier(v) if not _isna(v) else None for v in col],
                    index=col.index,
                    dtype=STRING,
                    name=col.name,
                )
            return col.astype(STRING)
        if dtype == DATE:
            conv = pd.to_datetime(col, format="ISO8601") if col.dtype == object else col
            if getattr(conv.dtype, "tz", None) is not None:
                conv = conv.dt.tz_convert("UTC").dt.tz_localize(None)
            return conv.astype(DATE)
        if dtype == COUNT:
            return pd.to_numeric(col).astype(COUNT)
        if dtype == "bool" and col.dtype.kind not in "iufb":  # "True" / "false"
            text = col.astype(str).str.strip().str.lower()
            if not text.isin(("true", "false")).all():
                raise ValueError("values other than true and false")
            return (text == "true").astype(bool)
        out: pd.Series = pd.to_numeric(col).astype(_pandas_dtype(dtype))
        return out
    except (ValueError, TypeError, OverflowError, ArithmeticError) as exc:
        cast = _pandas_dtype(dtype)
        raise InputError(f"column {name} ({col.dtype}) cannot be cast to {cast}: {exc}") from None


def _to_utc(col: pd.Series) -> pd.Series:
    if col.dtype.kind in "OSU" or isinstance(col.dtype, pd.StringDtype):
        col = pd.to_datetime(col.astype(object), format="ISO8601", utc=True)
    if not isinstance(col.dtype, pd.DatetimeTZDtype):
        if col.dtype.kind != "M":
            raise InputError(f"not a timestamp column ({col.dtype})")
        col = col.dt.tz_localize("UTC")
    out: pd.Series = col.dt.tz_convert("UTC").astype(TIMESTAMP)
    return out


def _isna(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))
