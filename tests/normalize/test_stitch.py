"""stitch (windows kept by ownership) and concat_frames (fan-out answers)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgereports.errors import InputError
from edgereports.normalize import concat_frames, stitch, to_frame
from edgereports.normalize.parts import frame_of, in_order, owned, read_rows
from edgereports.normalize.timeseries import read_blocks
from edgereports.schema import empty_frame, validate_frame

IST = timezone(timedelta(hours=5, minutes=30))
HOUR = timedelta(hours=1)
METRICS = [("uplink_bytes", "COUNT"), ("downlink_bytes", "COUNT")]


def request(start: datetime, end: datetime) -> dict[str, Any]:
    return {
        "start_date_time": start.astimezone(IST).isoformat(),
        "end_date_time": end.astimezone(IST).isoformat(),
        "granularity": "HOUR",
        "dimensions": ["msisdn"],
        "dimension_filter_clauses": [
            {
                "filters": [
                    {"dimension_name": "account_id", "operator": "EXACT", "expressions": ["A"]}
                ]
            }
        ],
        "metrics": [{"name": n, "aggregation_type": a} for n, a in METRICS],
    }


def value(bucket: datetime, metric: str) -> float:
    return (bucket.timestamp() // 3600) % 1000 + (0.5 if metric.startswith("up") else 0.0)


def answer(start: datetime, end: datetime, *, point_at_end: bool, reverse: bool) -> dict[str, Any]:
    """What the live service sends: every HOUR bucket overlapping [start, end), stamped in
    +05:30, optionally a final point stamped at ``end``; inner arrays in either order."""
    first = start.replace(minute=0, second=0, microsecond=0)
    buckets = []
    b = first
    while b < end:
        buckets.append(b)
        b += HOUR
    if point_at_end and end.minute == 0 and end not in buckets:
        buckets.append(end)
    arrays = [
        [
            {
                "time_stamp": t.astimezone(IST).isoformat(),
                "name": name,
                "value": value(t, name),
                "aggregation_type": agg,
            }
            for t in buckets
        ]
        for name, agg in METRICS
    ]
    return {
        "result": arrays[::-1] if reverse else arrays,
        "account_id": "A",
        "msisdn": 919876543210,
    }


@settings(max_examples=60, deadline=None)
@given(
    start_minute=st.integers(0, 59),
    hours=st.integers(1, 30),
    data=st.data(),
)
def test_windowed_pull_equals_whole_range(start_minute: int, hours: int, data: Any) -> None:
    start = datetime(2022, 7, 7, 3, start_minute, tzinfo=UTC)
    end = start + hours * HOUR + timedelta(minutes=data.draw(st.integers(0, 59)))
    inner = [start.replace(minute=0) + k * HOUR for k in range(1, hours + 1)]
    inner = [b for b in inner if start < b < end]
    cuts = sorted(data.draw(st.sets(st.sampled_from(inner), max_size=5)) if inner else [])
    bounds = [start, *cuts, end]
    final = data.draw(st.booleans())
    req = request(start, end)
    whole = to_frame(answer(start, end, point_at_end=final, reverse=False), req)
    parts = []
    for k, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        last = k == len(bounds) - 2
        extra = final if last else data.draw(st.booleans())
        payload = answer(lo, hi, point_at_end=extra, reverse=data.draw(st.booleans()))
        parts.append((to_frame(payload, request(lo, hi)), lo, hi))
    stitched = stitch(parts)
    pd.testing.assert_frame_equal(
        stitched.reset_index(drop=True), whole.reset_index(drop=True), check_like=False
    )
    assert stitched.attrs == parts[0][0].attrs


def test_ownership_rules_on_a_small_example() -> None:
    lo, mid, hi = (datetime(2022, 7, 7, h, 20, tzinfo=UTC) for h in (4, 6, 8))
    mid = mid.replace(minute=0)
    a = to_frame(answer(lo, mid, point_at_end=True, reverse=True), request(lo, mid))
    b = to_frame(answer(mid, hi, point_at_end=False, reverse=False), request(mid, hi))
    assert a["time_stamp"].min() < pd.Timestamp(lo)
    assert (a["time_stamp"] == pd.Timestamp(mid)).any()
    out = stitch([(a, lo, mid), (b, mid, hi)])
    stamps = sorted(set(out["time_stamp"]))
    assert [s.hour for s in stamps] == [4, 5, 6, 7, 8]
    assert len(out) == 10
    assert out["metric"].tolist()[:5] == ["uplink_bytes"] * 5


def test_a_part_trimmed_at_the_range_end_shares_its_rows_and_its_frame_can_be_written() -> None:
    """The range rule on a pull's part keeps slices of its table (no copy of every row for
    the one bucket at the end), counts what went, and the frame built from it owns writable
    columns."""
    lo, hi = datetime(2022, 7, 7, 4, tzinfo=UTC), datetime(2022, 7, 7, 9, tzinfo=UTC)
    req = request(lo, hi)
    body = orjson.dumps(answer(lo, hi, point_at_end=True, reverse=False))
    part = read_rows(body, req, csv=False).table()
    assert part.num_rows == 12  # 5 buckets and the one at the end, 2 metrics
    kept, (after,), _ = owned([part], [(lo, hi, True, False)])
    assert (kept.num_rows, after) == (10, 2)
    values = [chunk.to_numpy() for chunk in part["value"].chunks]
    for chunk in kept["value"].chunks:
        assert any(np.shares_memory(v, chunk.to_numpy()) for v in values)
    frame = frame_of(kept)
    whole = to_frame(body, req)
    in_range = whole[whole["time_stamp"] < pd.Timestamp(hi)].reset_index(drop=True)
    pd.testing.assert_frame_equal(frame, in_range)
    frame.loc[0, "time_stamp"] = pd.Timestamp(hi)
    frame.loc[0, "value"] = -1.0
    assert (frame.loc[0, "time_stamp"], frame.loc[0, "value"]) == (pd.Timestamp(hi), -1.0)


def _fan_out(subscribers: int, hours: int) -> tuple[list[pa.Table], list[list[int]], Any]:
    """The tables of one answer per subscriber (``hours`` HOUR buckets, two metrics)."""
    lo = datetime(2022, 7, 7, tzinfo=UTC)
    req = request(lo, lo + hours * HOUR)
    tables, runs = [], []
    for k in range(subscribers):
        payload = {**answer(lo, lo + hours * HOUR, point_at_end=False, reverse=False),
                   "msisdn": 919800000000 + k}  # fmt: skip
        table, lengths = read_rows(orjson.dumps(payload), req, csv=False).built()
        tables.append(table)
        runs.append(lengths or [])
    return tables, runs, req


def _frame_and_reference(subscribers: int, hours: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    tables, runs, req = _fan_out(subscribers, hours)
    kept, _, starts = owned(tables, [None] * len(tables), runs=runs)
    frame = frame_of(in_order(kept, req, starts))
    reference = concat_frames([frame_of(t) for t in tables])
    return frame, reference


def test_a_frame_of_many_long_answers_holds_each_text_once_per_answer_not_per_row() -> None:
    """A pull's frame keeps its text columns as slices of one array per value (the metric
    and the account are held once for every answer, a subscriber once for its two metrics),
    past the chunks pandas handles well, and equals the answers' frames joined."""
    frame, reference = _frame_and_reference(subscribers=150, hours=300)
    pd.testing.assert_frame_equal(frame, reference)
    assert len(frame) == 150 * 300 * 2
    # one array of the column's rows would hold an offset and the text for every row
    for column, width, share in (("metric", len("downlink_bytes"), 0.05),
                                 ("account_id", 1, 0.05),
                                 ("msisdn", len("919800000000"), 0.55)):  # fmt: skip
        held = pa.chunked_array(pa.array(frame[column].array))
        assert held.num_chunks > 128, column
        assert held.get_total_buffer_size() < len(frame) * (8 + width) * share, column


def test_a_frame_of_many_short_answers_joins_each_text_column_into_one_array() -> None:
    """Answers of a few rows each give a text column of one array, not thousands of tiny
    chunks pandas works on slowly."""
    frame, reference = _frame_and_reference(subscribers=200, hours=3)
    pd.testing.assert_frame_equal(frame, reference)
    for column in ("account_id", "msisdn", "metric", "aggregation"):
        assert pa.chunked_array(pa.array(frame[column].array)).num_chunks == 1, column


def test_sim_counts_stitch_by_date() -> None:
    req = {
        "start_date_time": "2022-07-07T09:50:00+05:30",
        "end_date_time": "2022-07-10T09:50:00+05:30",
        "dimension_filter_clauses": [
            {
                "filters": [
                    {"dimension_name": "account_id", "operator": "EXACT", "expressions": ["A"]}
                ]
            }
        ],
        "metrics": [{"name": "sim", "aggregation_type": "COUNT"}],
    }
    days = {7: 10, 8: 11, 9: 12, 10: 13}
    first = to_frame(
        [{"date": f"{d:02d}-07-2022", "physical": days[d], "esim": 1} for d in (7, 8)], req
    )
    second = to_frame(
        [{"date": f"{d:02d}-07-2022", "physical": days[d], "esim": 1} for d in (10, 8, 9)], req
    )
    start = datetime(2022, 7, 7, 4, 20, tzinfo=UTC)
    cut = datetime(2022, 7, 8, tzinfo=UTC)
    end = datetime(2022, 7, 10, 4, 20, tzinfo=UTC)
    out = stitch([(first, start, cut), (second, cut, end)])
    validate_frame(out, "sim_count")
    assert out["physical"].tolist() == [10, 11, 12, 13]
    assert out.attrs["shape"] == "sim_count"


def test_single_window_keeps_everything() -> None:
    lo = datetime(2022, 7, 7, 4, 20, tzinfo=UTC)
    hi = lo + 3 * HOUR
    frame = to_frame(answer(lo, hi, point_at_end=True, reverse=False), request(lo, hi))
    pd.testing.assert_frame_equal(stitch([(frame, lo, hi)]), frame)


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        ([], "stitch needs at least one window or a shape"),
        (
            [(empty_frame("timeseries"), datetime(2022, 7, 7), datetime(2022, 7, 8))],
            "window 0 start must be timezone-aware",
        ),
        (
            [
                (
                    empty_frame("timeseries"),
                    datetime(2022, 7, 8, tzinfo=UTC),
                    datetime(2022, 7, 7, tzinfo=UTC),
                )
            ],
            "window 0 starts after it ends",
        ),
        ([(empty_frame("timeseries"), "soon", "later")], "window 0 start is not a time"),
        (
            [
                (
                    pd.DataFrame({"x": [1]}),
                    datetime(2022, 7, 7, tzinfo=UTC),
                    datetime(2022, 7, 8, tzinfo=UTC),
                )
            ],
            "cannot tell the shape",
        ),
    ],
)
def test_stitch_rejects(parts: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        stitch(parts)


def test_stitch_of_nothing_with_a_shape_is_empty() -> None:
    df = stitch([], shape="current")
    assert len(df) == 0 and df.attrs["shape"] == "current"


def test_concat_frames_fan_out() -> None:
    lo = datetime(2022, 7, 7, 4, tzinfo=UTC)
    hi = lo + 2 * HOUR
    one = to_frame(answer(lo, hi, point_at_end=False, reverse=False), request(lo, hi))
    other_payload = answer(lo, hi, point_at_end=False, reverse=True)
    other_payload["msisdn"] = "919800000001"
    other_payload["lr_id"] = "LR-2"
    other = to_frame(other_payload, request(lo, hi))
    empty = empty_frame("timeseries", ["msisdn"])
    both = concat_frames([one, empty, other])
    validate_frame(both, "timeseries")
    assert list(both.columns)[2:4] == ["msisdn", "lr_id"]
    assert both["msisdn"].tolist() == ["919876543210"] * 4 + ["919800000001"] * 4
    assert both["lr_id"].tolist() == [pd.NA] * 4 + ["LR-2"] * 4
    assert both.attrs == one.attrs
    assert str(both["msisdn"].dtype) == "string"
    assert list(both.index) == list(range(8))


def test_concat_frames_edge_cases() -> None:
    assert len(concat_frames([], shape="sim_count")) == 0
    with pytest.raises(InputError, match="needs at least one frame or a shape"):
        concat_frames([])
    with pytest.raises(InputError, match="cannot concatenate"):
        concat_frames([empty_frame("timeseries"), pd.DataFrame({"x": [1]})])
    only_empty = concat_frames([empty_frame("current", ["ue_ip"]), empty_frame("current")])
    assert "ue_ip" in only_empty.columns and len(only_empty) == 0


def test_the_metrics_of_a_series_share_one_parse_of_their_stamps_and_keep_their_own_points() -> (
    None
):
    """Arrays whose stamps equal those of the array before share their parse (read-only); a
    part cut in a window keeps each array's own points, and its frame can be written."""
    lo, hi = datetime(2022, 7, 7, 4, tzinfo=UTC), datetime(2022, 7, 7, 9, tzinfo=UTC)
    req = request(lo, hi)
    payload = answer(lo, hi, point_at_end=True, reverse=False)
    later = [
        {**p, "time_stamp": (datetime.fromisoformat(p["time_stamp"]) + HOUR * 1.5).isoformat()}
        for p in payload["result"][1]
    ]
    payload["result"].append(
        [{**p, "aggregation_type": "AVERAGE", "value": i} for i, p in enumerate(later)]
    )
    (first, second, third), _ = read_blocks(orjson.loads(orjson.dumps(payload)), owned=True)
    assert first.stamps is second.stamps and not first.stamps.flags.writeable
    assert third.stamps is not second.stamps
    cut = lo + HOUR * 2
    kept, _, _ = owned(
        [read_rows(orjson.dumps(payload), req, csv=False).table()], [(cut, hi, False, True)]
    )
    frame = frame_of(in_order(kept, req))
    expected = sorted(
        (p["name"], p["aggregation_type"], datetime.fromisoformat(p["time_stamp"]), p["value"])
        for array in payload["result"]
        for p in array
        if datetime.fromisoformat(p["time_stamp"]) >= cut
    )
    got = sorted(
        zip(
            frame["metric"],
            frame["aggregation"],
            frame["time_stamp"].dt.to_pydatetime(),
            frame["value"],
            strict=True,
        )
    )
    assert got == expected
    frame.loc[0, "time_stamp"] = pd.Timestamp(lo)
    assert frame.loc[0, "time_stamp"] == pd.Timestamp(lo)
    assert (first.stamps == second.stamps).all() and first.stamps.min() > 0
