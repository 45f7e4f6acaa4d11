"""The sandbox's fast JSON writer: numbers and timestamps as Python would write them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from edgereports.sandbox.render import stamp_matrix, value_matrix


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
    from edgereports.sandbox.engine import SeriesAnswer, answer
    from edgereports.sandbox.render import SMALL_ANSWER, _series_json, _series_small
    from edgereports.sandbox.reportreq import parse_report

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
    ans = answer(parse_report(body), net, 0.0, 0)
    assert isinstance(ans, SeriesAnswer)
    assert sum(len(a.values) for a in ans.arrays) > SMALL_ANSWER
    big, small = _series_json(ans), _series_small(ans)
    assert b"  " in big and b"  " not in small
    assert orjson.loads(big) == orjson.loads(small)
