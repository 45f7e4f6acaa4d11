"""Other outputs of a frame: a ``pyarrow.Table`` with the pinned schema, a polars frame,
:func:`provenance`, which reads what the pull recorded from any of them, and
:func:`as_pandas`, which turns any of them back into the pandas frame.

The frames are Arrow-backed (strings are ``ArrowStringArray`` chunks, numbers and stamps
numpy arrays), so :func:`to_arrow` wraps their buffers: string and number columns are not
copied again (text gets 32-bit offsets, computed once for a chunk that repeats, as a constant
column's one does). The provenance that pandas keeps in ``df.attrs`` (request, shape, source,
top_talker, dropped, cache, failures) travels in the Arrow schema's metadata under the key
``edgereports``, as JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

import orjson

from .._dependencies import lazy_import
from ..errors import ConfigError, InputError
from ..schema import STRING, compared_columns, schema_for, shape_of

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl
    import pyarrow as pa
else:
    pd = lazy_import("pandas")
    pa = lazy_import("pyarrow")

__all__ = [
    "METADATA_KEY",
    "OUTPUTS",
    "Output",
    "as_pandas",
    "convert",
    "provenance",
    "to_arrow",
    "to_polars",
]

Output = Literal["pandas", "arrow", "polars"]
#: The accepted values of ``output=``.
OUTPUTS: Final = ("pandas", "arrow", "polars")
#: The Arrow schema metadata key that holds the provenance (JSON).
METADATA_KEY: Final = b"edgereports"
_POLARS_ATTR = "_edgereports_provenance"
POLARS_HINT = "output='polars' needs polars: pip install 'edgereports[polars]'"


def check_output(output: object) -> Output:
    """Return ``output`` when it is one of :data:`OUTPUTS`.

    Raises:
        InputError: any other value (names the allowed ones).
    """
    if output not in OUTPUTS:
        raise InputError(f"output must be one of {', '.join(map(repr, OUTPUTS))}, got {output!r}")
    return output


def to_arrow(df: pd.DataFrame) -> pa.Table:
    """The frame as a ``pyarrow.Table`` with the pinned Arrow schema and its provenance.

    Args:
        df: a frame of :mod:`edgereports.schema` (timeseries, current or sim_count), with the
            comparison's columns when it has them.

    Returns:
        The table; ``provenance(table)`` gives ``df.attrs``.

    Example:
        >>> import edgereports as er
        >>> df = er.to_frame({"result": [[{"time_stamp": "2022-07-07T00:00:00Z",
        ...     "name": "sim", "value": 3, "aggregation_type": "COUNT"}]]})
        >>> to_arrow(df).schema.field("value").type
        DataType(double)
    """
    shape = df.attrs.get("shape") or shape_of(df)
    frame = schema_for(shape)
    schema = frame.arrow_schema(frame.dimensions_of(df), compared_columns(df))
    columns = [_column(df[f.name], f.type) for f in schema]
    meta = {METADATA_KEY: orjson.dumps(dict(df.attrs), default=str)}
    return pa.table(columns, schema=schema.with_metadata(meta))


def _column(series: pd.Series, kind: pa.DataType) -> pa.ChunkedArray | pa.Array:
    """One column in its pinned Arrow type; a text column's buffers are reused (a chunk that
    repeats, as a constant column's does, is converted once)."""
    if not (pa.types.is_string(kind) and isinstance(series.dtype, pd.StringDtype)):
        return pa.array(series, type=kind, from_pandas=True)
    text = pa.chunked_array(pa.array(series))  # the frame's own large_string chunks
    done: dict[tuple[int, int, int], pa.Array] = {}
    chunks = []
    for chunk in text.chunks:
        key = (chunk.buffers()[1].address, chunk.offset, len(chunk))
        if key not in done:
            done[key] = chunk.cast(kind)
        chunks.append(done[key])
    return pa.chunked_array(chunks, type=kind)


def to_polars(df: pd.DataFrame) -> pl.DataFrame:
    """The frame as a polars ``DataFrame`` (through Arrow, no second copy of the columns).

    Raises:
        ConfigError: polars is not installed (names the pip command).
    """
    out: pl.DataFrame = convert(df, "polars")
    return out


def convert(df: pd.DataFrame, output: Output) -> Any:
    """The frame in the ``output`` form: pandas (itself), ``"arrow"`` or ``"polars"``.

    Raises:
        ConfigError: polars is asked for and not installed (names the pip command).
    """
    if output == "pandas":
        return df
    table = to_arrow(df)
    if output == "arrow":
        return table
    try:
        import polars as pl
    except ImportError:
        raise ConfigError(POLARS_HINT) from None
    out = pl.from_arrow(table)
    assert isinstance(out, pl.DataFrame)
    setattr(out, _POLARS_ATTR, dict(df.attrs))  # polars frames have no metadata of their own
    return out


def as_pandas(data: Any, what: str = "as_pandas") -> pd.DataFrame:
    """A frame in any output form as the pandas frame, its provenance in ``attrs``.

    A pandas frame is returned as it is; a ``pyarrow.Table`` or a polars frame (from
    ``output="arrow"``/``"polars"``) becomes the frame that ``output="pandas"`` gives, with the
    pinned dtypes and what :func:`provenance` reads of it in ``attrs``.

    Args:
        data: a pandas DataFrame, a ``pyarrow.Table`` or a polars DataFrame.
        what: the caller's name, for the message.

    Raises:
        InputError: ``data`` is none of these, or not a frame of a known shape.

    Example:
        >>> import edgereports as er
        >>> df = er.to_frame({"result": [[{"time_stamp": "2022-07-07T00:00:00Z",
        ...     "name": "sim", "value": 3, "aggregation_type": "COUNT"}]]})
        >>> back = as_pandas(to_arrow(df))
        >>> back.equals(df), back.attrs == df.attrs
        (True, True)
    """
    from ..schema import validate_frame

    if isinstance(data, pd.DataFrame):
        return data
    if type(data).__module__.startswith("polars") and hasattr(data, "to_arrow"):
        table = data.to_arrow()
    elif isinstance(data, pa.Table):
        table = data
    else:
        package = type(data).__module__.split(".")[0]
        kind = type(data).__name__ if package == "builtins" else f"{package}.{type(data).__name__}"
        raise InputError(
            f"{what} needs a pandas DataFrame, a pyarrow.Table or a polars DataFrame, got {kind}"
        )
    text = pd.api.types.pandas_dtype(STRING)
    mapping = {pa.string(): text, pa.large_string(): text, pa.string_view(): text}
    frame = table.to_pandas(types_mapper=mapping.get)
    frame.attrs = provenance(data)
    return validate_frame(frame)


def provenance(data: Any) -> dict[str, Any]:
    """What a pull recorded about a result, for every output form.

    Reads ``df.attrs`` of a pandas frame, the ``edgereports`` schema metadata of a
    ``pyarrow.Table``, or what :func:`edgereports.fetch` attached to a polars frame (a frame
    derived from it by a polars operation has none). Keys, where known: ``request`` (the
    request, no key in it), ``shape``, ``source``, ``top_talker``, ``dropped``, ``cache``,
    ``failures``.

    Args:
        data: a pandas DataFrame, a ``pyarrow.Table`` or a polars DataFrame.

    Returns:
        A new dict (empty when nothing was recorded).

    Raises:
        InputError: ``data`` is none of these.

    Example:
        >>> import edgereports as er
        >>> df = er.to_frame({"result": []}, request=None)
        >>> er.provenance(df)["shape"], er.provenance(to_arrow(df))["shape"]
        ('timeseries', 'timeseries')
    """
    if isinstance(data, pd.DataFrame):
        return {str(k): v for k, v in data.attrs.items()}
    if isinstance(data, pa.Table):
        raw = (data.schema.metadata or {}).get(METADATA_KEY)
        return dict(orjson.loads(raw)) if raw else {}
    if type(data).__module__.startswith("polars"):
        found = getattr(data, _POLARS_ATTR, None)
        return dict(found) if isinstance(found, Mapping) else {}
    raise InputError(
        "provenance() takes a pandas DataFrame, a pyarrow.Table or a polars DataFrame, "
        f"got {type(data).__name__}"
    )
