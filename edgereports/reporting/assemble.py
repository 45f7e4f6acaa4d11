"""Assembling a pull: each report's rows owned, combined, ordered and marked, once.

Per report, each part's Arrow table keeps the rows its window owns (the time grid's one rule,
which is also the range rule: ``df.attrs["dropped_after_end"]`` counts what it drops), the
tables are joined in the canonical order of one answer (:mod:`edgereports.normalize.parts`),
and :mod:`.rules` marks the frame. See docs/design.md, "Pulls".
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import EdgeReportsError, SchemaError
from ..normalize.parts import Rows, frame_of, in_order, owned, read_rows
from ..redaction import redacted_excerpt
from .plan import Part, Plan, ReportFacts, Window
from .results import Failure, FetchResult
from .rules import mark

if TYPE_CHECKING:
    import pandas as pd

    from .cache import CachedPull

__all__ = ["answer_rows", "assemble", "assemble_pull", "parse_json"]


def parse_json(body: bytes, what: str, redact: Callable[[object], str]) -> Any:
    """Parse a JSON answer; a body that is not JSON is a :class:`SchemaError` naming ``what``."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        # redacted before it is cut (no head of a secret at the cut) and quoted (repr escapes)
        shown = redacted_excerpt(body.decode("utf-8", errors="replace"), 120, redact)
        error = SchemaError(
            redact(f"{what}: the answer is not valid JSON ({exc}): {shown!r}"),
            where=f"char {exc.pos}",
        )
    raise error  # outside the handler: the decode error (its .doc is the body) is not chained


def answer_rows(
    body: bytes, request: Any, csv: bool, what: str, redact: Callable[[object], str]
) -> Rows:
    """One answer's rows (:func:`edgereports.normalize.parts.read_rows`, errors redacted).

    Raises:
        SchemaError: the body is not the JSON (or CSV) of a known shape; names ``what``.
    """
    try:
        return read_rows(body, request, csv=csv)
    except SchemaError as exc:
        error = SchemaError(redact(f"{what}: {exc}"), where=redact(exc.where))
    raise error  # outside the handler: the unredacted error is not chained


def assemble_pull(
    plans: Sequence[Plan],
    outcomes: list[Any],
    pull: CachedPull | None,
    clock: tuple[datetime, str],
    partial: str,
) -> FetchResult:
    """The frame of each report of a pull (:func:`assemble`).

    ``outcomes`` holds per part of every report, in plan order, its rows or its error; it is
    emptied report by report, so that each report's parts go once its frame is made.
    """
    result = FetchResult(frames=[])
    offset = 0
    for index, plan in enumerate(plans):
        size = len(plan.parts)
        mine = outcomes[offset : offset + size]
        outcomes[offset : offset + size] = [None] * size  # assemble releases the rows
        offset += size
        cache = None if pull is None else pull.attrs(index)
        frame, failures = assemble(plan, mine, cache, clock, partial)
        result.frames.append(frame)
        result.failures.extend(failures)
        result.parts.append(size)
    return result


def assemble(
    plan: Plan,
    outcomes: list[Any],
    cache: dict[str, Any] | None,
    clock: tuple[datetime, str],
    partial: str,
) -> tuple[pd.DataFrame | None, list[Failure]]:
    """One report's frame: the rows each part owns (branch by branch, windows in order),
    sorted as one answer would be and marked by the rules; a failed part contributes no row
    and one failure.

    ``outcomes`` (per part its rows or its error) is emptied once read: the parts' rows are
    released as soon as they are joined.
    """
    facts = plan.facts
    failures: list[Failure] = []
    tables, runs, owners, last = [], [], [], []
    empty_values: list[dict[str, Any]] = []
    results = iter(outcomes)
    for branch in plan.branches:
        rows, failed = 0, False
        for part, got in zip(branch, results, strict=False):  # one iterator: branch by branch
            if isinstance(got, BaseException):
                failures.append(_failure(part, got))
                failed = True
                continue
            window = _owner(part, facts)
            owners.append(
                None if window is None else (window.start, window.end, window.index == 0, False)
            )
            last.append(window is not None and window.index == window.count - 1)
            table, lengths = got.built()
            tables.append(table)
            runs.append(lengths)
            rows += table.num_rows
        values = dict(branch[0].fan.values) if branch else {}
        if values and not rows and not failed and values not in empty_values:
            empty_values.append(values)
    outcomes.clear()
    if not tables:
        return None, failures
    table, after, starts = owned(tables, owners, at_end=facts.at_end, runs=runs)
    tables.clear()
    if len(plan.parts) > 1:
        table = in_order(table, facts.request, starts)
    frame = frame_of(table)
    frame.attrs["request"] = copy.deepcopy(facts.request)
    if facts.at_end:
        frame.attrs["api_version"] = "v2"  # stamps are the ends of pieces
    if cache is not None:
        frame.attrs["cache"] = cache
    dropped = sum(n for n, end in zip(after, last, strict=True) if end)
    return mark(frame, facts, dropped, empty_values, clock, partial), failures


def _owner(part: Part, facts: ReportFacts) -> Window | None:
    """The window whose rows ``part`` keeps: its own, or the report's range for a part sent
    whole; the last owns nothing at or after the report's end (the range rule). None when the
    report's rows are not buckets: every row is kept."""
    if facts.bucket is None or facts.span is None:
        return None
    return part.window or Window(*facts.span)


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
