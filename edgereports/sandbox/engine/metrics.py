"""What every reporting metric and aggregation means, computed from the activity sums.

A metric is a scaled activity base (``model/activity.py``; ``METRIC_BASES``) summed over
5-minute *samples*, one per device and UTC slot: seconds online (``time_usage_seconds``), bytes
(``uplink_bytes``, ``downlink_bytes``; may end in .5), bits per second over the slot (the
bandwidths), 1 if the UE is connected (``ue_connections``, ``ue_online_status``) and, only where
a device is connected, its latency and jitter in milliseconds and its packet loss in percent
(the *quality* metrics, ``model/quality.py``; equal within a device's UTC hour).

*Additive* metrics (the others): within a bucket, samples are first summed over the devices in
scope (one value per slot), then aggregated over the slots: ``COUNT`` the total (HOUR buckets
sum to their DAY bucket, subscribers to their enterprise), ``AVG`` the total over the bucket's
slots, ``MAX`` and ``MIN`` the extreme slots, ``EXISTS`` 1 if any sample is non-zero
(``"YES"``/``"NO"`` in a current value), a ``PERCENTILE`` filter the linear-interpolated
percentile of the slots. Quality metrics: ``COUNT`` the sum of the samples (so ``COUNT /
ue_connections COUNT`` is the mean sample), ``AVG`` their mean, ``MAX``, ``MIN`` and
``PERCENTILE`` over the means of the slots that have a sample (so ``MIN <= AVG <= MAX``),
``EXISTS`` 1 when the bucket has a sample; a bucket without a sample gives 0.

COUNTs are exact (quality samples are multiples of 1/8); other values are rounded to three
decimals. With a top talker, ``COUNT`` totals the whole scope and the other aggregations are
the element's (``answer.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..model.accumulate import Accumulated
from ..model.activity import SLOTS_PER_HOUR
from ..model.quality import QUALITY_UNIT
from .request import MetricSpec

__all__ = ["METRIC_BASES", "MetricBase", "bases_of", "values"]

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class MetricBase:
    """How a metric is computed: its base, the value of one base unit, exactness, kind."""

    base: str
    scale: float
    exact: bool
    quality: bool = False


METRIC_BASES: dict[str, MetricBase] = {
    "time_usage_seconds": MetricBase("T", 1.0, True),
    "uplink_bytes": MetricBase("U", 0.5, True),
    "downlink_bytes": MetricBase("D", 0.5, True),
    "uplink_bandwidth": MetricBase("U", 4.0 / 300.0, False),
    "downlink_bandwidth": MetricBase("D", 4.0 / 300.0, False),
    "ue_connections": MetricBase("C", 1.0, True),
    "ue_online_status": MetricBase("C", 1.0, True),
    "packet_latency": MetricBase("L", QUALITY_UNIT, True, quality=True),
    "jitter": MetricBase("J", QUALITY_UNIT, True, quality=True),
    "packet_loss": MetricBase("P", QUALITY_UNIT, True, quality=True),
}


def bases_of(metrics: tuple[MetricSpec, ...]) -> tuple[str, ...]:
    """Return the activity bases the metrics need (quality metrics also need ``C``)."""
    infos = [METRIC_BASES[m.name] for m in metrics]
    bases = {i.base for i in infos} | ({"C"} if any(i.quality for i in infos) else set())
    return tuple(sorted(bases))


def _round(values: F64, exact: bool) -> F64:
    out: F64 = values if exact else np.round(values, 3)
    return out


def _per_bucket(acc: Accumulated, base: str, nb: int, per: int) -> F64:
    out: F64 = acc.totals[base].reshape(nb, per).sum(axis=1).astype(np.float64)
    return out


def values(
    m: MetricSpec,
    acc: Accumulated,
    whole: Accumulated,
    nb: int,
    per: int,
    mask: Any,
    slots: int,
    elapsed: npt.NDArray[np.int64] | None = None,
) -> F64:
    """Return per-bucket values of metric ``m``.

    Args:
        m: the metric entry.
        acc: the element's sums (with a profile when MAX, MIN or PERCENTILE need one).
        whole: the scope's sums (for COUNT).
        nb: the number of buckets.
        per: hours per bucket.
        mask: which slots of the hours count (``None``: all), when one bucket covers a window.
        slots: the number of 5-minute slots of a bucket; one slot (NOW) needs no profile.
        elapsed: per bucket, how many of its first slots happened (the last bucket holds the
            sandbox's clock); None when all did. The sums are already clipped to the clock.

    Returns:
        One value per bucket.
    """
    info = METRIC_BASES[m.name]
    if info.quality:
        return _quality_values(m, info, acc, whole, nb, per, mask, slots, elapsed)
    base, scale, exact = info.base, info.scale, info.exact
    if slots == 1 and m.aggregation not in ("COUNT", "EXISTS"):
        one = acc.totals[base].sum().astype(np.float64).reshape(1)
        return _round(one * scale, exact and m.aggregation != "AVG" and m.percentile is None)
    if m.aggregation == "COUNT":
        return _round(_per_bucket(whole, base, nb, per) * scale, exact)
    if m.aggregation in ("AVG", "EXISTS"):
        total = _per_bucket(acc, base, nb, per)
        divisor = slots if elapsed is None else np.maximum(elapsed, 1)
        out: F64 = (
            (total > 0).astype(np.float64)
            if m.aggregation == "EXISTS"
            else (np.round(total / divisor * scale, 3))
        )
        return out
    assert acc.profile is not None
    slots_of = acc.profile[base].reshape(nb, per * SLOTS_PER_HOUR)
    if mask is not None:
        slots_of = slots_of[:, mask]
    if elapsed is not None:  # the slots after the clock have not happened
        happened = _happened(elapsed, slots_of.shape[1])
        slots_of = np.where(happened, slots_of, np.nan)
        if m.percentile is not None:
            pct = _percentile(np.sort(slots_of, axis=1), elapsed, m.percentile)
            return np.round(np.where(elapsed > 0, pct, 0.0) * scale, 3)
        filled = np.where(happened, slots_of, -np.inf if m.aggregation == "MAX" else np.inf)
        picked = filled.max(axis=1) if m.aggregation == "MAX" else filled.min(axis=1)
        return _round(np.where(elapsed > 0, picked, 0.0) * scale, exact)
    if m.percentile is not None:
        pct = np.percentile(slots_of, m.percentile, axis=1, method="linear")
        return np.round(pct * scale, 3)
    picked = slots_of.max(axis=1) if m.aggregation == "MAX" else slots_of.min(axis=1)
    return _round(picked * scale, exact)


def _happened(elapsed: npt.NDArray[np.int64], width: int) -> npt.NDArray[np.bool_]:
    """Per bucket (row), which of its ``width`` slots happened: the first ``elapsed[i]``."""
    out: npt.NDArray[np.bool_] = np.arange(width)[None, :] < elapsed[:, None]
    return out


def _quality_values(
    m: MetricSpec,
    info: MetricBase,
    acc: Accumulated,
    whole: Accumulated,
    nb: int,
    per: int,
    mask: Any,
    slots: int,
    elapsed: npt.NDArray[np.int64] | None,
) -> F64:
    """Return per-bucket values of a quality metric (semantics in the module docstring)."""
    base, scale = info.base, info.scale
    if m.aggregation == "COUNT":
        return _per_bucket(whole, base, nb, per) * scale
    count = _per_bucket(acc, "C", nb, per)
    if m.aggregation == "EXISTS":
        out: F64 = (count > 0).astype(np.float64)
        return out
    if m.aggregation == "AVG" or slots == 1:
        total = _per_bucket(acc, base, nb, per)
        mean = np.divide(total, count, out=np.zeros(nb), where=count > 0)
        return np.round(mean * scale, 3)
    assert acc.profile is not None
    sums = acc.profile[base].reshape(nb, per * SLOTS_PER_HOUR)
    counts = acc.profile["C"].reshape(nb, per * SLOTS_PER_HOUR)
    if mask is not None:
        sums, counts = sums[:, mask], counts[:, mask]
    if elapsed is not None:  # the slots after the clock have no sample yet
        counts = np.where(_happened(elapsed, counts.shape[1]), counts, 0.0)
    valid = counts > 0
    means = np.divide(sums, counts, out=np.zeros(sums.shape), where=valid)
    n = valid.sum(axis=1)
    if m.percentile is not None:
        picked = _percentile(np.sort(np.where(valid, means, np.inf), axis=1), n, m.percentile)
    elif m.aggregation == "MAX":
        picked = np.where(valid, means, -np.inf).max(axis=1)
    else:
        picked = np.where(valid, means, np.inf).min(axis=1)
    picked = np.where(n > 0, picked, 0.0)
    return np.round(picked * scale, 3)


def _percentile(ordered: F64, n: npt.NDArray[np.int64], percentile: float) -> F64:
    """Return the linear-interpolated percentile of the first ``n[i]`` values of each row."""
    rows = np.arange(len(ordered))
    pos = percentile / 100.0 * np.maximum(n - 1, 0)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, np.maximum(n - 1, 0))
    frac = pos - lo
    a = ordered[rows, np.minimum(lo, ordered.shape[1] - 1)]
    b = ordered[rows, np.minimum(hi, ordered.shape[1] - 1)]
    with np.errstate(invalid="ignore"):
        out: F64 = np.where(frac > 0, a + (b - a) * frac, a)
    return out
