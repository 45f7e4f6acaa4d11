"""Consistency laws of the sandbox's synthetic network, property-tested over HTTP.

- HOUR buckets sum to their DAY bucket (additive COUNTs).
- Per-subscriber COUNTs sum to the enterprise COUNT.
- SIM counts match the SIMs of the inventory active that day.
- A current value (NOW) equals the last five minutes of the series, and lies within its hour.
- Nothing after the clock: no bucket or SIM day starts after it, the bucket holding it has only
  what happened up to it (HOUR still sums to DAY), NOW is the five minutes ending at it, and
  every answer states the clock in its ``Date`` header.
- A range fetched in windows and stitched by bucket ownership equals the range fetched whole.
- MIN <= AVG <= MAX, and PERCENTILE 0 and 100 are MIN and MAX.
- Quality metrics (latency, jitter, loss): COUNT sums like the others; AVG is COUNT over the
  samples (ue_connections COUNT); a DAY's MAX and MIN are the extremes of its hours' that have
  a sample; a bucket without a sample is 0 throughout.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edgereports.sandbox import SandboxHandle, serve

QUALITY = ["packet_latency", "jitter", "packet_loss"]
ADDITIVE = ["time_usage_seconds", "uplink_bytes", "downlink_bytes", "ue_connections",
            "ue_online_status", *QUALITY]  # fmt: skip
ALL = [*ADDITIVE, "uplink_bandwidth", "downlink_bandwidth"]
SETTINGS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
# days whose reports (up to 48 days long) end before the shared sandbox's clock (2022-07-08)
days = st.dates(min_value=date(2021, 1, 1), max_value=date(2022, 5, 1))
# instants for the module's own sandbox, whose clock the tests move
moments = st.datetimes(min_value=datetime(2021, 6, 1), max_value=datetime(2024, 6, 1),
                       timezones=st.just(UTC))  # fmt: skip


@pytest.fixture(scope="module")
def moving() -> Iterator[SandboxHandle]:
    """A private sandbox whose clock the tests of this module move."""
    with serve(seed=5, clock="2022-01-01T00:00:00Z") as sb:
        yield sb


def body(sb: SandboxHandle, start: str, end: str, metrics: list[dict[str, Any]],
         granularity: str | None = None, **extra: Any) -> dict[str, Any]:  # fmt: skip
    filters = [{"dimension_name": "account_id", "operator": "EXACT",
                "expressions": [sb.account_id]}, *extra.pop("filters", [])]  # fmt: skip
    out: dict[str, Any] = {"start_date_time": start, "end_date_time": end}
    if granularity:
        out["granularity"] = granularity
    out.update(extra)
    out["dimension_filter_clauses"] = [{"filters": filters}]
    out["metrics"] = metrics
    return out


def ask(sb: SandboxHandle, payload: dict[str, Any]) -> Any:
    r = requests.post(sb.report_endpoint, params={"apikey": sb.api_key}, json=payload,
                      timeout=60)  # fmt: skip
    assert r.status_code == 200, r.text
    return r.json()


def series(sb: SandboxHandle, payload: dict[str, Any]) -> dict[tuple[str, str | None], dict]:
    """Return {(name, aggregation): {time_stamp instant: value}}."""
    out: dict[tuple[str, str | None], dict[datetime, float]] = {}
    for arr in ask(sb, payload)["result"]:
        for p in arr:
            key = (p["name"], p.get("aggregation_type"))
            out.setdefault(key, {})[datetime.fromisoformat(p["time_stamp"])] = p["value"]
    return out


def iso(d: date | datetime, offset: str = "+00:00") -> str:
    if isinstance(d, datetime):
        return d.strftime("%Y-%m-%dT%H:%M:%S") + offset
    return f"{d.isoformat()}T00:00:00{offset}"


def subscriber_scope(sandbox: SandboxHandle, subscriber: int | None) -> dict[str, Any]:
    """Extra request parts narrowing a report to the primary account's SIM number ``subscriber``."""
    if subscriber is None:
        return {}
    msisdn = sandbox.network.sims_of(sandbox.account_id)[subscriber].msisdn
    return {"dimensions": ["msisdn"],
            "filters": [{"dimension_name": "msisdn", "operator": "EXACT",
                         "expressions": [msisdn]}]}  # fmt: skip


@SETTINGS
@given(day=days, name=st.sampled_from(ADDITIVE), subscriber=st.none() | st.integers(0, 63))
def test_hour_buckets_sum_to_the_day_bucket(
    sandbox: SandboxHandle, day: date, name: str, subscriber: int | None
) -> None:
    extra = subscriber_scope(sandbox, subscriber)
    metric = [{"name": name, "aggregation_type": "COUNT"}]
    start, end = iso(day), iso(day + timedelta(days=1))
    daily = series(sandbox, body(sandbox, start, end, metric, "DAY", **extra))
    hourly = series(sandbox, body(sandbox, start, end, metric, "HOUR", **extra))
    d0 = datetime.fromisoformat(start)
    hours = {t: v for t, v in hourly[(name, "COUNT")].items() if t < d0 + timedelta(days=1)}
    assert len(hours) == 24
    assert sum(hours.values()) == daily[(name, "COUNT")][d0]


@settings(max_examples=4, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(day=days, name=st.sampled_from(ADDITIVE), by=st.sampled_from(["msisdn", "imsi"]))
def test_subscriber_counts_sum_to_the_enterprise_count(
    sandbox: SandboxHandle, day: date, name: str, by: str
) -> None:
    metric = [{"name": name, "aggregation_type": "COUNT"}]
    start, end = iso(day, "+05:30"), iso(day + timedelta(days=2), "+05:30")
    whole = series(sandbox, body(sandbox, start, end, metric, "DAY"))[(name, "COUNT")]
    total: Counter[datetime] = Counter()
    with requests.Session() as s:
        for sim in sandbox.network.sims_of(sandbox.account_id):
            value = getattr(sim, by)
            payload = body(
                sandbox,
                start,
                end,
                metric,
                "DAY",
                dimensions=[by],
                filters=[{"dimension_name": by, "operator": "EXACT", "expressions": [value]}],
            )
            r = s.post(sandbox.report_endpoint, params={"apikey": sandbox.api_key},
                       json=payload, timeout=60)  # fmt: skip
            data = r.json()
            assert data[by] == value
            for p in data["result"][0]:
                total[datetime.fromisoformat(p["time_stamp"])] += p["value"]
    assert dict(total) == whole


@SETTINGS
@given(first=days, span=st.integers(1, 40))
def test_sim_counts_match_the_inventory(sandbox: SandboxHandle, first: date, span: int) -> None:
    inventory = requests.get(f"{sandbox.base_url}/sandbox/network", timeout=30).json()
    sims = [s for s in inventory["sims"] if s["account_id"] == sandbox.account_id]
    answer = ask(sandbox, body(sandbox, iso(first), iso(first + timedelta(days=span)),
                               [{"name": "sim", "aggregation_type": "COUNT"}]))  # fmt: skip
    assert len(answer) == span
    for k, row in enumerate(answer):
        day = first + timedelta(days=k)
        assert row["date"] == day.strftime("%d-%m-%Y")
        active = [
            s
            for s in sims
            if s["activation_date"] <= day.isoformat()
            and (s["deactivation_date"] is None or day.isoformat() < s["deactivation_date"])
        ]
        assert row["physical"] == sum(s["kind"] == "physical" for s in active)
        assert row["esim"] == sum(s["kind"] == "esim" for s in active)


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(moment=moments, name=st.sampled_from(ALL), agg=st.sampled_from(["COUNT", "AVG", "MAX"]))
def test_now_equals_the_last_five_minutes_of_the_series(
    moving: SandboxHandle, moment: datetime, name: str, agg: str
) -> None:
    sb = moving
    sb.clock.set(moment)
    metric = [{"name": name, "aggregation_type": agg}]
    now = ask(sb, body(sb, "NOW", "NOW", metric))
    w0 = datetime.fromisoformat(now["start_time"])
    w1 = datetime.fromisoformat(now["end_time"])
    assert w1 == w0 + timedelta(minutes=5) <= moment < w1 + timedelta(minutes=5)
    window = series(sb, body(sb, iso(w0), iso(w0 + timedelta(minutes=5)), metric))
    assert window[(name, agg)] == {w0: now[name]}
    hour = w0.replace(minute=0)
    count = [{"name": name, "aggregation_type": "COUNT"}]
    hourly = series(sb, body(sb, iso(hour), iso(hour + timedelta(hours=1)), count, "HOUR"))
    if agg == "COUNT":
        assert 0 <= now[name] <= hourly[(name, "COUNT")][hour]


@SETTINGS
@given(
    first=days,
    granularity=st.sampled_from(["HOUR", "DAY"]),
    cuts=st.lists(st.integers(1, 47), min_size=1, max_size=3, unique=True),
    name=st.sampled_from(ALL),
    agg=st.sampled_from(["COUNT", "AVG", "MAX", "MIN"]),
)
def test_windows_stitched_by_ownership_equal_the_whole_range(
    sandbox: SandboxHandle, first: date, granularity: str, cuts: list[int], name: str, agg: str
) -> None:
    step = timedelta(hours=1) if granularity == "HOUR" else timedelta(days=1)
    start = datetime(first.year, first.month, first.day, 4, 20, tzinfo=UTC)
    end = start + 48 * step
    bounds = [start, *sorted(start.replace(minute=0, hour=0 if step.days else 4) + c * step
                             for c in cuts), end]  # fmt: skip
    metric = [{"name": name, "aggregation_type": agg}]
    whole = series(sandbox, body(sandbox, iso(start), iso(end), metric, granularity))
    stitched: dict[datetime, float] = {}
    for k, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        part = series(sandbox, body(sandbox, iso(lo), iso(hi), metric, granularity))
        for t, v in part.get((name, agg), {}).items():
            if (lo <= t < hi) or (k == 0 and t < lo) or (k == len(bounds) - 2 and t >= hi):
                stitched[t] = v
    assert stitched == whole[(name, agg)]


@SETTINGS
@given(first=days, name=st.sampled_from(["uplink_bandwidth", "downlink_bandwidth",
                                         "ue_connections", "time_usage_seconds", *QUALITY]),
       granularity=st.sampled_from(["HOUR", "DAY", None]))  # fmt: skip
def test_min_avg_max_and_percentile_bounds(
    sandbox: SandboxHandle, first: date, name: str, granularity: str | None
) -> None:
    metrics: list[dict[str, Any]] = [{"name": name, "aggregation_type": a}
                                     for a in ("MIN", "AVG", "MAX")]  # fmt: skip
    start, end = iso(first), iso(first + timedelta(days=2))
    got = series(sandbox, body(sandbox, start, end, metrics, granularity))
    for t, avg in got[(name, "AVG")].items():
        assert got[(name, "MIN")][t] <= avg <= got[(name, "MAX")][t]
    for bound, agg in ((0, "MIN"), (100, "MAX")):
        pct = [
            {
                "name": name,
                "metric_filter_clauses": [
                    {"filters": [{"operator": "PERCENTILE", "comparison_value": bound}]}
                ],
            }
        ]
        assert (
            series(sandbox, body(sandbox, start, end, pct, granularity))[(name, None)]
            == got[(name, agg)]
        )


@SETTINGS
@given(day=days, name=st.sampled_from(QUALITY), subscriber=st.none() | st.integers(0, 63))
def test_quality_hours_and_days_agree(
    sandbox: SandboxHandle, day: date, name: str, subscriber: int | None
) -> None:
    extra = subscriber_scope(sandbox, subscriber)
    metrics = [{"name": name, "aggregation_type": a} for a in ("COUNT", "AVG", "MIN", "MAX",
                                                               "EXISTS")]  # fmt: skip
    metrics.append({"name": "ue_connections", "aggregation_type": "COUNT"})
    start, end = iso(day), iso(day + timedelta(days=1))
    d0 = datetime.fromisoformat(start)
    daily = series(sandbox, body(sandbox, start, end, metrics, "DAY", **extra))
    hourly = series(sandbox, body(sandbox, start, end, metrics, "HOUR", **extra))

    def at(
        got: dict[tuple[str, str | None], dict[datetime, float]], t: datetime
    ) -> dict[str, float]:
        return {agg: got[(name, agg)][t] for agg in ("COUNT", "AVG", "MIN", "MAX", "EXISTS")} | {
            "n": got[("ue_connections", "COUNT")][t]
        }

    hours = [at(hourly, d0 + timedelta(hours=h)) for h in range(24)]
    whole = at(daily, d0)
    for point in [*hours, whole]:
        assert point["EXISTS"] == (point["n"] > 0)
        if point["n"]:
            assert point["MIN"] <= point["AVG"] <= point["MAX"]
            assert abs(point["AVG"] - point["COUNT"] / point["n"]) <= 0.0005 + 1e-9
        else:
            assert point["COUNT"] == point["AVG"] == point["MIN"] == point["MAX"] == 0
    assert sum(h["COUNT"] for h in hours) == whole["COUNT"]
    assert sum(h["n"] for h in hours) == whole["n"]
    sampled = [h for h in hours if h["n"]]
    if sampled:
        assert whole["MAX"] == max(h["MAX"] for h in sampled)
        assert whole["MIN"] == min(h["MIN"] for h in sampled)


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(moment=moments, name=st.sampled_from(ALL),
       agg=st.sampled_from(["COUNT", "AVG", "MAX", "MIN"]))  # fmt: skip
def test_nothing_after_the_clock(
    moving: SandboxHandle, moment: datetime, name: str, agg: str
) -> None:
    sb = moving
    sb.clock.set(moment)
    day = datetime(moment.year, moment.month, moment.day, tzinfo=UTC)
    start, end = iso(day - timedelta(days=2)), iso(day + timedelta(days=3))
    metric = [{"name": name, "aggregation_type": agg}]
    count = [{"name": name, "aggregation_type": "COUNT"}]
    for granularity in ("HOUR", "DAY"):
        got = series(sb, body(sb, start, end, metric, granularity))[(name, agg)]
        assert got, "the days before the clock have buckets"
        assert max(got) <= moment, f"{granularity} bucket after the clock {moment}"
    # the bucket holding the clock has what happened up to it: HOUR sums to DAY
    daily = series(sb, body(sb, iso(day), iso(day + timedelta(days=1)), count, "DAY"))
    hourly = series(sb, body(sb, iso(day), iso(day + timedelta(days=1)), count, "HOUR"))
    hours = hourly[(name, "COUNT")].values()  # bandwidths are rounded to 3 decimals
    assert sum(hours) == pytest.approx(daily[(name, "COUNT")][day], abs=0.001 * len(hours))
    sims = ask(sb, body(sb, start, end, [{"name": "sim", "aggregation_type": "COUNT"}]))
    assert sims[-1]["date"] == moment.strftime("%d-%m-%Y")
    r = requests.post(sb.report_endpoint, params={"apikey": sb.api_key},
                      json=body(sb, "NOW", "NOW", metric), timeout=60)  # fmt: skip
    assert parsedate_to_datetime(r.headers["Date"]) == moment.replace(microsecond=0)
    assert datetime.fromisoformat(r.json()["end_time"]) <= moment
    future = body(sb, iso(day + timedelta(days=1)), iso(day + timedelta(days=3)), metric, "DAY")
    assert series(sb, future) == {}
