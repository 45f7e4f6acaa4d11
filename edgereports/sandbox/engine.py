"""Answers of the reporting endpoint, computed from the synthetic network (see ``activity.py``).

Metrics are scaled sums of the activity bases over 5-minute *samples* (one per device and UTC
slot):

============================  =====  =========================================================
metric                        base   one sample (a device in a 5-minute slot)
============================  =====  =========================================================
``time_usage_seconds``        T      seconds online (0 to 300)
``uplink_bytes``              U      bytes sent (may end in .5)
``downlink_bytes``            D      bytes received (may end in .5)
``uplink_bandwidth``          U      bits per second over the slot (bytes * 8 / 300)
``downlink_bandwidth``        D      bits per second over the slot
``ue_connections``            C      1 if the UE is connected in the slot, else 0
``ue_online_status``          C      the same as ue_connections
============================  =====  =========================================================

Within a bucket, samples are first summed over the devices in scope (one value per slot: e.g.
the UEs connected at once, the enterprise's throughput), then aggregated over the slots:
``COUNT`` is the total (additive: HOUR buckets sum to their DAY bucket, subscribers sum to
their enterprise), ``AVG`` the total divided by the bucket's slots (12 per hour), ``MAX`` and
``MIN`` the largest and smallest slot, ``EXISTS`` 1 if any sample is non-zero (``"YES"``/``"NO"``
in a current value), and a ``PERCENTILE`` filter the linear-interpolated percentile of the
slots. COUNTs of seconds, bytes and connections are exact; other values are rounded to three
decimals.

Scope: the devices of the account that pass every filter. With dimensions, an answer speaks for
one *element* at the finest grouped grain (device for msisdn/imsi/ue_ip/lr_id, eNodeB for
enodeb_ip, site for customer_site_id): the one the filters pin down, or else the top talker
(most bytes in the range; lowest index on ties). Its values are echoed; ``COUNT`` still totals
the whole scope, while AVG/MAX/MIN/EXISTS/PERCENTILE are the element's (the live service's
quirk). Time series buckets are aligned in UTC, cover every bucket that overlaps the range and,
when the end falls on a bucket boundary, one more bucket stamped exactly at the end. A range
without granularity gives one point per metric over the 5-minute slots that overlap it, stamped
at the range start. ``NOW`` is the 5-minute UTC slot containing the clock's now; ``LAST X``
is the range of length X ending where that slot ends (X: HOUR, DAY, WEEK, MONTH = 30 days).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from .activity import SLOT, Accumulated, accumulate
from .network import Network
from .problems import ApiProblem
from .reportreq import KEYWORDS, MetricSpec, ReportQuery

__all__ = ["CurrentAnswer", "SeriesAnswer", "SeriesArray", "SimAnswer", "answer"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

METRIC_BASES: dict[str, tuple[str, float, bool]] = {
    # name: (base, scale of a base unit, exact)
    "time_usage_seconds": ("T", 1.0, True),
    "uplink_bytes": ("U", 0.5, True),
    "downlink_bytes": ("D", 0.5, True),
    "uplink_bandwidth": ("U", 4.0 / 300.0, False),
    "downlink_bandwidth": ("D", 4.0 / 300.0, False),
    "ue_connections": ("C", 1.0, True),
    "ue_online_status": ("C", 1.0, True),
}
_DEVICE_DIMS = ("msisdn", "imsi", "ue_ip", "lr_id")
MAX_POINTS = 500_000
MAX_DEVICE_HOURS = 200_000_000


@dataclass
class SeriesArray:
    """One inner array of a time series: points in output order."""

    metric: MetricSpec
    stamps: I64
    values: F64


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
    mask = net.arrays["account"] == ids.index(q.account)
    for f in q.filters:
        mask &= np.isin(net.arrays[f.dimension], [str(v) for v in f.values])
    return np.flatnonzero(mask).astype(np.int64)


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
    if grain is None or len(dev) == 0:
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


def _round(values: F64, exact: bool) -> F64:
    out: F64 = values if exact else np.round(values, 3)
    return out


def _values(
    m: MetricSpec, acc: Accumulated, whole: Accumulated, nb: int, per: int, mask: Any, slots: int
) -> F64:
    """Return per-bucket values of metric ``m``.

    ``acc`` holds the element's sums, ``whole`` the scope's (for COUNT); buckets are ``per``
    hours each and hold ``slots`` 5-minute slots; ``mask`` selects the slots of the hours
    (``None``: all) when there is one bucket over a window. One slot (NOW) needs no profile.
    """
    base, scale, exact = METRIC_BASES[m.name]
    if slots == 1 and m.aggregation not in ("COUNT", "EXISTS"):
        one = acc.totals[base].sum().astype(np.float64).reshape(1)
        return _round(one * scale, exact and m.aggregation != "AVG" and m.percentile is None)
    if m.aggregation == "COUNT":
        total = whole.totals[base].reshape(nb, per).sum(axis=1).astype(np.float64)
        return _round(total * scale, exact)
    if m.aggregation in ("AVG", "EXISTS"):
        total = acc.totals[base].reshape(nb, per).sum(axis=1).astype(np.float64)
        out: F64 = (
            (total > 0).astype(np.float64)
            if m.aggregation == "EXISTS"
            else (np.round(total / slots * scale, 3))
        )
        return out
    assert acc.profile is not None
    slots_of = acc.profile[base].reshape(nb, per * 12)
    if mask is not None:
        slots_of = slots_of[:, mask]
    if m.percentile is not None:
        pct = np.percentile(slots_of, m.percentile, axis=1, method="linear")
        return np.round(pct * scale, 3)
    picked = slots_of.max(axis=1) if m.aggregation == "MAX" else slots_of.min(axis=1)
    return _round(picked * scale, exact)


def _rotation(metrics: tuple[MetricSpec, ...], seed: int) -> list[MetricSpec]:
    n = len(metrics)
    if n < 2:
        return list(metrics)
    label = "|".join(f"{m.name}:{m.aggregation}:{m.percentile}" for m in metrics)
    k = 1 + (zlib.crc32(f"{seed}|{label}".encode()) % (n - 1))
    return list(metrics[k:] + metrics[:k])


def _resolve(q: ReportQuery, now: float) -> tuple[int, int]:
    slot_end = int(now // SLOT) * SLOT + SLOT
    if q.mode == "now":
        return slot_end - SLOT, slot_end
    if q.keyword is not None:
        return slot_end - KEYWORDS[q.keyword], slot_end
    return q.start, q.end


def _sim(net: Network, dev: I64, t0: int, t1: int) -> SimAnswer:
    d0, d1 = t0 // 86400, -(-t1 // 86400)
    days = np.arange(d0, max(d1, d0 + 1), dtype=np.int64)
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
    q: ReportQuery, net: Network, now: float, seed: int
) -> SeriesAnswer | CurrentAnswer | SimAnswer:
    """Compute the answer to a validated report request.

    Args:
        q: the request.
        net: the network.
        now: the clock's now (epoch seconds).
        seed: the sandbox seed (orders the inner arrays).

    Returns:
        The answer, ready to render.

    Raises:
        ApiProblem: unknown account (404) or a range too large to answer (400).
    """
    dev = _scope(net, q)
    t0, t1 = _resolve(q, now)
    if q.sim:
        return _sim(net, dev, t0, t1)
    grain = _grain(q.dimensions)
    needs_profile = any(
        m.aggregation in ("MAX", "MIN") or m.percentile is not None for m in q.metrics
    )
    if q.mode == "now":
        h0, hours, window, nb, per, mask = t0 // 3600, 1, (t0, t1), 1, 1, None
        needs_profile = False
    elif q.granularity is not None:
        g = q.granularity
        b0 = t0 // g * g
        b_end = -(-t1 // g) * g + (g if t1 % g == 0 else 0)
        nb, per = (b_end - b0) // g, g // 3600
        h0, hours, window, mask = b0 // 3600, (b_end - b0) // 3600, None, None
    else:
        w0, w1 = t0 // SLOT * SLOT, -(-t1 // SLOT) * SLOT
        h0 = w0 // 3600
        hours = -(-w1 // 3600) - h0
        nb, per, window = 1, hours, (w0, w1)
        slot_starts = h0 * 3600 + np.arange(hours * 12, dtype=np.int64) * SLOT
        mask = (slot_starts >= w0) & (slot_starts < w1)
    slots = per * 12 if mask is None else int(np.count_nonzero(mask))
    if nb * len(q.metrics) > MAX_POINTS:
        raise _too_big(
            f"the answer would hold {nb * len(q.metrics)} points; the sandbox "
            f"answers at most {MAX_POINTS}: use a coarser granularity or a shorter range"
        )
    if len(dev) * hours > MAX_DEVICE_HOURS:
        raise _too_big(
            f"the request covers {len(dev) * hours} device-hours; the sandbox "
            f"computes at most {MAX_DEVICE_HOURS} per request: narrow it"
        )
    one_element = grain is None or len(np.unique(_groups(net, grain, dev))) <= 1
    bases = tuple(sorted({METRIC_BASES[m.name][0] for m in q.metrics}))
    whole = accumulate(
        net,
        dev,
        h0,
        hours,
        window=window,
        profile=needs_profile and one_element,
        bases=bases,
        per_device=not one_element,
    )
    element = _element(net, grain, dev, whole)
    acc = (
        whole
        if len(element) == len(dev)
        else accumulate(
            net,
            element,
            h0,
            hours,
            window=window,
            profile=needs_profile,
            bases=bases,
            per_device=False,
        )
    )
    if q.mode == "now":
        members: list[tuple[str, Any]] = [
            ("start_time", _utc(t0)),
            ("end_time", _utc(t1)),
        ]
        for m in q.metrics:
            value = float(_values(m, acc, whole, 1, 1, None, 1)[0])
            if m.aggregation == "EXISTS":
                members.append((m.name, "YES" if value else "NO"))
            else:
                members.append((m.name, int(value) if value.is_integer() else value))
        members.extend(_echo(net, q, element, now_extra=True))
        members.append(("account_id", q.account_echo))
        return CurrentAnswer(members)
    offset, suffix = (q.offset, q.suffix) if q.keyword is None else (0, "+00:00")
    if q.granularity is not None:
        stamps = (h0 * 3600 + np.arange(nb, dtype=np.int64) * q.granularity).astype(np.int64)
    else:
        stamps = np.array([t0], dtype=np.int64)
    arrays: list[SeriesArray] = []
    for m in _rotation(q.metrics, seed):
        if len(dev) == 0:
            arrays.append(SeriesArray(m, stamps[:0], np.zeros(0)))
            continue
        values = _values(m, acc, whole, nb, per, mask, slots)
        if m.percentile is not None:
            order = np.argsort(values, kind="stable")
            arrays.append(SeriesArray(m, stamps[order], values[order]))
        else:
            arrays.append(SeriesArray(m, stamps, values))
    echo: list[tuple[str, Any]] = [("account_id", q.account_echo)]
    echo.extend(_echo(net, q, element, now_extra=False))
    return SeriesAnswer(arrays, offset, suffix, echo)


def _utc(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
