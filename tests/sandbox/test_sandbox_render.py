"""The sandbox's fast JSON writer: numbers and timestamps as Python would write them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgereports.sandbox.engine.render import stamp_matrix, value_matrix

#: A clock after every range asked here (the sandbox answers nothing after its clock).
LATER = datetime(2030, 1, 1, tzinfo=UTC).timestamp()


def texts(matrix: np.ndarray) -> list[str]:
    return [bytes(row).decode() for row in matrix]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(
    st.integers(0, 10**15).map(float),
    st.integers(0, 2 * 10**12).map(lambda n: n / 2),
    st.integers(0, 10**12).map(lambda n: n / 1000),
), min_size=1, max_size=50))  # fmt: skip
def test_numbers_parse_back_exactly(values: list[float]) -> None:
    written = texts(value_matrix(np.array(values)))
    assert len({len(t) for t in written}) == 1
    for text, value in zip(written, values, strict=True):
        parsed = orjson.loads(text)
        assert parsed == value
        assert isinstance(parsed, int) == float(value).is_integer()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 12, 31)),
             min_size=1, max_size=20),
    st.integers(-12 * 4, 14 * 4),
)  # fmt: skip
def test_stamps_match_datetime_isoformat(moments: list[datetime], quarters: int) -> None:
    offset = timedelta(minutes=15 * quarters)
    suffix = datetime(2022, 1, 1, tzinfo=timezone(offset)).isoformat()[-6:]
    epochs = np.array([int(m.replace(tzinfo=UTC).timestamp()) for m in moments])
    got = texts(stamp_matrix(epochs, int(offset.total_seconds()), suffix))
    want = [m.replace(tzinfo=UTC, microsecond=0).astimezone(timezone(offset)).isoformat()
            for m in moments]  # fmt: skip
    assert got == want


def test_z_suffix() -> None:
    assert texts(stamp_matrix(np.array([0, 86399]), 0, "Z")) == [
        "1970-01-01T00:00:00Z",
        "1970-01-01T23:59:59Z",
    ]


def test_both_time_series_writers_give_the_same_json() -> None:
    from edgereports.sandbox import build_network
    from edgereports.sandbox.engine.answer import SeriesAnswer, answer
    from edgereports.sandbox.engine.render import SMALL_ANSWER, _series_json, _series_small
    from edgereports.sandbox.engine.request import parse_report

    net = build_network(0, 16)
    pct = [{"operator": "PERCENTILE", "comparison_value": 90}]
    body = {
        "start_date_time": "2022-01-01T00:00:00+05:30",
        "end_date_time": "2022-03-01T00:00:00+05:30",
        "granularity": "HOUR",
        "dimensions": ["msisdn"],
        "dimension_filter_clauses": [{"filters": [
            {"dimension_name": "account_id", "operator": "EXACT",
             "expressions": [net.primary_account_id]},
            {"dimension_name": "msisdn", "operator": "EXACT",
             "expressions": [int(net.sims[2].msisdn)]}]}],
        "metrics": [{"name": "uplink_bytes", "aggregation_type": "COUNT"},
                    {"name": "downlink_bandwidth", "aggregation_type": "AVG"},
                    {"name": "uplink_bandwidth", "metric_filter_clauses": [{"filters": pct}]}],
    }  # fmt: skip
    ans = answer(parse_report(body), net, LATER, 0)
    assert isinstance(ans, SeriesAnswer)
    assert sum(len(a.values) for a in ans.arrays) > SMALL_ANSWER
    big, small = _series_json(ans).tobytes(), _series_small(ans)
    assert b"  " in big and b"  " not in small
    assert orjson.loads(big) == orjson.loads(small)
    assert any(arr.grid is not None for arr in ans.arrays)
    for arr in ans.arrays:  # the memoised stamps of a grid are those computed one by one
        arr.grid = None
    assert _series_json(ans).tobytes() == big


def reference_json(ans: Any) -> bytes:
    """A small time series as dicts through orjson: what the compact writer must match."""
    result = []
    for arr in ans.arrays:
        m = arr.metric
        extra = {} if m.percentile is not None else {"aggregation_type": m.aggregation}
        stamps = texts(stamp_matrix(arr.stamps, ans.offset, ans.suffix))
        result.append([{"time_stamp": t, "name": m.name,
                        "value": int(v) if v.is_integer() else v, **extra}
                       for t, v in zip(stamps, arr.values.tolist(), strict=True)])  # fmt: skip
    return orjson.dumps({"result": result, **dict(ans.echo)})


def small_body(acct: str, start: str, end: str, granularity: str | None,
               metrics: list[dict[str, Any]], **dims: Any) -> dict[str, Any]:  # fmt: skip
    flt = [{"dimension_name": "account_id", "operator": "EXACT", "expressions": [acct]}]
    flt += [{"dimension_name": d, "operator": "EXACT", "expressions": [v]} for d, v in dims.items()]
    body: dict[str, Any] = {
        "start_date_time": start,
        "end_date_time": end,
        "dimension_filter_clauses": [{"filters": flt}],
        "metrics": metrics,
    }
    if granularity:
        body["granularity"] = granularity
    if dims:
        body["dimensions"] = list(dims)
    return body


PCT = [{"filters": [{"operator": "PERCENTILE", "comparison_value": 75}]}]
SMALL_CASES: dict[str, tuple[str, str, str | None, list[dict[str, Any]], bool]] = {
    "a year of DAY for one subscriber": (
        "2022-01-01T00:00:00+05:30", "2023-01-01T00:00:00+05:30", "DAY",
        [{"name": "time_usage_seconds", "aggregation_type": "COUNT"}], True),
    "HOUR, halves, fractions and a percentile": (
        "2022-03-01T10:20:00-03:00", "2022-03-04T00:00:00-03:00", "HOUR",
        [{"name": "uplink_bytes", "aggregation_type": "COUNT"},
         {"name": "downlink_bandwidth", "aggregation_type": "AVG"},
         {"name": "uplink_bandwidth", "metric_filter_clauses": PCT}], True),
    "link quality over the account in UTC": (
        "2022-03-01T00:00:00Z", "2022-03-20T00:00:00Z", "DAY",
        [{"name": "packet_latency", "aggregation_type": "AVG"},
         {"name": "packet_loss", "aggregation_type": "MAX"}], False),
    "one point without granularity": (
        "2022-03-01T00:07:00+14:00", "2022-03-02T00:00:00+14:00", None,
        [{"name": "ue_connections", "aggregation_type": "MIN"}], False),
}  # fmt: skip


@pytest.mark.parametrize("case", list(SMALL_CASES))
def test_small_series_are_written_as_orjson_writes_their_dicts(case: str) -> None:
    from edgereports.sandbox import build_network
    from edgereports.sandbox.engine.answer import SeriesAnswer, answer
    from edgereports.sandbox.engine.render import SMALL_ANSWER, _series_small, render_json
    from edgereports.sandbox.engine.request import parse_report

    net = build_network(0, 16)
    start, end, granularity, metrics, one = SMALL_CASES[case]
    dims = {"msisdn": net.sims[3].msisdn} if one else {}
    body = small_body(net.primary_account_id, start, end, granularity, metrics, **dims)
    ans = answer(parse_report(body), net, LATER, 0)
    assert isinstance(ans, SeriesAnswer)
    assert 0 < sum(len(a.values) for a in ans.arrays) <= SMALL_ANSWER
    for arr in ans.arrays:
        if arr.grid is not None:  # the grid describes the stamps exactly
            first, step = arr.grid
            assert arr.stamps.tolist() == [first + k * step for k in range(len(arr.stamps))]
    want = reference_json(ans)
    assert render_json(ans) == want
    assert _series_small(ans) == want  # again, from the memoised texts of the grid
    for arr in ans.arrays:
        arr.grid = None
    assert _series_small(ans) == want


def test_empty_arrays_and_no_echo() -> None:
    from edgereports.sandbox.engine.answer import SeriesAnswer, SeriesArray
    from edgereports.sandbox.engine.fields import MetricSpec
    from edgereports.sandbox.engine.render import _series_small

    spec = MetricSpec("uplink_bytes", "COUNT", None, 0)
    one = SeriesArray(spec, np.array([0]), np.array([2.5]), (0, 0))
    empty = SeriesArray(spec, np.zeros(0, dtype=np.int64), np.zeros(0), (0, 3600))
    for ans in (SeriesAnswer([empty, one], 0, "Z", []),
                SeriesAnswer([one, empty], 3600, "+01:00", [("account_id", "a")])):  # fmt: skip
        assert _series_small(ans) == reference_json(ans)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(
    st.integers(0, 10**15).map(float),
    st.integers(0, 2 * 10**12).map(lambda n: n / 2),
    st.integers(0, 10**12).map(lambda n: n / 1000),
    st.floats(-1e18, 1e18),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), -0.0]),
), min_size=1, max_size=30))  # fmt: skip
def test_number_texts_are_what_orjson_writes_for_the_python_numbers(values: list[float]) -> None:
    from edgereports.sandbox.engine.render import _number_texts, _numbers

    v = np.array(values)
    assert _number_texts(v) == [orjson.dumps(x) for x in _numbers(v)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(
    st.integers(0, 10**15).map(float),
    st.integers(0, 2 * 10**12).map(lambda n: n / 2),
    st.integers(0, 10**12).map(lambda n: n / 1000),
    st.floats(0, 1e9, allow_nan=False),
), min_size=1, max_size=50), st.integers(0, 3))  # fmt: skip
def test_compiled_numbers_are_the_numpy_writers_bytes(values: list[float], margin: int) -> None:
    from edgereports.sandbox.engine.json_kernel import number_layout, write_numbers

    v = np.array(values)
    want = value_matrix(v)
    iw, frac = number_layout(v)
    wn = iw + 4 * frac
    assert wn == want.shape[1]
    width = wn + 2 * margin + 1  # rows wider than the number: the rest must stay untouched
    buf = np.full(1 + len(v) * width, ord("#"), dtype=np.uint8)
    write_numbers(buf, 1, width, margin, v, iw, frac)
    rows = buf[1:].reshape(len(v), width)
    assert texts(rows[:, margin : margin + wn]) == texts(want)
    assert (rows[:, :margin] == ord("#")).all() and (rows[:, margin + wn :] == ord("#")).all()
    assert buf[0] == ord("#")
