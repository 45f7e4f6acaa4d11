"""The known names of the report request (documented, and seen live), and checks against them.

The service's vocabularies are open: a name outside these lists passes with a
:class:`VocabularyWarning` (an error under ``strict=True``); a near miss of a known name gets a
"did you mean" hint.
"""

from __future__ import annotations

import contextlib
import difflib
import re
import warnings
from collections.abc import Collection, Iterator, Sequence
from contextvars import ContextVar

from ..errors import QueryError, VocabularyWarning, caller_stacklevel

__all__ = [
    "AGGREGATIONS",
    "DIMENSIONS",
    "FILTER_DIMENSIONS",
    "GRANULARITIES",
    "METRICS",
    "METRIC_FILTER_OPERATORS",
    "OPERATORS",
    "RESERVED_COLUMNS",
    "VocabularyWarning",
    "check_known",
    "check_name",
    "check_token",
    "quiet",
    "suggest",
]

#: Metric names, then those the live service answers beyond its documentation.
METRICS = (
    "time_usage_seconds",
    "uplink_bytes",
    "downlink_bytes",
    "uplink_bandwidth",
    "downlink_bandwidth",
    "ue_connections",
    "sim",
    "ue_online_status",
    "packet_latency",
    "jitter",
    "packet_loss",
)
#: Dimensions one can group by.
DIMENSIONS = ("msisdn", "imsi", "customer_site_id", "enodeb_ip", "ue_ip", "lr_id")
#: Dimensions seen in filters, plus the groupable ones.
FILTER_DIMENSIONS = ("account_id", *DIMENSIONS)
GRANULARITIES = ("DAY", "HOUR")
AGGREGATIONS = ("COUNT", "AVG", "MAX", "MIN", "EXISTS")
OPERATORS = ("EXACT",)
METRIC_FILTER_OPERATORS = ("PERCENTILE",)
#: The fixed columns of the three frames (schema.py) that are not echoed keys: a dimension
#: cannot take one of these names, since its column would clash with the frame's own.
RESERVED_COLUMNS = (
    "time_stamp",
    "start_time",
    "end_time",
    "date",
    "metric",
    "aggregation",
    "percentile",
    "value",
    "value_text",
    "physical",
    "esim",
)

_QUIET: ContextVar[bool] = ContextVar("edgereports_quiet_vocabulary", default=False)

_UPPER_TOKEN = re.compile(r"[A-Z][A-Z0-9_]*")


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Within the block (this thread or task only), unknown names pass without a warning.

    For reading a request that was already checked when it was built (the normalizer reads
    the request of every answer); ``strict`` still raises.
    """
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)


def suggest(value: str, known: Collection[str]) -> str:
    """Return ``"; did you mean 'x'?"`` for the closest known name, or ``""``."""
    close = difflib.get_close_matches(value, list(known), n=1, cutoff=0.6)
    if not close:
        close = [k for k in known if k.lower() == value.lower()]
    return f"; did you mean {close[0]!r}?" if close else ""


def check_known(
    word: str,
    field: str,
    known: Collection[str],
    *,
    strict: bool,
    what: str = "name",
    shown: str | None = None,
) -> None:
    """Refuse a word outside a vocabulary under ``strict``, else warn that it is sent as given.

    Messages name ``field`` and call the word a ``what`` (``"name"``, ``"time keyword"``),
    shown as the caller wrote it (``shown``, default ``word``) with the nearest known word.

    Raises:
        QueryError: ``word`` is unknown under ``strict``.
    """
    if word in known:
        return
    given = word if shown is None else shown
    message = (
        f"{field} {given!r} is not a known {what} (known: {', '.join(known)}){suggest(word, known)}"
    )
    if strict:
        raise QueryError(message, field=field)
    if _QUIET.get():
        return
    level = caller_stacklevel()
    warnings.warn(message + "; sending it as given", VocabularyWarning, stacklevel=level)


def check_name(value: object, field: str, known: Collection[str], *, strict: bool) -> str:
    """Check a name against a vocabulary (:func:`check_known`); returns it unchanged.

    Raises:
        QueryError: ``value`` is not a non-empty string, or is unknown under ``strict``.
    """
    if not isinstance(value, str) or not value.strip():
        raise QueryError(f"{field} must be a non-empty string, got {value!r}", field=field)
    if value != value.strip():
        raise QueryError(f"{field} has surrounding spaces: {value!r}", field=field)
    check_known(value, field, known, strict=strict)
    return value


def check_token(value: object, field: str, known: Sequence[str], *, strict: bool) -> str:
    """Check an upper-case token (granularity, aggregation type, operator).

    Raises:
        QueryError: ``value`` is not a non-empty upper-case token, or is unknown under
            ``strict``.
    """
    if not isinstance(value, str) or not _UPPER_TOKEN.fullmatch(value):
        hint = ""
        if isinstance(value, str) and _UPPER_TOKEN.fullmatch(value.strip().upper()):
            hint = f"; did you mean {value.strip().upper()!r}?"
        examples = " or ".join(repr(k) for k in known[:3])
        raise QueryError(
            f"{field} must be a non-empty upper-case token such as {examples}, got {value!r}{hint}",
            field=field,
        )
    return check_name(value, field, known, strict=strict)
