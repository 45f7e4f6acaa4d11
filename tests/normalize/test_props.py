"""Property tests: valid answers never raise and give the points they hold, from JSON and CSV;
random and mutated payloads give a schema-conforming frame or SchemaError, nothing else."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edgereports.errors import SchemaError
from edgereports.normalize import read_csv, to_frame
from edgereports.normalize._arrowjson import read_timeseries
from edgereports.normalize.parts import frame_of, in_order, owned, read_rows, table_of
from edgereports.schema import schema_for

OFFSETS = {
    "+05:30": timedelta(hours=5, minutes=30),
    "-04:00": timedelta(hours=-4),
    "Z": timedelta(0),
    "+00:00": timedelta(0),
    "": timedelta(0),  # no offset: read as UTC
}
NAMES = ["uplink_bytes", "downlink_bytes", "ue_connections", "jitter", "custom_metric"]
AGGS = ["COUNT", "AVG", "MAX", "EXISTS"]
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def conforms(df: pd.DataFrame) -> None:
    """The frame has exactly its schema: columns, order, dtypes; validate changes nothing."""
    schema = schema_for(df.attrs["shape"])
    dims = schema.dimensions_of(df)
    assert {c: str(t) for c, t in df.dtypes.items()} == {
        c: str(t) for c, t in schema.dtypes(dims).items()
    }
    pd.testing.assert_frame_equal(schema.validate(df), df)


def outcome(fn: Any, *args: Any) -> pd.DataFrame | None:
    """Run ``fn``; a frame must conform, an error must be a SchemaError (None then)."""
    try:
        df = fn(*args)
    except SchemaError as exc:
        assert exc.where is not None
        return None
    conforms(df)
    return df


def stamp(moment: datetime, offset: str) -> str:
    local = moment.astimezone(timezone(OFFSETS[offset])).replace(tzinfo=None)
    return local.isoformat() + ("Z" if offset == "Z" else offset)


ids = st.one_of(st.integers(0, 10**15), st.from_regex(r"[A-Za-z0-9]{1,12}", fullmatch=True))
moments = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 1, 1)).map(
    lambda d: d.replace(microsecond=0, second=0, tzinfo=UTC)
)
numbers = st.one_of(
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=64, min_value=-1e15, max_value=1e15),
)
values = st.one_of(numbers, numbers, st.sampled_from(["YES", "NO"]))


@st.composite
def timeseries(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], list[tuple[Any, ...]]]:
    """A valid answer, its request, and the (metric, aggregation, utc, value, percentile) rows."""
    entries: list[tuple[str, str | None, float | None]] = []
    for name in draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True)):
        for agg in draw(
            st.lists(st.sampled_from([*AGGS, None]), min_size=1, max_size=2, unique=True)
        ):
            entries.append((name, agg, None if agg else float(draw(st.integers(1, 99)))))
    dims = draw(st.lists(st.sampled_from(["msisdn", "imsi", "customer_site_id"]), unique=True))
    offset = draw(st.sampled_from(list(OFFSETS)))
    arrays, rows = [], []
    for name, agg, pct in entries:
        points = []
        for moment, value in draw(st.lists(st.tuples(moments, values), max_size=8)):
            shown = draw(st.sampled_from([offset, offset, *OFFSETS]))  # mostly the request's
            p: dict[str, Any] = {"time_stamp": stamp(moment, shown), "name": name, "value": value}
            if agg is not None:
                p["aggregation_type"] = agg
            points.append(p)
            number = {"YES": 1.0, "NO": 0.0}.get(value, value) if isinstance(value, str) else value
            rows.append((name, agg, pd.Timestamp(moment), float(number), pct))
        arrays.append(points)
    order = draw(st.permutations(range(len(arrays))))
    payload: dict[str, Any] = {"result": [arrays[i] for i in order]}
    echoed = draw(st.lists(st.sampled_from([*dims, "account_id", "lr_id"]), unique=True))
    for key in echoed:
        payload[key] = draw(ids)
    request = {
        "start_date_time": "2000-01-01T00:00:00" + (offset if offset not in ("Z", "") else "Z"),
        "end_date_time": "2099-01-01T00:00:00" + (offset if offset not in ("Z", "") else "Z"),
        "granularity": "HOUR",
        "dimensions": dims,
        "dimension_filter_clauses": [
            {
                "filters": [
                    {"dimension_name": "account_id", "operator": "EXACT", "expressions": ["A1"]}
                ]
            }
        ],
        "metrics": [
            {"name": n, "aggregation_type": a}
            if a
            else {
                "name": n,
                "metric_filter_clauses": [
                    {"filters": [{"operator": "PERCENTILE", "comparison_value": p}]}
                ],
            }
            for n, a, p in entries
        ],
    }
    return payload, request, rows


def as_csv(payload: dict[str, Any]) -> str:
    """The sandbox's CSV layout (docs/frames.md), written here independently of the reader."""
    echo = [k for k in payload if k != "result"]
    lines = [",".join(["time_stamp", "name", "aggregation_type", "value", *echo])]
    for arr in payload["result"]:
        for p in arr:
            v = p["value"]
            text = v if isinstance(v, str) else repr(v) if isinstance(v, float) else str(v)
            cells = [p["time_stamp"], p["name"], p.get("aggregation_type") or "", text]
            lines.append(",".join(cells + [str(payload[k]) for k in echo]))
    return "\n".join(lines) + "\n"


def rows_of(df: pd.DataFrame) -> list[tuple[Any, ...]]:
    out = []
    for metric, agg, ts, value, pct in zip(
        df["metric"],
        df["aggregation"],
        df["time_stamp"],
        df["value"],
        df["percentile"],
        strict=True,
    ):
        out.append(
            (metric, None if agg is pd.NA else agg, ts, value, None if math.isnan(pct) else pct)
        )
    return sorted(out, key=repr)


def attrs_free(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    out.attrs = {}
    return out


@SETTINGS
@given(timeseries())
@pytest.mark.slow
def test_valid_time_series_never_raise_and_keep_every_point(case: Any) -> None:
    payload, request, rows = case
    df = to_frame(payload, request)
    conforms(df)
    assert rows_of(df) == sorted(rows, key=repr)
    requested = [m["name"] for m in request["metrics"]]
    ranks = [requested.index(m) if m in requested else len(requested) for m in df["metric"]]
    assert ranks == sorted(ranks), "series come in request order"
    for _, group in df.groupby(["metric", "aggregation"], dropna=False, sort=False):
        assert group["time_stamp"].is_monotonic_increasing
    conforms(to_frame(payload))
    from_csv = read_csv(as_csv(payload), request)
    pd.testing.assert_frame_equal(attrs_free(from_csv), attrs_free(df))
    fast = read_timeseries(orjson.dumps(payload), None)
    slow = to_frame(payload)
    if fast is not None:
        pd.testing.assert_frame_equal(fast, attrs_free(slow))
    for arrow in (None, 0):  # the client's paths for answers of a pull: orjson and pyarrow
        part = read_rows(orjson.dumps(payload), request, csv=False, arrow_min_bytes=arrow).table()
        built = frame_of(part)
        pd.testing.assert_frame_equal(attrs_free(built), attrs_free(df))
        # the table built from the points is that of the answer's frame
        assert part.equals(table_of(df), check_metadata=True)


@SETTINGS
@given(timeseries(), moments)
@pytest.mark.slow
def test_small_answers_split_in_two_windows_build_the_whole_frame(case: Any, cut: Any) -> None:
    """Two windows answered with the same body, each keeping what it owns, build one frame
    equal to the body's own: the client's one assembly at the end of a pull."""
    payload, request, _ = case
    body = orjson.dumps(payload)
    low, high = datetime(2000, 1, 1, tzinfo=UTC), datetime(2099, 1, 1, tzinfo=UTC)
    first, second = read_rows(body, request, csv=False), read_rows(body, request, csv=False)
    owners = [(low, cut, True, False), (cut, high, False, True)]
    (one, one_runs), (two, two_runs) = first.built(), second.built()
    kept, _, starts = owned([one, two], owners, runs=[one_runs, two_runs])
    for runs in (starts, None):  # the runs the answers told, and the runs found in the rows
        built = frame_of(in_order(kept, request, runs))
        assert one.num_rows == len(built)
        pd.testing.assert_frame_equal(attrs_free(built), attrs_free(to_frame(payload, request)))


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += paths(v, (*prefix, i))
    return out


def mutate(payload: Any, path: tuple[Any, ...], new: Any, delete: bool) -> Any:
    if not path:
        return new
    node = payload
    for step in path[:-1]:
        node = node[step]
    if delete and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = new
    return payload


@st.composite
def mutated(draw: st.DrawFn, base: Any) -> Any:
    payload = draw(base)
    payload = payload[0] if isinstance(payload, tuple) else payload
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths(payload)))
        payload = mutate(payload, path, draw(json_values), draw(st.booleans()))
    return payload


@st.composite
def currents(draw: st.DrawFn) -> dict[str, Any]:
    members: dict[str, Any] = {
        "start_time": stamp(draw(moments), draw(st.sampled_from(list(OFFSETS)))),
        "end_time": stamp(draw(moments), "Z"),
    }
    for name in draw(st.lists(st.sampled_from([*NAMES, "ue_online_status"]), unique=True)):
        members[name] = draw(values)
    for dim in draw(
        st.lists(st.sampled_from(["ue_ip", "lr_id", "imsi", "account_id"]), unique=True)
    ):
        members[dim] = draw(ids)
    return members


@st.composite
def sims(draw: st.DrawFn) -> list[dict[str, Any]]:
    days = draw(st.lists(st.dates(date(1970, 1, 1), date(2100, 12, 31)), max_size=5))
    counts = st.integers(0, 10**6)
    return [
        {"date": d.strftime("%d-%m-%Y"), "physical": draw(counts), "esim": draw(counts)}
        for d in days
    ]


@SETTINGS
@given(currents())
def test_valid_current_values_from_json_and_csv(payload: dict[str, Any]) -> None:
    df = to_frame(payload)
    conforms(df)
    keys = [k for k in payload if k not in ("start_time", "end_time")]
    header = "start_time,end_time," + ",".join(keys)
    row = ",".join(str(payload[k]) for k in ("start_time", "end_time", *keys))
    if keys:
        pd.testing.assert_frame_equal(attrs_free(read_csv(f"{header}\n{row}\n")), attrs_free(df))


@SETTINGS
@given(sims())
def test_valid_sim_counts_from_json_and_csv(payload: list[dict[str, Any]]) -> None:
    df = to_frame(payload)
    conforms(df)
    assert len(df) == len(payload)
    assert df["date"].is_monotonic_increasing
    text = "date,physical,esim\n" + "".join(
        f"{p['date']},{p['physical']},{p['esim']}\n" for p in payload
    )
    pd.testing.assert_frame_equal(attrs_free(read_csv(text)), attrs_free(df))


def _finite(value: Any) -> bool:
    """No NaN or infinite float anywhere in a parsed payload."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


@SETTINGS
@given(st.one_of(mutated(timeseries()), mutated(currents()), mutated(sims())))
@pytest.mark.slow
def test_mutated_payloads_give_a_frame_or_schema_error(payload: Any) -> None:
    from_dict = outcome(to_frame, payload)
    try:
        body = orjson.dumps(payload)
    except (TypeError, orjson.JSONEncodeError):
        return
    from_bytes = outcome(to_frame, body)
    if from_dict is not None and from_bytes is not None and _finite(payload):
        # (orjson writes a non-finite float as null: then the body is another document)
        pd.testing.assert_frame_equal(from_bytes, from_dict)
    fast = read_timeseries(body, None)
    if fast is not None:
        assert from_dict is not None, "the fast path accepted what the careful path rejects"
        pd.testing.assert_frame_equal(fast, attrs_free(from_dict))
    for arrow in (None, 0):  # the orjson and the pyarrow path of a pull's answers
        try:
            part = read_rows(body, None, csv=False, arrow_min_bytes=arrow).table()
        except SchemaError:
            assert from_bytes is None, "a pull's reader rejects what to_frame accepts"
            continue
        assert from_bytes is not None, "a pull's reader accepted what to_frame rejects"
        built = frame_of(part)
        pd.testing.assert_frame_equal(attrs_free(built), attrs_free(from_bytes))


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_random_json_gives_a_frame_or_schema_error(payload: Any) -> None:
    outcome(to_frame, payload)


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.binary(max_size=200), st.text(max_size=200)))
def test_random_bytes_and_text_give_a_frame_or_schema_error(data: Any) -> None:
    outcome(to_frame, data)
    outcome(read_csv, data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)


@settings(max_examples=100, deadline=None)
@given(timeseries(), st.data())
@pytest.mark.slow
def test_damaged_csv_gives_a_frame_or_schema_error(case: Any, data: Any) -> None:
    text = as_csv(case[0])
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(text)))
        text = (
            text[:at]
            + data.draw(st.sampled_from([",", "\n", '"', "x", "", "YES", "-"]))
            + text[at + 1 :]
        )
    outcome(read_csv, text, case[1])
