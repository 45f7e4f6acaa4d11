"""canonical_order (the row order of one answer) and the rows a window owns."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgereports.errors import InputError
from edgereports.normalize import concat_frames, stitch
from edgereports.normalize._order import Keys, _row_order, _run_order, _runs
from edgereports.normalize._request import request_info
from edgereports.normalize.parts import frame_of, owned, table_of
from edgereports.normalize.stitching import canonical_order
from edgereports.schema import empty_frame, validate_frame

T0 = datetime(2022, 7, 7, tzinfo=UTC)
HOUR = timedelta(hours=1)
REQUEST: dict[str, Any] = {
    "start_date_time": "2022-07-07T05:30:00+05:30",
    "end_date_time": "2022-07-09T05:30:00+05:30",
    "granularity": "HOUR",
    "dimensions": ["msisdn"],
    "metrics": [
        {"name": "uplink_bytes", "aggregation_type": "COUNT"},
        {
            "name": "uplink_bandwidth",
            "metric_filter_clauses": [
                {"filters": [{"operator": "PERCENTILE", "comparison_value": 90}]}
            ],
        },
        {"name": "downlink_bytes", "aggregation_type": "COUNT"},
        {
            "name": "uplink_bandwidth",
            "metric_filter_clauses": [
                {"filters": [{"operator": "PERCENTILE", "comparison_value": 50}]}
            ],
        },
    ],
}
# (metric, aggregation, percentile): requested ones, and one the request does not name
ENTRIES = [
    ("uplink_bytes", "COUNT", None),
    ("uplink_bandwidth", None, 90.0),
    ("downlink_bytes", "COUNT", None),
    ("uplink_bandwidth", None, 50.0),
    ("jitter", "AVG", None),
]
MSISDNS = ["919800000001", "919800000002", None]


def part(msisdn: str | None, entry: int, hours: list[int], account: str = "A") -> pd.DataFrame:
    """A timeseries frame of one series and one metric entry at ``hours`` after T0."""
    name, agg, pct = ENTRIES[entry]
    n = len(hours)
    if not n:
        return empty_frame("timeseries", ["msisdn"])
    raw = pd.DataFrame(
        {
            "time_stamp": [T0 + h * HOUR for h in hours],
            "account_id": [account] * n,
            "msisdn": [msisdn] * n,
            "metric": [name] * n,
            "aggregation": [agg] * n,
            "percentile": [math.nan if pct is None else pct] * n,
            "value": [float(h) for h in hours],
        }
    )
    return validate_frame(raw, "timeseries")


def reference(frame: pd.DataFrame) -> pd.DataFrame:
    """The canonical order, computed independently: pandas codes and a stable lexsort."""
    series = pd.Series(
        list(zip(frame["account_id"].astype(object), frame["msisdn"].astype(object), strict=True))
    )
    series_codes = series.map(lambda k: tuple(None if v is pd.NA else v for v in k))
    first_seen: dict[Any, int] = {}
    s = np.array([first_seen.setdefault(k, len(first_seen)) for k in series_codes])
    requested = {e: i for i, e in reversed(list(enumerate(ENTRIES[:4])))}
    unknown: dict[Any, int] = {}
    ranks = []
    columns = (frame["metric"], frame["aggregation"], frame["percentile"])
    for name, agg, pct in zip(*columns, strict=True):
        key = (name, None if agg is pd.NA else agg, None if math.isnan(pct) else pct)
        index = requested.get(key)
        if index is None:
            index = 4 + unknown.setdefault((key[0], key[1]), len(unknown))
        ranks.append(index)
    stamps = frame["time_stamp"].to_numpy(dtype="datetime64[us]").view(np.int64)
    order = np.lexsort((stamps, np.array(ranks), s))
    return frame.take(order).reset_index(drop=True)


PARTS = st.lists(
    st.tuples(
        st.sampled_from(range(len(MSISDNS))),
        st.sampled_from(range(len(ENTRIES))),
        st.lists(st.integers(0, 40), min_size=0, max_size=6),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=80, deadline=None)
@given(parts=PARTS)
@pytest.mark.slow
def test_canonical_order_equals_a_plain_lexsort(parts: list[tuple[int, int, list[int]]]) -> None:
    frame = concat_frames([part(MSISDNS[m], e, hours) for m, e, hours in parts])
    frame.attrs["request"] = REQUEST
    got = canonical_order(frame)
    expected = reference(frame)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected)
    assert got.attrs == frame.attrs
    # the two ways of ranking (runs of equal keys, and row by row) agree
    req = request_info(REQUEST)
    series = [frame["account_id"], frame["msisdn"]]
    entries = [frame["metric"], frame["aggregation"], frame["percentile"]]
    keys = Keys(
        series, entries, frame["time_stamp"].to_numpy(dtype="datetime64[us]").view(np.int64)
    )
    starts = _runs([*series, *entries], len(frame)) if len(frame) > 1 else None
    if starts is not None:
        by_runs = _run_order(starts, keys, req)
        by_rows = _row_order(keys, req)
        identity = np.arange(len(frame))
        assert np.array_equal(
            identity if by_runs is None else by_runs, identity if by_rows is None else by_rows
        )


def test_canonical_order_of_ordered_rows_is_the_frame_itself() -> None:
    frame = concat_frames([part(MSISDNS[0], 0, [1, 2]), part(MSISDNS[0], 2, [1, 2])])
    assert canonical_order(frame, REQUEST) is frame


def test_canonical_order_uses_the_request_given() -> None:
    frame = concat_frames([part(MSISDNS[0], 2, [1]), part(MSISDNS[0], 0, [1])])
    assert canonical_order(frame, REQUEST)["metric"].tolist() == ["uplink_bytes", "downlink_bytes"]
    # without a request, entries keep their order of appearance
    assert canonical_order(frame)["metric"].tolist() == ["downlink_bytes", "uplink_bytes"]


def test_canonical_order_of_sim_counts_and_current_values() -> None:
    sims = validate_frame(
        pd.DataFrame(
            {
                "date": pd.to_datetime(["2022-07-09", "2022-07-07", "2022-07-08"]),
                "account_id": ["A", "A", "A"],
                "physical": [3, 1, 2],
                "esim": [0, 0, 0],
            }
        ),
        "sim_count",
    )
    assert canonical_order(sims)["physical"].tolist() == [1, 2, 3]
    now = T0.isoformat()
    current = validate_frame(
        pd.DataFrame(
            {
                "start_time": [now] * 4,
                "end_time": [now] * 4,
                "account_id": ["A"] * 4,
                "msisdn": ["1", "2", "1", "2"],
                "metric": ["ue_connections"] * 4,
                "aggregation": ["MAX", "MAX", "AVG", "AVG"],
                "value": [1.0, 2.0, 3.0, 4.0],
                "value_text": [None] * 4,
            }
        ),
        "current",
    )
    request = {
        "start_date_time": "NOW",
        "end_date_time": "NOW",
        "metrics": [
            {"name": "ue_connections", "aggregation_type": "MAX"},
            {"name": "ue_connections", "aggregation_type": "AVG"},
        ],
    }
    assert canonical_order(current, request)["value"].tolist() == [1.0, 3.0, 2.0, 4.0]


@pytest.mark.parametrize(
    ("frame", "shape", "message"),
    [
        (pd.DataFrame({"x": [1, 2]}), None, "cannot tell the shape"),
        (
            pd.DataFrame({"date": [1, 2], "account_id": ["A", "A"]}),
            "sim_count",
            r"sim_count frame lacks column\(s\) physical, esim",
        ),
        (
            pd.DataFrame({"date": [1, 2], "account_id": ["A", "A"], "physical": [1, 2]}).assign(
                esim=[0, 0]
            ),
            None,
            "sim_count frame's date column is not a timestamp",
        ),
    ],
)
def test_canonical_order_rejects(frame: pd.DataFrame, shape: str | None, message: str) -> None:
    with pytest.raises(InputError, match=message):
        canonical_order(frame, shape=shape)


def test_a_window_owns_its_rows_and_the_open_ends() -> None:
    table = table_of(part(MSISDNS[0], 0, [0, 1, 2, 3, 4]))
    lo, hi = T0 + HOUR, T0 + 3 * HOUR

    def values(first: bool, last: bool) -> list[float]:
        kept = owned([table], [(lo, hi, first, last)]).table
        return list(kept.column("value").to_pylist())

    assert values(False, False) == [1.0, 2.0]
    assert values(True, False) == [0.0, 1.0, 2.0]
    assert values(False, True) == [1.0, 2.0, 3.0, 4.0]
    assert owned([table], [(lo, hi, False, False)]).gone == [2]  # two rows at or after the end
    assert owned([table], [(T0, T0 + 9 * HOUR, False, False)]).table is table
    assert table.num_rows == 5  # the input is left as it was


def test_the_owned_rows_of_a_pull_agree_with_stitch() -> None:
    frames = [part(MSISDNS[0], 0, [0, 1, 2]), part(MSISDNS[0], 0, [2, 3, 4])]
    bounds = [(T0, T0 + 2 * HOUR), (T0 + 2 * HOUR, T0 + 5 * HOUR)]
    kept = owned(
        [table_of(f) for f in frames],
        [(lo, hi, k == 0, k == 1) for k, (lo, hi) in enumerate(bounds)],
    ).table
    stitched = stitch([(f, lo, hi) for f, (lo, hi) in zip(frames, bounds, strict=True)])
    pd.testing.assert_frame_equal(frame_of(kept), stitched, check_like=False)


@pytest.mark.parametrize(
    ("frame", "start", "end", "message"),
    [
        (part(None, 0, [1]), datetime(2022, 7, 7), T0, "window 0 start must be timezone-aware"),
        (part(None, 0, [1]), T0 + HOUR, T0, "window 0 starts after it ends"),
        (part(None, 0, [1]), "soon", T0, "window 0 start is not a time"),
        (pd.DataFrame({"x": [1]}), T0, T0 + HOUR, "cannot tell the shape"),
        (
            pd.DataFrame(
                {"time_stamp": ["2022-07-07"], "account_id": ["A"], "metric": ["m"]}
                | {"aggregation": [None], "percentile": [1.0], "value": [1.0]}
            ),
            T0,
            T0 + HOUR,
            "timeseries frame's time_stamp column is not a timestamp",
        ),
    ],
)
def test_stitch_rejects_windows(frame: pd.DataFrame, start: Any, end: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        stitch([(frame, start, end), (frame, T0 + HOUR, T0 + 2 * HOUR)])


def test_the_owned_rows_of_an_empty_answer() -> None:
    empty = table_of(empty_frame("timeseries", ["msisdn"]))
    kept, after, _ = owned([empty], [(T0, T0 + HOUR, False, False)])
    assert kept.num_rows == 0 and after == [0]
