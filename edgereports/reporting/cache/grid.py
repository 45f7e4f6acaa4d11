"""The fixed UTC grid of the cache and finality (docs/caching.md).

A chunk is a UTC day for HOUR buckets and a UTC month for DAY buckets (and SIM counts, which
are daily). A chunk that ends before ``now - horizon`` is final; one reaching into the horizon
is provisional (the service still revises it) and is never stored. "Now" is the service's
present, its clock less the lag of its data (see :func:`.trust.final_chunks`).
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from ...errors import ConfigError
from ...query.timegrid import BUCKETS, floor

__all__ = [
    "DEFAULT_HORIZONS",
    "check_data_lag",
    "check_horizon",
    "chunk_of",
    "chunk_starts",
    "chunks",
    "horizon_for",
]

_HOUR = BUCKETS["HOUR"]
_DAY = BUCKETS["DAY"]
#: The default horizon by bucket length: recent data the service may still revise.
DEFAULT_HORIZONS: dict[timedelta, timedelta] = {_HOUR: timedelta(hours=3), _DAY: timedelta(days=2)}

Chunk = tuple[datetime, datetime]


def check_horizon(horizon: object, name: str = "horizon") -> timedelta | None:
    """Return ``horizon`` (None: the default; ``name``: the option, for the message).

    Raises:
        ConfigError: not a ``timedelta``, or negative.
    """
    if horizon is None:
        return None
    if not isinstance(horizon, timedelta):
        raise ConfigError(f"{name} must be a datetime.timedelta or None, got {horizon!r}")
    if horizon < timedelta(0):
        raise ConfigError(f"{name} must not be negative, got {horizon}")
    return horizon


def check_data_lag(lag: object) -> timedelta:
    """Return ``lag``, how far the service's data trails its clock (None: no lag).

    Raises:
        ConfigError: not a ``timedelta``, or negative.
    """
    return check_horizon(lag, "data_lag") or timedelta(0)


def horizon_for(bucket: timedelta, horizon: timedelta | None) -> timedelta:
    """The horizon in force for buckets of ``bucket`` (the chosen one, else the default)."""
    return horizon if horizon is not None else DEFAULT_HORIZONS[bucket]


def chunk_of(moment: datetime, bucket: timedelta) -> Chunk:
    """The chunk of the grid that holds ``moment``."""
    if bucket == _HOUR:
        start = floor(moment, _DAY)
        return start, start + _DAY
    utc = moment.astimezone(UTC)
    start = datetime(utc.year, utc.month, 1, tzinfo=UTC)
    end = datetime(utc.year + utc.month // 12, utc.month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def chunks(start: datetime, end: datetime, bucket: timedelta) -> list[Chunk]:
    """The chunks of the grid that ``[start, end)`` overlaps, in order.

    Example:
        >>> from datetime import datetime, timedelta
        >>> cs = chunks(datetime(2024, 1, 30, tzinfo=UTC), datetime(2024, 3, 2, tzinfo=UTC),
        ...             timedelta(days=1))
        >>> [c[0].strftime("%Y-%m") for c in cs]
        ['2024-01', '2024-02', '2024-03']
    """
    if bucket == _HOUR and start < end:  # days: a long range is thousands of them
        first = chunk_of(start, bucket)[0]
        days = [first + _DAY * i for i in range(-((first - end) // _DAY) + 1)]
        return list(itertools.pairwise(days))
    out: list[Chunk] = []
    moment = start
    while moment < end:
        chunk = chunk_of(moment, bucket)
        out.append(chunk)
        moment = chunk[1]
    return out


def chunk_starts(start: datetime, end: datetime, bucket: timedelta) -> list[int]:
    """The starts (epoch seconds) of :func:`chunks`, without a pair of datetimes per chunk
    (days: a long range is thousands of them, and a warm pull needs only their starts).

    Example:
        >>> from datetime import datetime, timedelta
        >>> chunk_starts(datetime(2024, 1, 1, 5, tzinfo=UTC), datetime(2024, 1, 3, tzinfo=UTC),
        ...              timedelta(hours=1))
        [1704067200, 1704153600]
    """
    if bucket == _HOUR and start < end:
        first = int(chunk_of(start, bucket)[0].timestamp())
        day = int(_DAY.total_seconds())
        return list(range(first, int(end.timestamp()), day))
    return [int(c[0].timestamp()) for c in chunks(start, end, bucket)]
