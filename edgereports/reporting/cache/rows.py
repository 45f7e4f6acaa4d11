"""The rows of fetched parts against the cache's grid: which chunk each row is in, the rows of
some chunks, the newest bucket, and a part's pieces assembled as one answer would be.

Stamps are read as UTC microseconds from the column's own array (no pandas Series per test):
a pull calls these once or twice per part.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from ..plan import Part
from .grid import Chunk

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

__all__ = [
    "assemble",
    "contiguous_runs",
    "in_run",
    "newest",
    "rows_and_stamps_within",
    "rows_per_chunk",
    "rows_within",
    "stamps_of",
    "within",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def contiguous_runs(missing: list[Chunk]) -> list[list[Chunk]]:
    """Contiguous runs of chunks (one request each)."""
    runs: list[list[Chunk]] = []
    for chunk in missing:
        if runs and runs[-1][-1][1] == chunk[0]:
            runs[-1].append(chunk)
        else:
            runs.append([chunk])
    return runs


def _times(frame: pd.DataFrame) -> pd.Series:
    """The bucket starts of a timeseries or SIM count frame, in UTC."""
    times: pd.Series = (
        frame["time_stamp"] if "time_stamp" in frame.columns else frame["date"].dt.tz_localize(UTC)
    )
    return times


def newest(stamps: np.ndarray) -> datetime | None:
    """The start of the newest bucket of a fetched run, given its rows' ``stamps`` (UTC
    microseconds; None when it holds no row)."""
    if not len(stamps):
        return None
    return _EPOCH + _MICROSECOND * int(stamps.max())


def _micros(frame: pd.DataFrame) -> np.ndarray:
    """The bucket starts of a frame as UTC microseconds since the epoch (int64), read from
    the column's own array: no Series is built (a pandas operation per part costs more than
    the comparisons)."""
    column = frame["time_stamp"] if "time_stamp" in frame.columns else frame["date"]
    array = column.array
    as_unit = getattr(array, "as_unit", None)
    if as_unit is not None:
        values: np.ndarray = as_unit("us").asi8
        return values
    naive = _times(frame).dt.tz_convert(None).to_numpy()
    micros: np.ndarray = naive.astype("datetime64[us]").view("int64")
    return micros


def _epoch_micros(moment: datetime) -> int:
    return (moment.astimezone(UTC) - _EPOCH) // _MICROSECOND


def stamps_of(got: pa.Table) -> np.ndarray:
    """The bucket starts of a fetched part's rows, as UTC microseconds since the epoch."""
    from ...normalize.parts import stamps

    return stamps(got)


def rows_per_chunk(stamps: np.ndarray, starts: Sequence[int], end: int) -> list[int]:
    """The rows in each chunk, given the rows' ``stamps`` (UTC microseconds), the chunks'
    ``starts`` and the ``end`` of the last (epoch seconds; contiguous chunks holding every
    row): one pass, each row's chunk found by division when the chunks are of one length
    (days), else by a binary search of the chunk starts.

    Example:
        >>> import numpy as np
        >>> day = 86_400
        >>> rows_per_chunk(np.array([0, 1, day * 1_000_000]), [0, day], 2 * day)
        [2, 1]
        >>> feb, mar = 28 * day, 31 * day  # months: the last chunk may be the longest
        >>> rows_per_chunk(np.array([0, (feb + 30 * day) * 1_000_000]), [0, feb], feb + mar)
        [1, 1]
    """
    import numpy as np

    if not len(stamps):
        return [0] * len(starts)
    bounds = np.asarray([*starts, end], dtype="int64") * 1_000_000
    steps = np.diff(bounds)
    if bool((steps == steps[0]).all()):
        index = (stamps - bounds[0]) // steps[0]
    else:
        index = np.searchsorted(bounds[:-1], stamps, side="right") - 1
    counts: list[int] = np.bincount(index, minlength=len(starts)).tolist()
    return counts


def within(frame: pd.DataFrame, spans: list[Chunk]) -> pd.DataFrame:
    """The rows whose bucket starts in one of ``spans`` (contiguous runs are one test)."""
    if frame.empty:
        return frame
    stamps = _micros(frame)
    bounds = contiguous_runs(spans)
    runs = [(_epoch_micros(run[0][0]), _epoch_micros(run[-1][1])) for run in bounds]
    # the common case, one run holding every row, is a test of the ends alone
    if len(runs) == 1 and stamps.min() >= runs[0][0] and stamps.max() < runs[0][1]:
        return frame
    mask = None
    for low, high in runs:
        inside = (stamps >= low) & (stamps < high)
        mask = inside if mask is None else mask | inside
    if mask is None or bool(mask.all()):
        return frame
    out = frame[mask].reset_index(drop=True)
    out.attrs = dict(frame.attrs)
    return out


def rows_within(table: pa.Table, spans: list[Chunk]) -> pa.Table:
    """The rows of a fetched part whose bucket starts in one of ``spans``."""
    return rows_and_stamps_within(table, stamps_of(table), spans)[0]


def rows_and_stamps_within(
    table: pa.Table, stamps: np.ndarray, spans: list[Chunk]
) -> tuple[pa.Table, np.ndarray]:
    """The rows of ``table`` (whose bucket starts are ``stamps``) that start in one of
    ``spans``, and their stamps."""
    import numpy as np
    import pyarrow as pa

    keep = np.zeros(len(stamps), dtype=bool)
    for run in contiguous_runs(spans):
        keep |= (stamps >= _epoch_micros(run[0][0])) & (stamps < _epoch_micros(run[-1][1]))
    if bool(keep.all()):
        return table, stamps
    return table.filter(pa.array(keep)), stamps[keep]


def in_run(table: pa.Table, run: list[Chunk]) -> tuple[pa.Table, np.ndarray]:
    """The rows of a fetched run's answer whose buckets lie in the run (the range rule; v1
    stamps), and their stamps (UTC microseconds): the table itself when every row does."""
    from ...normalize.parts import owned

    stamps = stamps_of(table)
    low, high = _epoch_micros(run[0][0]), _epoch_micros(run[-1][1])
    if not len(stamps) or (int(stamps.min()) >= low and int(stamps.max()) < high):
        return table, stamps
    kept = owned([table], [(run[0][0], run[-1][1], False, False)]).table  # runs as slices
    return kept, stamps_of(kept)


def assemble(pieces: list[pa.Table], part: Part, span: tuple[datetime, datetime]) -> pa.Table:
    """The part's owned rows: its pieces in ``[start, end)``, sorted as one answer is (the
    first piece's metadata, and so its attrs, kept)."""
    from ...normalize.parts import in_order, owned

    table = owned(pieces, [(span[0], span[1], False, False)] * len(pieces)).table
    return in_order(table, part.sent.to_request()) if len(pieces) > 1 else table
