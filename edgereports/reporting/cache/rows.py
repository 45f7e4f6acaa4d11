"""The rows of fetched parts against the cache's grid: which chunk each row is in, the rows of
some chunks, the newest bucket, and a part's pieces assembled as one answer would be.

Stamps are read as UTC microseconds from the column's own array (no pandas Series per test):
a pull calls these once or twice per part.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..plan import Part
from .grid import Chunk

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from ...normalize.parts import SeriesPart

__all__ = [
    "as_frame",
    "assemble",
    "contiguous_runs",
    "newest",
    "rows_per_chunk",
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


def as_frame(got: pd.DataFrame | SeriesPart) -> pd.DataFrame:
    """A fetched part as a frame (a series part's points built into one)."""
    from ...normalize.parts import SeriesPart

    return got.frame() if isinstance(got, SeriesPart) else got


def newest(got: pd.DataFrame | SeriesPart) -> datetime | None:
    """The start of the newest bucket of a fetched part (None when it holds no row)."""
    from ...normalize.parts import SeriesPart

    if not len(got):
        return None
    if isinstance(got, SeriesPart):
        micros = max(int(b.stamps.max()) for b in got.blocks if len(b.stamps))
    else:
        micros = int(_micros(got).max())
    return _EPOCH + _MICROSECOND * micros


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


def stamps_of(got: pd.DataFrame | SeriesPart) -> np.ndarray:
    """The bucket starts of a fetched part's rows, as UTC microseconds since the epoch."""
    from ...normalize.parts import SeriesPart

    if isinstance(got, SeriesPart):
        return got.stamps()
    return _micros(got)


def rows_per_chunk(stamps: np.ndarray, starts: Sequence[int]) -> list[int]:
    """The rows in each chunk, given the rows' ``stamps`` (UTC microseconds) and the chunks'
    ``starts`` (epoch seconds; sorted chunks, disjoint, holding every row): one pass, each
    row's chunk found by a binary search of the chunk starts."""
    import numpy as np

    if not len(stamps):
        return [0] * len(starts)
    micros = np.asarray(starts, dtype="int64") * 1_000_000
    index = np.searchsorted(micros, stamps, side="right") - 1
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


def assemble(
    pieces: list[pd.DataFrame], part: Part, span: tuple[datetime, datetime], attrs: dict[str, Any]
) -> pd.DataFrame:
    """The part's owned rows: its pieces in ``[start, end)``, sorted as one answer is."""
    from ...normalize.stitching import canonical_order, concat_frames

    request = part.sent.to_request()
    frame = pieces[0] if len(pieces) == 1 else concat_frames(pieces)
    frame = within(frame, [(span[0].astimezone(UTC), span[1].astimezone(UTC))])
    if len(pieces) > 1:
        frame = canonical_order(frame, request)
    frame.attrs.clear()
    frame.attrs.update(attrs)
    return frame
