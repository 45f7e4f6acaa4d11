"""The v2 report (``POST /connectivity/v2/report``): UE and Edge Point metrics over the network.

The body has v1's shape; the names are v2's (docs/service.md). UE metrics come from the same
device activity as v1 (``_UE``: base, scale, exact); Edge Point metrics are the account's VLAN
(``breakout`` egress is the uplink, ``ran`` egress the downlink). ``device`` is a customer site,
``enb_ip`` an eNodeB, ``seid`` a device's session (its LR id); ``customer_id`` and
``customer_name`` name the account (the primary one unless a filter names another; 404 when
unknown).

Stamps: the range is cut at UTC bucket boundaries and each piece is stamped at its end, in the
offset of ``start_date_time`` (UTC for keywords). A piece's value comes from the 5-minute slots
that overlap it: COUNT totals the scope's slots, AVG, MAX, MIN and EXISTS are the answer
element's (the top talker when a grouped dimension is not pinned, as in v1). ``NOW`` is the
five minutes ending at the clock, ``LAST X`` the X ending at it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..model.accumulate import accumulate
from ..model.activity import SLOT
from ..model.network import Network
from ..problems import ApiProblem, bad
from .answer import SeriesAnswer, SeriesArray, _element, _grain
from .fields import MetricSpec, body_object, parse_dimensions, type_name
from .request import _TOP_FIELDS, GRANULARITIES, KEYWORDS, _timestamp

__all__ = [
    "V2_AGGREGATIONS",
    "V2_DIMENSIONS",
    "V2_METRICS",
    "V2Query",
    "answer_v2",
    "exact_filter",
    "parse_v2",
    "resolve",
    "scope_of",
    "slot_profiles",
]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

_PACKET = 1250.0  # bytes per packet
# metric -> (activity base, scale of one base unit, exact)
_UE: dict[str, tuple[str, float, bool]] = {
    "downlink_bandwidth_usage": ("D", 4.0 / 300.0, False),
    "uplink_bandwidth_usage": ("U", 4.0 / 300.0, False),
    "ue_session_duration_seconds": ("T", 1.0, True),
    "ue_session_downlink_bytes": ("D", 0.5, True),
    "ue_session_downlink_packet": ("D", 0.5 / _PACKET, False),
    "ue_session_uplink_bytes": ("U", 0.5, True),
    "ue_session_uplink_packets": ("U", 0.5 / _PACKET, False),
    "ue_connections": ("C", 1.0, True),
    "ue_online_status": ("C", 1.0, True),
}
_VLAN_BASE = {("breakout", "egress"): "U", ("breakout", "ingress"): "D",
              ("ran", "egress"): "D", ("ran", "ingress"): "U"}  # fmt: skip
_EDGE: dict[str, tuple[str, float, bool]] = {
    f"customer_vlan_{path}_{way}_{unit}": (
        base,
        0.5 if unit == "bytes" else 0.5 / _PACKET,
        unit == "bytes",
    )
    for (path, way), base in _VLAN_BASE.items()
    for unit in ("bytes", "packets")
}
V2_METRICS = {**_UE, **_EDGE}
V2_DIMENSIONS = ("customer_id", "device", "enb_ip", "seid", "ue_ip", "customer_name")
V2_AGGREGATIONS: dict[str, tuple[str, ...]] = {
    "ue_online_status": ("EXISTS",),
    "ue_connections": ("COUNT", "MAX", "AVG"),
}
_DEFAULT_AGGREGATIONS = ("COUNT", "MAX", "MIN", "AVG")
# v2 dimension -> the network array it reads (customer_* are the account's own)
_ARRAY = {"device": "customer_site_id", "enb_ip": "enodeb_ip", "seid": "lr_id", "ue_ip": "ue_ip"}
MAX_PIECES = 100_000
MAX_DEVICE_HOURS = 50_000_000


@dataclass(frozen=True)
class V2Query:
    """A validated v2 report request (times unresolved when ``keyword`` is set)."""

    start: int
    end: int
    keyword: str | None
    offset: int
    suffix: str
    granularity: int
    dimensions: tuple[str, ...]
    filters: tuple[tuple[str, tuple[str | int, ...]], ...]
    metrics: tuple[MetricSpec, ...]

    @property
    def edge_point(self) -> bool:
        """Whether this is an Edge Point report (its metrics are the VLAN's)."""
        return all(m.name in _EDGE for m in self.metrics)


def exact_filter(
    item: Any, where: str, allowed: tuple[str, ...]
) -> tuple[str, tuple[str | int, ...]]:
    """Check one ``{dimension_name, operator: EXACT, expressions}`` filter; (name, values).

    Raises:
        ApiProblem: 400 naming the filter and the allowed dimensions.
    """
    keys = {"dimension_name", "operator", "expressions"}
    if not isinstance(item, dict) or set(item) != keys:
        raise bad(f"{where} must have dimension_name, operator and expressions", where)
    name, exprs = item["dimension_name"], item["expressions"]
    if name not in allowed:
        raise bad(
            f"{where}.dimension_name: unknown dimension {name!r}; known: {', '.join(allowed)}",
            f"{where}.dimension_name",
        )
    if item["operator"] != "EXACT":
        raise bad(f"{where}.operator must be 'EXACT'", f"{where}.operator")
    ok = isinstance(exprs, list) and 0 < len(exprs) <= 1000
    if not ok or any(isinstance(e, bool) or not isinstance(e, str | int) for e in exprs):
        raise bad(
            f"{where}.expressions must be 1 to 1000 strings or integers", f"{where}.expressions"
        )
    return str(name), tuple(exprs)


def _filters(value: Any) -> tuple[tuple[str, tuple[str | int, ...]], ...]:
    field = "dimension_filter_clauses"
    if value is None:
        return ()
    if not isinstance(value, list):
        raise bad(f"{field} must be an array of clauses, not {type_name(value)}", field)
    out: list[tuple[str, tuple[str | int, ...]]] = []
    for c, clause in enumerate(value):
        filters = clause.get("filters") if isinstance(clause, dict) else None
        if not isinstance(filters, list) or set(clause) - {"filters"}:
            raise bad(f"{field}[{c}] must be an object with a filters array", f"{field}[{c}]")
        for f, item in enumerate(filters):
            allowed = ("account_id", *V2_DIMENSIONS)
            out.append(exact_filter(item, f"{field}[{c}].filters[{f}]", allowed))
    return tuple(out)


def _metric(value: Any, i: int) -> MetricSpec:
    where = f"metrics[{i}]"
    if not isinstance(value, dict) or set(value) - {"name", "aggregation_type"}:
        raise bad(f"{where} must be an object with name and aggregation_type", where)
    name, agg = value.get("name"), value.get("aggregation_type")
    if name not in V2_METRICS:
        raise bad(
            f"{where}.name: unknown v2 metric {name!r}; known: {', '.join(V2_METRICS)}",
            f"{where}.name",
        )
    allowed = V2_AGGREGATIONS.get(str(name), _DEFAULT_AGGREGATIONS)
    if agg not in allowed:
        raise bad(
            f"{where}.aggregation_type: {name} allows {', '.join(allowed)}, not {agg!r}",
            f"{where}.aggregation_type",
        )
    return MetricSpec(str(name), str(agg), None, i)


def parse_v2(body: Any) -> V2Query:
    """Validate a parsed v2 request body.

    Raises:
        ApiProblem: 400 naming the field at fault.
    """
    body = body_object(body, _TOP_FIELDS)
    kw0, start, offset, suffix = _timestamp(body.get("start_date_time"), "start_date_time")
    kw1, end, _, _ = _timestamp(body.get("end_date_time"), "end_date_time")
    if (kw0 is None) != (kw1 is None):
        raise bad("a timestamp and a time keyword cannot be mixed", "end_date_time")
    if kw0 is not None and kw1 not in ("NOW", kw0):
        raise bad(f"a range that starts {kw0} must end NOW or {kw0}", "end_date_time")
    if kw0 is None and end <= start:
        raise bad("end_date_time must be after start_date_time", "end_date_time")
    grain = body.get("granularity", "HOUR")
    if grain not in GRANULARITIES:
        raise bad(f"granularity must be HOUR or DAY, not {grain!r}", "granularity")
    dims = body.get("dimensions")
    dimensions = () if dims is None else parse_dimensions(dims, "dimensions", V2_DIMENSIONS)
    metrics = body.get("metrics")
    if not isinstance(metrics, list) or not 0 < len(metrics) <= 20:
        raise bad("metrics must be an array of 1 to 20 metric objects", "metrics")
    specs = tuple(_metric(m, i) for i, m in enumerate(metrics))
    if len({(m.name, m.aggregation) for m in specs}) < len(specs):
        raise bad("metrics lists one (name, aggregation_type) twice", "metrics")
    return V2Query(start, end, kw0, offset, suffix, GRANULARITIES[str(grain)], dimensions,
                   _filters(body.get("dimension_filter_clauses")), specs)  # fmt: skip


def scope_of(
    net: Network, filters: tuple[tuple[str, tuple[str | int, ...]], ...]
) -> tuple[int, I64]:
    """Return the account (index) and its devices that pass every filter (404: unknown account).

    ``account_id`` and ``customer_id`` name the account, ``customer_name`` its name; the
    other dimensions select devices (see the module docstring).
    """
    account = 0
    for name, values in filters:
        ids = [a.account_id if name != "customer_name" else a.name for a in net.accounts]
        if name in ("account_id", "customer_id", "customer_name"):
            hits = [i for i, v in enumerate(ids) if v in {str(x) for x in values}]
            if not hits:
                raise ApiProblem(404, f"unknown {name} {list(values)!r}", field=name)
            account = hits[0]
    dev = net.devices_of(account)
    for name, values in filters:
        if name in _ARRAY:
            dev = np.intersect1d(dev, net.devices_where(_ARRAY[name], values))
    return account, dev


def slot_profiles(
    net: Network, dev: I64, w0: int, w1: int, bases: tuple[str, ...]
) -> dict[str, F64]:
    """Per base, the devices' sums per 5-minute slot of ``[w0, w1)`` (multiples of 300)."""
    h0, h1 = w0 // 3600, -(-w1 // 3600)
    if len(dev) * (h1 - h0) > MAX_DEVICE_HOURS:
        raise bad(f"the request covers more than {MAX_DEVICE_HOURS} device-hours: narrow it")
    acc = accumulate(net, dev, h0, h1 - h0, profile=True, bases=bases, per_device=False)
    assert acc.profile is not None
    first = (w0 - h0 * 3600) // SLOT
    count = (w1 - w0) // SLOT
    return {b: acc.profile[b].reshape(-1)[first : first + count] for b in bases}


def resolve(
    start: int, end: int, keyword: str | None, now: float, last: dict[str, int]
) -> tuple[int, int]:
    """The range in epoch seconds: keywords end at the clock (``NOW``: five minutes)."""
    if keyword is None:
        return start, end
    t1 = int(now)
    return t1 - (SLOT if keyword == "NOW" else last[keyword]), t1


def _reduce(
    slot_values: F64, piece: I64, n: int, aggregation: str, scale: float, exact: bool
) -> F64:
    """Aggregate slot values per piece (``piece[i]`` is slot i's piece)."""
    sums = np.bincount(piece, weights=slot_values, minlength=n)
    out: F64
    if aggregation == "COUNT":
        out = np.asarray(sums * scale, dtype=np.float64)
    elif aggregation == "EXISTS":
        out = (sums > 0).astype(np.float64)
    elif aggregation == "AVG":
        out = (sums / np.maximum(np.bincount(piece, minlength=n), 1) * scale).astype(np.float64)
        exact = False
    else:
        fill = -np.inf if aggregation == "MAX" else np.inf
        picked = np.full(n, fill)
        (np.maximum if aggregation == "MAX" else np.minimum).at(picked, piece, slot_values)
        out = picked * scale
    result: F64 = out if exact else np.round(out, 3)
    return result


def answer_v2(q: V2Query, net: Network, now: float) -> SeriesAnswer:
    """Compute the answer of a validated v2 request (pieces stamped at their ends).

    Raises:
        ApiProblem: an unknown account (404), or a request too large (400).
    """
    account, dev = scope_of(net, q.filters)
    t0, t1 = resolve(q.start, q.end, q.keyword, now, KEYWORDS)
    g = q.granularity
    inner = np.arange((t0 // g + 1) * g, t1, g, dtype=np.int64)
    stamps = np.append(inner, t1).astype(np.int64)
    if len(stamps) * len(q.metrics) > MAX_PIECES:
        raise bad(
            f"the answer would exceed {MAX_PIECES} points: shorten the range", "end_date_time"
        )
    w0, w1 = t0 // SLOT * SLOT, -(-t1 // SLOT) * SLOT
    slot_starts = np.arange(w0, w1, SLOT, dtype=np.int64)
    piece = np.searchsorted(inner, slot_starts, side="right").astype(np.int64)
    bases = tuple(sorted({V2_METRICS[m.name][0] for m in q.metrics}))
    grain = _grain(tuple(_ARRAY[d] for d in q.dimensions if d in _ARRAY))  # as v1 names
    whole = slot_profiles(net, dev, w0, w1, bases) if len(dev) else None
    element = dev
    if grain is not None and len(dev) > 1:
        h0, h1 = w0 // 3600, -(-w1 // 3600)
        first = accumulate(net, dev, h0, h1 - h0, window=(w0, w1), bases=("U", "D"))
        element = _element(net, grain, dev, first)
    mine = whole if len(element) == len(dev) else slot_profiles(net, element, w0, w1, bases)
    arrays = []
    for m in q.metrics:
        base, scale, exact = V2_METRICS[m.name]
        if whole is None or mine is None:
            arrays.append(SeriesArray(m, stamps[:0], np.zeros(0)))
            continue
        source = whole if m.aggregation == "COUNT" else mine
        assert m.aggregation is not None
        values = _reduce(source[base], piece, len(stamps), m.aggregation, scale, exact)
        arrays.append(SeriesArray(m, stamps, values))
    offset, suffix = (q.offset, q.suffix) if q.keyword is None else (0, "+00:00")
    return SeriesAnswer(arrays, offset, suffix, _echo(net, q, account, element))


def _echo(net: Network, q: V2Query, account: int, element: I64) -> list[tuple[str, Any]]:
    acct = net.accounts[account]
    if q.edge_point:
        out: list[tuple[str, Any]] = [("customer_name", acct.name), ("account_id", "")]
    else:
        out = [("account_id", acct.account_id)]
    pinned = dict(q.filters)
    for dim in q.dimensions:
        if dim in ("customer_id", "customer_name"):
            value: Any = acct.account_id if dim == "customer_id" else acct.name
        elif dim in pinned and len(pinned[dim]) == 1:
            value = pinned[dim][0]
        else:
            value = str(net.arrays[_ARRAY[dim]][element[0]]) if len(element) else None
        if dim not in dict(out):
            out.append((dim, value))
    if not q.dimensions and any(m.aggregation == "EXISTS" for m in q.metrics):
        out += [("enb_ip", "NONE"), ("ue_ip", "NONE"), ("lr_id", "NONE")]
    return out
