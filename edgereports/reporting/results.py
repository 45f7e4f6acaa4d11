"""The results of a pull: the per-report frames of :meth:`fetch_many`, the failed parts, and
the warnings a frame's ``attrs`` call for (:func:`warn_about`)."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import (
    EdgeReportsError,
    EmptyResultWarning,
    PartialBucketWarning,
    PartialFailure,
    TopTalkerWarning,
    caller_stacklevel,
)
from ..query.pinning import top_talker_message
from ..query.terms import Expression
from .plan import Window

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "UNREACHABLE_HINT",
    "Failure",
    "FetchResult",
    "all_failed",
    "describe_empty",
    "describe_failures",
    "describe_partial",
    "settle",
    "settle_periods",
    "warn_about",
]

#: What to do when nothing listens at the reporting address.
UNREACHABLE_HINT = (
    "hint: nothing answers at that address: check EDGEREPORTS_REPORTING_URL (or "
    "--reporting-url), or start a local sandbox with `edgereports sandbox`"
)
#: The failed parts a message names, at most.
_NAMED = 5


@dataclass(frozen=True)
class Failure:
    """One part of a pull that failed.

    Attributes:
        report: the position of the report in the call (0 for :meth:`fetch`).
        request: the failed part's request object (no key in it).
        window: the part's window, or None when the report was sent whole.
        values: the fanned-out ``{dimension: value}`` of the part (empty when none).
        metrics: the part's metric names when the report was split by metric, else None.
        error: the error the part ended with.
        label: how the error's message names the part (its prefix), if it does.

    Example:
        >>> nowhere = er.ReportingClient("my-key", "http://127.0.0.1:9", retries=0)
        >>> result = nowhere.fetch_many([report])  # one part per subscriber, each failed
        >>> [(f.report, dict(f.values), type(f.error).__name__) for f in result.failures][0]
        (0, {'msisdn': '...'}, 'TransportError')
    """

    report: int
    request: Mapping[str, Any]
    window: Window | None
    values: Mapping[str, Expression]
    metrics: tuple[str, ...] | None
    error: BaseException
    label: str = ""

    @property
    def cause(self) -> str:
        """The error's type and message without the part's name: what parts can share."""
        text = str(self.error)
        prefix = f"{self.label}: "
        if self.label and text.startswith(prefix):
            text = text[len(prefix) :]
        return f"{type(self.error).__name__}: {text}"

    @property
    def part(self) -> str:
        """Which part failed, e.g. ``report 0, window 2/4 ..., msisdn=9198...``."""
        items = [f"report {self.report}"]
        if self.window is not None:
            items.append(str(self.window))
        items += [f"{dim}={value}" for dim, value in self.values.items()]
        if self.metrics is not None:
            items.append(f"metrics={','.join(self.metrics)}")
        return ", ".join(items)

    def __str__(self) -> str:
        return f"{self.part}: {type(self.error).__name__}: {self.error}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (what ``df.attrs["failures"]`` holds): no exception object.

        Example:
            >>> sorted(Failure(0, {}, None, {"msisdn": "91"}, None, OSError("x")).to_dict())
            ['error', 'message', 'metrics', 'part', 'report', 'request', 'values', 'window']
        """
        window = None
        if self.window is not None:
            window = [self.window.start.isoformat(), self.window.end.isoformat()]
        status = getattr(self.error, "status_code", None)
        return {
            "report": self.report,
            "part": self.part,
            "window": window,
            "values": dict(self.values),
            "metrics": list(self.metrics) if self.metrics is not None else None,
            "error": type(self.error).__name__,
            "message": str(self.error),
            "request": dict(self.request),
        } | ({"status_code": status} if isinstance(status, int) else {})


def describe_failures(failures: Sequence[Failure], parts: int, *, first_type: bool = True) -> str:
    """One message for the failed parts of a pull: the count, each distinct cause once.

    The first line counts the failures and states the first cause; other causes follow once
    each with their count; when not every part failed, the failed parts are named (the first
    few); a hint ends it where one exists (nothing listens at the address). ``first_type``
    is False when the first cause's type is the raised error's own.
    """
    causes: dict[str, list[Failure]] = {}
    for f in failures:
        causes.setdefault(f.cause, []).append(f)
    first, *others = causes
    shown = first if first_type else first.split(": ", 1)[-1]
    lines = [f"{len(failures)} of {parts} requests failed: {shown}"]
    lines += [f"  and {len(causes[c])} with {c}" for c in others]
    if len(failures) < parts:
        named = "; ".join(f.part for f in failures[:_NAMED])
        more = f"; and {len(failures) - _NAMED} more" if len(failures) > _NAMED else ""
        lines.append(f"  failed parts: {named}{more}")
    if any(getattr(f.error, "unreachable", False) for f in failures):
        lines.append(UNREACHABLE_HINT)
    return "\n".join(lines)


def all_failed(failures: Sequence[Failure], parts: int) -> BaseException:
    """The error to raise when every part of a report failed: the first, told once.

    A single request's error is raised as it is (with the hint when nothing listens at the
    address); for several, an error of the first one's type and attributes whose message is
    :func:`describe_failures`.
    """
    error = failures[0].error
    if parts == 1 and not getattr(error, "unreachable", False):
        return error
    summary = copy.copy(error)  # the same type and attributes, a message of its own
    summary.args = (describe_failures(failures, parts, first_type=False),)
    return summary


@dataclass
class FetchResult:
    """What :meth:`ReportingClient.fetch_many` returns.

    Attributes:
        frames: one frame per report, in order; None for a report none of whose parts
            succeeded (its failures say why).
        failures: every failed part, in plan order.
        parts: per report, how many requests it made.

    Example:
        >>> result = client.fetch_many([report, report.between("2022-06-01", "2022-06-08")])
        >>> this_week, a_month_before = result.frames
        >>> len(this_week), len(a_month_before), result.ok
        (21, 21, True)
    """

    frames: list[pd.DataFrame | None]
    failures: list[Failure] = field(default_factory=list)
    parts: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no part failed."""
        return not self.failures

    def failures_of(self, report: int) -> list[Failure]:
        """The failed parts of report number ``report``."""
        return [f for f in self.failures if f.report == report]


def settle(result: FetchResult, index: int, on_error: str) -> pd.DataFrame:
    """The frame of report ``index`` of a pull, or the error its failed parts make; the
    warnings its ``attrs`` call for are emitted either way.

    With ``on_error="collect"`` a frame some of whose parts failed carries them in
    ``attrs["failures"]``; with ``"raise"`` it travels in a :class:`PartialFailure`.
    """
    frame, failures = result.frames[index], result.failures_of(index)
    error: BaseException | None = None
    if failures and frame is None:
        error = all_failed(failures, result.parts[index])
    elif failures and on_error == "raise":
        error = PartialFailure(
            describe_failures(failures, result.parts[index]), failures=failures, frame=frame
        )
    elif failures and frame is not None:
        frame.attrs["failures"] = [f.to_dict() for f in failures]
    if frame is not None:
        warn_about(frame)
    if error is not None:
        raise error from None
    assert frame is not None
    return frame


def settle_periods(
    result: FetchResult, names: Sequence[str], on_error: str
) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """The frames of a pull of several periods (``compare=``): the report's own (report 0)
    and each other period's (reports 1, 2, ..., named ``names``), each settled
    (:func:`settle`).

    With ``on_error="collect"`` an other period none of whose parts gave rows is an empty
    frame carrying its failures.

    Raises:
        PartialFailure, EdgeReportsError: as :func:`settle`; an other period's failures carry
            a note saying whose they are.
    """
    frame = settle(result, 0, on_error)
    others = []
    for index, name in enumerate(names, start=1):
        try:
            if on_error == "collect" and result.frames[index] is None:  # none of its rows
                other = frame.iloc[0:0].copy()
                other.attrs = {"failures": [f.to_dict() for f in result.failures_of(index)]}
            else:
                other = settle(result, index, on_error)
        except EdgeReportsError as exc:
            exc.add_note(
                f"these failures are of the compared period ({name}, report {index} of the "
                "pull); the report's own period was fetched"
            )
            raise
        others.append(other)
    return frame, others


def describe_partial(frame: pd.DataFrame) -> str | None:
    """One line naming the buckets the range covers only in part, or None.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame()
        >>> df.attrs = {"partial": "keep", "request": {"granularity": "DAY"}, "partial_buckets":
        ...             [{"start": "2022-06-30T00:00:00+00:00", "share": 0.229}]}
        >>> describe_partial(df).split(";")[0]
        'the range covers 1 DAY bucket only in part (2022-06-30T00:00Z: 23%)'
    """
    parts = frame.attrs.get("partial_buckets") or []
    if not parts or frame.attrs.get("partial") == "drop":
        return None
    grain = (frame.attrs.get("request") or {}).get("granularity") or "DAY"
    shown = ", ".join(f"{p['start'].replace(':00+00:00', 'Z')}: {p['share']:.0%}" for p in parts)
    noun = "bucket" if len(parts) == 1 else "buckets"
    return (
        f"the range covers {len(parts)} {grain} {noun} only in part ({shown}); "
        f"{'it is' if len(parts) == 1 else 'they are'} kept whole and count"
        f'{"s" if len(parts) == 1 else ""} time outside the range: pass partial="drop" to '
        "keep whole buckets only"
    )


def describe_empty(frame: pd.DataFrame) -> str | None:
    """One line naming the filters that matched nothing, or None when nothing is empty.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame()
        >>> df.attrs = {"empty": [{"account_id": "A", "msisdn": "91"}],
        ...             "request": {"start_date_time": "2024-06-01", "end_date_time": "2024-06-02"}}
        >>> describe_empty(df)
        'no rows for account_id=A, msisdn=91 from 2024-06-01 to 2024-06-02'
    """
    empty = frame.attrs.get("empty") or []
    if not empty:
        return None
    request = frame.attrs.get("request") or {}
    span = f" from {request.get('start_date_time')} to {request.get('end_date_time')}"
    named = "; ".join(
        ", ".join(f"{k}={_text(v)}" for k, v in item.items()) or "the report" for item in empty
    )
    if len(frame):
        return f"{len(empty)} filter value(s) matched no row{span}: {named}"
    return f"no rows for {named}{span}{_after_present(frame)}"


def _after_present(frame: pd.DataFrame) -> str:
    """``": the range starts after the service's present (...)"`` when it does."""
    clock = frame.attrs.get("clock") or {}
    start = (frame.attrs.get("request") or {}).get("start_date_time")
    try:
        begin, now = datetime.fromisoformat(str(start)), datetime.fromisoformat(clock["now"])
    except (KeyError, TypeError, ValueError):
        return ""
    if begin.tzinfo is None or begin < now:
        return ""
    whose = "the service's present" if clock.get("source") == "service" else "the present"
    return f": the range starts after {whose} ({now.isoformat(timespec='seconds')})"


def _text(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def _aggregations(frame: pd.DataFrame) -> list[str | None]:
    """The aggregations the frame's request asked for (what its top talker's rows are)."""
    metrics = (frame.attrs.get("request") or {}).get("metrics") or []
    return [m.get("aggregation_type") for m in metrics if isinstance(m, dict)]


def warn_about(frame: pd.DataFrame) -> None:
    """Emit the warnings ``frame.attrs`` calls for (top talker, partial buckets, devices not
    on the account, empty results), in that order, naming the caller's line outside the
    package."""
    found: list[tuple[str | None, type[Warning]]] = [
        (describe_partial(frame), PartialBucketWarning),
        (_absent(frame), EmptyResultWarning),
        (describe_empty(frame), EmptyResultWarning),
    ]
    aggregations = _aggregations(frame)
    unpinned = frame.attrs.get("top_talker") or []
    if unpinned:
        found.insert(0, (top_talker_message(unpinned, aggregations), TopTalkerWarning))
    for message, category in found:
        if message:
            warnings.warn(message, category, stacklevel=caller_stacklevel())


def _absent(frame: pd.DataFrame) -> str | None:
    """One line naming the devices not on the account, or None."""
    absent = frame.attrs.get("not_on_account") or []
    if not absent:
        return None
    return (
        f"{', '.join(absent)}: not a device of the account at that time (unknown, or its SIM "
        "not active then): no row"
    )
