"""Answers of the reporting endpoint, computed from the synthetic network.

The semantics are docs/sandbox.md's ("Reporting semantics"); ``metrics.py`` says what each
metric and aggregation means. Scope: the devices of the account that pass every filter (for
``NOW``, only those whose SIM is active then). With dimensions, an answer speaks for one
*element* at the finest grouped grain (device, eNodeB or site): the one the filters pin down,
or else the top talker (most bytes in the range; lowest index on ties). The clock is the
present: what has happened is the 5-minute UTC slots that ended at or before it.
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from ..model.accumulate import Accumulated, accumulate
from ..model.activity import SLOT
from ..model.network import Network
from ..problems import ApiProblem
from .metrics import bases_of, values
from .request import KEYWORDS, MetricSpec, ReportQuery

__all__ = ["CurrentAnswer", "SeriesAnswer", "SeriesArray", "SimAnswer", "answer"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

_DEVICE_DIMS = ("msisdn", "imsi", "ue_ip", "lr_id")
MAX_POINTS = 500_000
MAX_DEVICE_HOURS = 200_000_000


@dataclass
class SeriesArray:
    """One inner array of a time series: points in output order.

    ``grid`` is ``(first, step)`` when the stamps are ``first + k * step`` for k = 0, 1, ...
    in order (step 0 for a single point), else ``None`` (percentile points are ordered by
    value). Writers may use it to reuse the texts of a grid they have already written.
    """

    metric: MetricSpec
    stamps: I64
    values: F64
    grid: tuple[int, int] | None = None


@dataclass
class SeriesAnswer:
    """A time series answer (shape 2.9.1)."""

    arrays: list[SeriesArray]
    offset: int
    suffix: str
    echo: list[tuple[str, Any]]


@dataclass
class CurrentAnswer:
    """A current-value answer (shape 2.9.2): members in output order."""

    members: list[tuple[str, Any]]


@dataclass
class SimAnswer:
    """A SIM count answer (shape 2.9.3): (dd-mm-yyyy, physical, esim) per day."""

    rows: list[tuple[str, int, int]]


def _too_big(message: str) -> ApiProblem:
    return ApiProblem(400, message, field="end_date_time")


def _scope(net: Network, q: ReportQuery) -> I64:
    ids = [a.account_id for a in net.accounts]
    if q.account not in ids:
        raise ApiProblem(404, f"unknown account_id {q.account!r}", field="dimension_filter_clauses")
    dev = net.devices_of(ids.index(q.account))
    for f in q.filters:
        dev = _intersect(dev, net.devices_where(f.dimension, f.values))
    return dev


def _active(net: Network, dev: I64, day: int) -> I64:
    """The devices of ``dev`` whose SIM is active on ``day`` (days since the epoch, UTC)."""
    act, deact = net.arrays["act_day"][dev], net.arrays["deact_day"][dev]
    out: I64 = dev[(act <= day) & (day < deact)]
    return out


def _intersect(a: I64, b: I64) -> I64:
    """Return the values in both sorted, unique arrays (cheap when one of them is short)."""
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    if len(large) == 0:
        return large
    at = np.minimum(np.searchsorted(large, small), len(large) - 1)
    out: I64 = small[large[at] == small]
    return out


def _grain(dims: tuple[str, ...]) -> str | None:
    if any(d in _DEVICE_DIMS for d in dims):
        return "device"
    if "enodeb_ip" in dims:
        return "enodeb"
    if "customer_site_id" in dims:
        return "site"
    return None


def _groups(net: Network, grain: str, dev: I64) -> I64:
    if grain == "device":
        return dev
    return np.asarray(net.arrays["enodeb" if grain == "enodeb" else "site"][dev], dtype=np.int64)


def _element(net: Network, grain: str | None, dev: I64, first: Accumulated | None) -> I64:
    """Return the devices of the answer's element (the scope when it is one element)."""
    if grain is None or len(dev) <= 1:
        return dev
    groups = _groups(net, grain, dev)
    uniq = np.unique(groups)
    if len(uniq) == 1:
        return dev
    assert first is not None
    sums = np.bincount(np.searchsorted(uniq, groups), weights=first.per_device.astype(float))
    top = uniq[int(np.argmax(sums))]
    picked: I64 = dev[groups == top]
    return picked


def _echo(net: Network, q: ReportQuery, element: I64, now_extra: bool) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    dims = list(q.dimensions)
    if now_extra and _grain(q.dimensions) == "device" and "lr_id" not in dims:
        dims.append("lr_id")
    for dim in dims:
        allowed: set[str] | None = None
        sent: list[str | int] = []
        for f in q.filters:
            if f.dimension == dim:
                vals = {str(v) for v in f.values}
                allowed = vals if allowed is None else allowed & vals
                sent.extend(f.values)
        if allowed:
            out.append((dim, next(v for v in sent if str(v) in allowed)))
        elif len(element):
            out.append((dim, str(net.arrays[dim][element[0]])))
        else:
            out.append((dim, None))
    return out


def _rotation(metrics: tuple[MetricSpec, ...], seed: int) -> list[MetricSpec]:
    n = len(metrics)
    if n < 2:
        return list(metrics)
    label = "|".join(f"{m.name}:{m.aggregation}:{m.percentile}" for m in metrics)
    k = 1 + (zlib.crc32(f"{seed}|{label}".encode()) % (n - 1))
    return list(metrics[k:] + metrics[:k])


def _resolve(q: ReportQuery, now: float) -> tuple[int, int]:
    slot_end = _happened(now)
    if q.mode == "now":
        return slot_end - SLOT, slot_end
    if q.keyword is not None:
        return slot_end - KEYWORDS[q.keyword], slot_end
    return q.start, q.end


def _happened(now: float) -> int:
    """The end of the last 5-minute slot that ended at or before the clock (epoch seconds)."""
    return int(now // SLOT) * SLOT


def _sim(net: Network, dev: I64, t0: int, t1: int, now: float) -> SimAnswer:
    d0, d1 = t0 // 86400, -(-t1 // 86400)
    days = np.arange(d0, min(max(d1, d0 + 1), int(now // 86400) + 1), dtype=np.int64)
    esim = net.arrays["esim"][dev]
    rows_counts = []
    for kind in (False, True):
        sel = dev[esim == kind]
        act = np.sort(net.arrays["act_day"][sel])
        deact = np.sort(net.arrays["deact_day"][sel])
        rows_counts.append(
            np.searchsorted(act, days, side="right") - np.searchsorted(deact, days, side="right")
        )
    dates = [datetime.fromtimestamp(int(d) * 86400, UTC).strftime("%d-%m-%Y") for d in days]
    return SimAnswer(
        [(s, int(p), int(e)) for s, p, e in zip(dates, rows_counts[0], rows_counts[1], strict=True)]
    )


def answer(
    q: ReportQuery, net: Network, now: float, seed: int, *, max_points: int = MAX_POINTS
) -> SeriesAnswer | CurrentAnswer | SimAnswer:
    """Compute the answer to a validated report request.

    Args:
        q: the request.
        net: the network.
        now: the clock's now (epoch seconds).
        seed: the sandbox seed (orders the inner arrays).
        max_points: the most points (buckets x metrics) one answer may hold (else 400).

    Returns:
        The answer, ready to render.

    Raises:
        ApiProblem: unknown account (404) or a range too large to answer (400).
    """
    dev = _scope(net, q)
    t0, t1 = _resolve(q, now)
    if q.sim:
        return _sim(net, dev, t0, t1, now)
    if q.mode == "now":  # a device whose SIM is not active at that time is not on the account
        dev = _active(net, dev, t0 // 86400)
    grain = _grain(q.dimensions)
    needs_profile = any(
        m.aggregation in ("MAX", "MIN") or m.percentile is not None for m in q.metrics
    )
    cut = _happened(now)
    elapsed: I64 | None = None
    if q.mode == "now":
        h0, hours, window, nb, per, mask = t0 // 3600, 1, (t0, t1), 1, 1, None
        needs_profile = False
    elif q.granularity is not None:
        g = q.granularity
        b0 = t0 // g * g
        b_end = -(-t1 // g) * g + (g if t1 % g == 0 else 0)
        b_end = min(b_end, int(now // g) * g + g)  # no bucket starts after the clock
        if b_end <= b0:
            return _series(q, net, dev, [], seed)
        nb, per = (b_end - b0) // g, g // 3600
        h0, hours, window, mask = b0 // 3600, (b_end - b0) // 3600, None, None
        if cut < b_end:  # the last bucket holds the clock: only what happened counts
            window = (b0, max(cut, b0))
            elapsed = np.clip((cut - b0) // SLOT - np.arange(nb) * per * 12, 0, per * 12)
    else:
        if t0 > now:  # the range starts after the clock: nothing happened yet
            return _series(q, net, dev, [], seed)
        w0, w1 = t0 // SLOT * SLOT, -(-t1 // SLOT) * SLOT
        w1 = max(min(w1, cut), w0)
        h0 = w0 // 3600
        hours = -(-w1 // 3600) - h0
        nb, per, window = 1, hours, (w0, w1)
        slot_starts = h0 * 3600 + np.arange(hours * 12, dtype=np.int64) * SLOT
        mask = (slot_starts >= w0) & (slot_starts < w1)
    slots = per * 12 if mask is None else int(np.count_nonzero(mask))
    if nb * len(q.metrics) > max_points:
        raise _too_big(
            f"the answer would hold {nb * len(q.metrics)} points; the sandbox "
            f"answers at most {max_points}: use a coarser granularity or a shorter range"
        )
    if len(dev) * hours > MAX_DEVICE_HOURS:
        raise _too_big(
            f"the request covers {len(dev) * hours} device-hours; the sandbox "
            f"computes at most {MAX_DEVICE_HOURS} per request: narrow it"
        )
    one_element = grain is None or len(dev) <= 1 or len(np.unique(_groups(net, grain, dev))) <= 1
    bases = bases_of(q.metrics)
    sums = functools.partial(accumulate, net, h0=h0, hours=hours, window=window, bases=bases)
    whole = sums(dev, profile=needs_profile and one_element, per_device=not one_element)
    element = _element(net, grain, dev, whole)
    same = len(element) == len(dev)
    acc = whole if same else sums(element, profile=needs_profile, per_device=False)
    if q.mode == "now":
        members: list[tuple[str, Any]] = [("start_time", _utc(t0)), ("end_time", _utc(t1))]
        for m in q.metrics:
            value = float(values(m, acc, whole, 1, 1, None, 1)[0])
            if m.aggregation == "EXISTS":
                members.append((m.name, "YES" if value else "NO"))
            else:
                members.append((m.name, int(value) if value.is_integer() else value))
        members.extend(_echo(net, q, element, now_extra=True))
        members.append(("account_id", q.account_echo))
        return CurrentAnswer(members)
    grid = (h0 * 3600, q.granularity) if q.granularity is not None else (t0, 0)
    stamps = (grid[0] + np.arange(nb, dtype=np.int64) * grid[1]).astype(np.int64)
    arrays: list[SeriesArray] = []
    for m in _rotation(q.metrics, seed):
        if len(dev) == 0:
            arrays.append(SeriesArray(m, stamps[:0], np.zeros(0), grid))
            continue
        if mask is not None and not mask.any():  # the range began in the current slot
            values_ = np.zeros(nb)
        else:
            values_ = values(m, acc, whole, nb, per, mask, slots, elapsed)
        if m.percentile is not None:
            order = np.argsort(values_, kind="stable")
            arrays.append(SeriesArray(m, stamps[order], values_[order]))
        else:
            arrays.append(SeriesArray(m, stamps, values_, grid))
    return _series(q, net, element, arrays, seed)


def _series(
    q: ReportQuery, net: Network, element: I64, arrays: list[SeriesArray], seed: int
) -> SeriesAnswer:
    """A time series answer; with no arrays, one empty array per metric (nothing happened)."""
    if not arrays:
        empty = np.zeros(0, dtype=np.int64)
        arrays = [SeriesArray(m, empty, np.zeros(0)) for m in _rotation(q.metrics, seed)]
    offset, suffix = (q.offset, q.suffix) if q.keyword is None else (0, "+00:00")
    echo: list[tuple[str, Any]] = [("account_id", q.account_echo)]
    echo.extend(_echo(net, q, element, now_extra=False))
    return SeriesAnswer(arrays, offset, suffix, echo)


def _utc(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
