"""Assembling a pull: decoding each answer, ownership, concatenation and canonical order.

The rules are those of :func:`edgereports.normalize.stitch` (docs/design.md,
"Pulls"), whose two steps the client applies apart: ownership
(:func:`edgereports.normalize.owned_rows`) per part as soon as it is normalized, in the worker
thread, so a part holds only its own rows; then, once over the whole pull, concatenation
(branch by branch, windows in order) and the canonical order of one answer
(:func:`edgereports.normalize.canonical_order`): by series (first appearance), then by the
metric's place in the request, then by time.

A part is a frame, or (a small JSON time series, the common part of a windowed pull) a
:class:`~edgereports.normalize.parts.SeriesPart`: its points as arrays, owned rows kept on
them, and one frame built from every such part at the end (:func:`combine`), with no frame,
copy or sort per part.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import EdgeReportsError, SchemaError
from ..query import Report
from .plan import Part, Window
from .results import Failure, FetchResult
from .rules import in_range, mark, not_on_account, part_in_range, range_rule

if TYPE_CHECKING:
    import pandas as pd

    from ..normalize.parts import SeriesPart
    from .cache import CachedPull

__all__ = [
    "answer_frame",
    "answer_part",
    "as_frame",
    "assemble",
    "assemble_pull",
    "combine",
    "join_parts",
    "owned",
    "parse_json",
]


def parse_json(body: bytes, what: str, redact: Callable[[object], str]) -> Any:
    """Parse a JSON answer; a body that is not JSON is a :class:`SchemaError` naming ``what``."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        shown = body[:120].decode("utf-8", errors="replace")
        error = SchemaError(
            redact(f"{what}: the answer is not valid JSON ({exc}): {shown!r}"),
            where=f"char {exc.pos}",
        )
    raise error  # outside the handler: the decode error (its .doc is the body) is not chained


def answer_frame(
    body: bytes,
    request: dict[str, Any],
    csv: bool,
    what: str,
    redact: Callable[[object], str],
) -> pd.DataFrame:
    """Normalize one answer with the request it was sent with (errors redacted).

    Raises:
        SchemaError: the body is not the JSON (or CSV) of a known shape; names ``what``.
    """
    from ..normalize import read_csv, to_frame

    try:
        if csv:
            return read_csv(body, request)
        head = body.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
        if head not in (b"{", b"["):
            shown = body[:120].decode("utf-8", errors="replace")
            raise SchemaError(f"the answer is not JSON: {shown!r}", where="char 0")
        return to_frame(body, request)
    except SchemaError as exc:
        error = SchemaError(redact(f"{what}: {exc}"), where=redact(exc.where))
    raise error  # outside the handler: the unredacted error is not chained


def answer_part(
    body: bytes, request: Report, what: str, redact: Callable[[object], str]
) -> SeriesPart | None:
    """A small JSON time-series answer as points (no frame); None for any other answer.

    Raises:
        SchemaError: the body is not valid JSON, or a time series with a wrong member; names
            ``what``.
    """
    from ..normalize.parts import read_part

    try:
        return read_part(body, request)
    except SchemaError as exc:
        error = SchemaError(redact(f"{what}: {exc}"), where=redact(exc.where))
    raise error  # outside the handler: the unredacted error is not chained


def as_frame(rows: pd.DataFrame | SeriesPart) -> pd.DataFrame:
    """The frame of a part's owned rows."""
    from ..normalize.parts import SeriesPart

    return rows.frame() if isinstance(rows, SeriesPart) else rows


def join_parts(
    pieces: list[pd.DataFrame | SeriesPart], request: dict[str, Any]
) -> pd.DataFrame | SeriesPart:
    """The owned rows of one window fetched in pieces (in order), as one part."""
    from ..normalize.parts import SeriesPart
    from ..normalize.stitching import canonical_order, concat_frames

    if all(isinstance(p, SeriesPart) for p in pieces):
        parts = [p for p in pieces if isinstance(p, SeriesPart)]
        if len({p.echo_names for p in parts}) == 1:
            return SeriesPart(
                parts[0].echo_names, [b for p in parts for b in p.blocks], parts[0].req
            )
    return canonical_order(concat_frames([as_frame(p) for p in pieces]), request)


def owned(
    frame: pd.DataFrame | SeriesPart, window: Window | None, *, stamps_at_end: bool = False
) -> pd.DataFrame | SeriesPart:
    """The rows of ``frame`` (one window's answer) that the window owns.

    Args:
        frame: a normalized answer.
        window: the window it answers, or None for a report sent whole.
        stamps_at_end: the answer stamps each piece at its end (v2), so the window owns the
            stamps in ``(start, end]`` instead of ``[start, end)``.

    Returns:
        ``frame`` itself when it owns every row, else the owned rows
        (:func:`edgereports.normalize.owned_rows`).
    """
    from ..normalize.parts import SeriesPart
    from ..normalize.stitching import owned_rows

    if window is None:
        return frame
    last = window.index == window.count - 1
    if isinstance(frame, SeriesPart):
        first = window.index == 0
        return frame.owned(window.start, window.end, first=first, last=last, right=stamps_at_end)
    return owned_rows(
        frame,
        window.start,
        window.end,
        first=window.index == 0,
        last=last,
        closed="right" if stamps_at_end else "left",
    )


def combine(
    frames: list[pd.DataFrame | SeriesPart], request: dict[str, Any], ordered: bool
) -> pd.DataFrame:
    """Concatenate the owned parts of one report and sort them as one answer would be.

    ``frames`` is emptied as soon as the parts are concatenated, so that their memory goes
    before the rows are sorted.

    Args:
        frames: the parts' frames, branch by branch, windows in order (consumed).
        request: the report's request: its metric order ranks the metrics.
        ordered: the frames are one answer (already in order).

    Returns:
        The frame; its ``attrs`` are those of the first part.
    """
    from ..normalize.parts import SeriesPart, build_parts
    from ..normalize.stitching import canonical_order, concat_frames

    if all(isinstance(f, SeriesPart) for f in frames):
        built = build_parts([f for f in frames if isinstance(f, SeriesPart)], request)
        if built is not None:
            frames.clear()
            return built
    frame = concat_frames([as_frame(f) for f in frames])
    frames.clear()
    return frame if ordered else canonical_order(frame, request)


def assemble(
    plan: list[list[Part]], outcomes: list[Any], request: dict[str, Any], report: Report
) -> tuple[pd.DataFrame | None, list[Failure]]:
    """Concatenate the owned rows of every part (branch by branch, windows in order), sorted
    as one answer would be; a failed part contributes no row and one failure.

    The frame then keeps the buckets inside the report's range and says what it is
    (:func:`edgereports.reporting.rules.mark`: top talkers, empty results, dropped buckets).
    ``outcomes`` (per part its frame or its error) is emptied once read: the parts' frames
    are released as soon as they are concatenated.
    """
    from ..normalize.parts import SeriesPart

    failures: list[Failure] = []
    frames = []
    empty_values: list[dict[str, Any]] = []
    at = 0
    dropped = 0
    rule = range_rule(report)
    for branch in plan:
        rows, failed = 0, False
        for part, result in zip(branch, outcomes[at : at + len(branch)], strict=True):
            if isinstance(result, BaseException):
                failures.append(_failure(part, result))
                failed = True
            else:
                rows += len(result)
                if isinstance(result, SeriesPart):  # the range rule on its points: no copy
                    result, gone = part_in_range(result, rule)
                    dropped += gone
                frames.append(result)
        at += len(branch)
        values = dict(branch[0].fan.values) if branch else {}
        if values and not rows and not failed and values not in empty_values:
            empty_values.append(values)
    outcomes.clear()
    if not frames:
        return None, failures
    ruled = all(isinstance(f, SeriesPart) for f in frames)  # the range rule already ran
    frame = combine(frames, request, ordered=at == 1)
    if not ruled:
        frame, gone = in_range(frame, rule)
        dropped += gone
    frame.attrs["request"] = copy.deepcopy(request)
    frame, absent = not_on_account(frame, report)
    mark(frame, report, dropped, empty_values, absent)
    return frame, failures


def assemble_pull(
    plans: Sequence[list[list[Part]]],
    outcomes: list[Any],
    requests: Sequence[dict[str, Any]],
    reports: Sequence[Report],
    pull: CachedPull | None,
) -> tuple[FetchResult, list[int]]:
    """The frame of each report of a pull (:func:`assemble`), and its number of parts.

    Args:
        plans: per report, its parts (branch by branch, windows in order).
        outcomes: per part of every report, in that order, its rows or its error (emptied
            report by report, so that each report's parts go once its frame is made).
        requests: per report, its request.
        reports: the reports.
        pull: the pull's cache, if any (its ``attrs`` go on each frame).
    """
    result = FetchResult(frames=[])
    counts = []
    offset = 0
    for plan, request, report in zip(plans, requests, reports, strict=True):
        size = sum(len(b) for b in plan)
        mine = outcomes[offset : offset + size]
        outcomes[offset : offset + size] = [None] * size  # assemble releases the frames
        offset += size
        frame, failures = assemble(plan, mine, request, report)
        if frame is not None and report.api_version == "v2":
            frame.attrs["api_version"] = "v2"  # stamps are the ends of pieces
        if frame is not None and pull is not None:
            frame.attrs["cache"] = pull.attrs(len(result.frames))
        result.frames.append(frame)
        result.failures.extend(failures)
        counts.append(size)
    return result, counts


def _failure(part: Part, error: BaseException) -> Failure:
    try:
        sent = part.sent.to_request()
    except EdgeReportsError:  # pragma: no cover - validated before sending
        sent = {}
    return Failure(
        report=part.report,
        request=sent,
        window=part.window,
        values=dict(part.fan.values),
        metrics=part.fan.metrics,
        error=error,
        label=str(part),
    )
