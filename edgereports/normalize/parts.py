"""Small time-series answers kept as blocks, and one frame built from the blocks of a pull.

A pull of many small answers (a window of one fan-out value each) pays little for parsing but
much for a pandas frame per answer, for taking each frame's owned rows and for concatenating
and sorting the frames again. Here an answer under :data:`~.api.ARROW_MIN_BYTES` is read into
the reader's blocks (numpy stamps and values per series and metric entry, no frame), a window
keeps its rows on those arrays (:meth:`SeriesPart.owned`), and :func:`build_parts` builds one
frame from every part at the end, through the same builder as :func:`~.api.to_frame`, so the
frame is that of the answers normalized one by one, owned rows kept, concatenated and put in
canonical order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..query.timegrid import epoch_micros, owned_mask
from . import _arrowjson
from ._request import RequestInfo, request_info
from .api import ARROW_MIN_BYTES
from .detect import detect_shape, first_byte, parse_json
from .reporting_service import is_service_answer, service_request
from .timeseries import Block, build, build_table, dimensions, read_blocks

__all__ = ["SeriesPart", "build_parts", "read_part"]

#: Answers of at least this size are parsed by pyarrow, which leaves the GIL while it parses, so
#: the answers of a pull's threads are read at once; smaller ones cost less through orjson.
PART_ARROW_MIN_BYTES = 64 * 1024
#: The attrs of a part's frame.
_ATTRS: dict[Hashable, Any] = {"shape": "timeseries", "source": "json"}


@dataclass
class SeriesPart:
    """The points of one small time-series answer, as blocks (no frame).

    Attributes:
        echo_names: the echoed keys, ``account_id`` always among them (from the answer, else
            from the request it answers).
        blocks: the points per series and metric entry, in the reader's order.
        req: the request the answer was sent with.
    """

    echo_names: tuple[str, ...]
    blocks: list[Block]
    req: RequestInfo | None

    def __len__(self) -> int:
        return sum(len(b.stamps) for b in self.blocks)

    def owned(
        self, start: datetime, end: datetime, *, first: bool, last: bool, right: bool = False
    ) -> SeriesPart:
        """The points whose stamp lies in ``[start, end)`` (``(start, end]`` with ``right``);
        the first window also keeps what lies before, the last what lies after (the rule of
        :func:`~.stitch.owned_rows`).

        A block's kept points are a view of its arrays when they are one run (as when its
        stamps are in order), so trimming the end of a range copies no point.
        """
        if first and last:
            return self
        low, high = epoch_micros(start), epoch_micros(end)
        blocks = []
        stamps: np.ndarray | None = None
        for b in self.blocks:
            if b.stamps is not stamps:  # the metrics of a series share their stamps
                stamps = b.stamps
                keep = owned_mask(stamps, low, high, first=first, last=last, at_end=right)
                whole = keep is None or bool(keep.all())
                some = whole or bool(keep.any())
            if whole:
                blocks.append(b)
            elif some:
                blocks.append(_kept(b, keep))
        return SeriesPart(self.echo_names, blocks, self.req)

    def frame(self) -> pd.DataFrame:
        """The frame :func:`~.api.to_frame` gives for these points (``attrs`` without the
        request)."""
        out = build(self.blocks, self.echo_names, self.req)
        out.attrs = dict(_ATTRS)
        return out

    @staticmethod
    def frame_attrs() -> dict[str, Any]:
        """The ``attrs`` of :meth:`frame`."""
        return {str(k): v for k, v in _ATTRS.items()}

    def table(self) -> pa.Table:
        """The Arrow table of :meth:`frame` (as ``pa.Table.from_pandas(self.frame(),
        preserve_index=False)`` gives it), built without the frame."""
        return build_table(self.blocks, self.echo_names, self.req, self.frame_attrs())

    def stamps(self) -> np.ndarray:
        """Every point's stamp (int64 microseconds, UTC), block after block."""
        if not self.blocks:
            return np.empty(0, dtype=np.int64)
        return np.concatenate([b.stamps for b in self.blocks]).astype(np.int64, copy=False)


def read_part(
    body: bytes, request: Any, *, arrow_min_bytes: int | None = PART_ARROW_MIN_BYTES
) -> SeriesPart | None:
    """Read a small JSON time-series answer into blocks; None for anything else.

    Args:
        body: the answer's bytes.
        request: the request it answers (a ``Report`` or its dict).
        arrow_min_bytes: bodies of at least this size are parsed by pyarrow first (None: never).

    Returns:
        The part, or None when the body is large, not a JSON object, not a time series or an
        answer of the v2 reporting service: :func:`~.api.to_frame` reads those.

    Raises:
        SchemaError: the body is not valid JSON, or a time series with a wrong member (the
            error :func:`~.api.to_frame` raises for the same body).
    """
    if len(body) >= ARROW_MIN_BYTES or service_request(request) is not None:
        return None
    if body.startswith(b"\xef\xbb\xbf"):
        body = body[3:]
    if first_byte(body) != b"{":
        return None
    req = request_info(request, raw=False)
    arrow = arrow_min_bytes is not None and len(body) >= arrow_min_bytes
    read = _arrowjson.read_blocks(body) if arrow else None
    if read is None:
        obj = parse_json(body)
        if not isinstance(obj, dict) or not obj or is_service_answer(obj):
            return None
        if detect_shape(obj, req) != "timeseries":
            return None
        read = read_blocks(obj, owned=True)
    blocks, names = read
    dimensions(names, req)  # the checks of the echoed keys, as to_frame makes them
    # the account is kept with the points: the report's own filter may name several
    account = req.account_id if req is not None else None
    if "account_id" not in names:
        names.append("account_id")
        blocks = [dataclasses.replace(b, echo=(*b.echo, account)) for b in blocks]
    elif account is not None:
        k = names.index("account_id")
        for b in blocks:
            if b.echo[k] is None:
                b.echo = (*b.echo[:k], account, *b.echo[k + 1 :])
    return SeriesPart(tuple(names), blocks, req)


def build_parts(parts: Sequence[SeriesPart], request: Any) -> pd.DataFrame | None:
    """One frame of the parts of one report (fan-out values and windows in order), sorted as
    one answer would be; None when the parts echo different keys (then build their frames).

    Args:
        parts: the parts, branch by branch, windows in order; every part answers the report
            with all of its metrics (no split by metric).
        request: the report's request: its metrics rank the series' entries.

    Returns:
        The frame (``attrs``: shape and source), or None.
    """
    names = {p.echo_names for p in parts}
    if len(names) != 1:
        return None
    out = build([b for p in parts for b in p.blocks], next(iter(names)), request_info(request))
    out.attrs = {"shape": "timeseries", "source": "json"}
    return out


def _kept(block: Block, keep: np.ndarray) -> Block:
    """The points of ``block`` that ``keep`` marks (some, not all): views of its arrays when
    they are one run, else copies."""
    where = np.flatnonzero(keep)
    first, stop = int(where[0]), int(where[-1]) + 1
    if stop - first == len(where):
        rows = (block.rows[0] + first, block.rows[0] + stop) if block.rows else None
        return dataclasses.replace(
            block, stamps=block.stamps[first:stop], values=block.values[first:stop], rows=rows
        )
    return dataclasses.replace(
        block, stamps=block.stamps[keep], values=block.values[keep], rows=None
    )
