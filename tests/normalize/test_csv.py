"""read_csv: the layouts it accepts, its tolerance, round trips, and its errors."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from edgereports.errors import SchemaError
from edgereports.normalize import read_csv, to_frame
from edgereports.schema import validate_frame

ACCOUNT = "62c40843c7a1909709112345"
SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
BYTES = SAMPLES / "03_byte_usage_subscriber"
DEVICE = SAMPLES / "11_device_status"


def request(case: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((case / "request.json").read_text())
    return loaded


def reference(case: Path) -> pd.DataFrame:
    """The JSON answer of the same sample (itself checked against the hand-written frame)."""
    return to_frame((case / "response.json").read_bytes(), request(case))


def csv_of(rows: list[list[str]]) -> str:
    return "\n".join(",".join(r) for r in rows) + "\n"


def sample_rows(case: Path) -> list[list[str]]:
    return [line.split(",") for line in (case / "response.csv").read_text().splitlines()]


def shuffled_columns(rows: list[list[str]], order: list[int]) -> list[list[str]]:
    return [[r[i] for i in order] for r in rows]


def test_column_order_header_case_spaces_and_line_endings() -> None:
    rows = sample_rows(BYTES)
    order = [5, 3, 0, 4, 2, 1]
    moved = shuffled_columns(rows, order)
    moved[0] = [f"  {c.upper()} " for c in moved[0]]
    text = "\ufeff" + csv_of(moved).replace("\n", "\r\n") + "\r\n\r\n"
    df = read_csv(text.encode(), request(BYTES))
    pd.testing.assert_frame_equal(df, _as_csv(reference(BYTES)))


def _as_csv(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    out.attrs = {**df.attrs, "source": "csv"}
    return out


def test_extra_columns_become_dimensions_and_unnamed_columns_are_dropped() -> None:
    rows = sample_rows(BYTES)
    rows = [[str(i - 1) if i else "", *r, "LR-1" if i else "lr_id"] for i, r in enumerate(rows)]
    df = read_csv(csv_of(rows), request(BYTES))
    assert df["lr_id"].unique().tolist() == ["LR-1"]
    pd.testing.assert_frame_equal(df.drop(columns="lr_id"), _as_csv(reference(BYTES)))


def test_quoted_fields() -> None:
    text = (
        '"time_stamp","name","aggregation_type","value","account_id","lr_id"\n'
        '"2022-07-07T00:00:00Z","uplink_bytes","COUNT","1","A","LR, north"\n'
    )
    df = read_csv(text)
    assert df["lr_id"].tolist() == ["LR, north"]


def test_interleaved_rows_give_the_grouped_frame() -> None:
    rows = sample_rows(BYTES)
    header, body = rows[0], rows[1:]
    interleaved = [r for pair in zip(body[:4], body[4:], strict=True) for r in pair]
    df = read_csv(csv_of([header, *interleaved]), request(BYTES))
    pd.testing.assert_frame_equal(df, _as_csv(reference(BYTES)))


def test_many_interleaved_runs_use_the_sorting_path() -> None:
    stamps = pd.date_range("2022-01-01", periods=12_000, freq="h", tz="UTC")
    lines = ["time_stamp,name,aggregation_type,value,account_id"]
    for i, t in enumerate(stamps):
        for name in ("uplink_bytes", "downlink_bytes"):
            lines.append(f"{t.isoformat()},{name},COUNT,{i},{ACCOUNT}")
    df = read_csv("\n".join(lines))
    validate_frame(df, "timeseries")
    assert df["metric"].iloc[0] == "uplink_bytes"
    assert df["metric"].iloc[12_000] == "downlink_bytes"
    assert df["time_stamp"].iloc[:12_000].is_monotonic_increasing
    assert df["value"].iloc[12_000:].tolist() == list(map(float, range(12_000)))


def test_fan_out_rows_keep_their_series_order() -> None:
    text = csv_of(
        [
            ["time_stamp", "name", "aggregation_type", "value", "msisdn"],
            ["2022-07-07T01:00:00Z", "downlink_bytes", "COUNT", "1", "2"],
            ["2022-07-07T00:00:00Z", "uplink_bytes", "COUNT", "2", "2"],
            ["2022-07-07T00:00:00Z", "uplink_bytes", "COUNT", "3", "1"],
            ["2022-07-07T00:00:00Z", "downlink_bytes", "COUNT", "4", "2"],
        ]
    )
    df = read_csv(text)
    assert list(zip(df["msisdn"], df["metric"], df["value"], strict=True)) == [
        ("2", "downlink_bytes", 4.0),
        ("2", "downlink_bytes", 1.0),
        ("2", "uplink_bytes", 2.0),
        ("1", "uplink_bytes", 3.0),
    ]


def test_text_values_and_naive_stamps_take_the_careful_path() -> None:
    text = csv_of(
        [
            ["time_stamp", "name", "value"],
            ["2022-07-07T05:30:00", "ue_online_status", "YES"],
            ["2022-07-07T06:30:00", "ue_online_status", "no"],
            ["2022-07-07T07:30:00", "ue_online_status", ""],
        ]
    )
    df = read_csv(text)
    assert df["value"].tolist()[:2] == [1.0, 0.0]
    assert math.isnan(df["value"].iloc[2])
    assert df["time_stamp"].iloc[0] == pd.Timestamp("2022-07-07T05:30:00Z")
    assert df["aggregation"].isna().all()


@pytest.mark.parametrize(
    "case",
    sorted(p.name for p in SAMPLES.iterdir() if (p / "expected.csv").is_file()),
)
def test_frames_written_back_read_the_same(case: str) -> None:
    """A frame written with DataFrame.to_csv (our own layout) reads back to the same frame."""
    df = reference(SAMPLES / case)
    again = read_csv(df.to_csv(index=False), request(SAMPLES / case))
    pd.testing.assert_frame_equal(again, _as_csv(df))
    with_index = read_csv(df.to_csv(), request(SAMPLES / case))
    pd.testing.assert_frame_equal(with_index, _as_csv(df))


def test_percentile_column_overrides_the_request() -> None:
    text = csv_of(
        [
            ["time_stamp", "metric", "aggregation", "percentile", "value"],
            ["2022-07-07T00:00:00Z", "uplink_bandwidth", "", "90", "5"],
            ["2022-07-07T00:00:00Z", "uplink_bandwidth", "", "", "6"],
        ]
    )
    df = read_csv(text)
    assert df["percentile"].tolist()[0] == 90.0
    assert math.isnan(df["percentile"].iloc[1])


@pytest.mark.parametrize(
    ("text", "shape", "columns"),
    [
        ("time_stamp,name,value,msisdn\n", "timeseries", ["msisdn"]),
        ("date,physical,esim\n\n", "sim_count", []),
        ("start_time,end_time,ue_online_status,ue_ip\n", "current", ["ue_ip"]),
    ],
)
def test_header_only(text: str, shape: str, columns: list[str]) -> None:
    df = read_csv(text)
    assert len(df) == 0
    assert df.attrs["shape"] == shape
    validate_frame(df, shape)
    for c in columns:
        assert c in df.columns


def test_empty_body_with_request_gives_the_request_shape() -> None:
    df = read_csv(b"  \n", request(DEVICE))
    assert df.attrs["shape"] == "current"
    assert list(df.columns)[3:6] == ["enodeb_ip", "ue_ip", "lr_id"]
    sim = read_csv("", request(SAMPLES / "07_active_sim_count"))
    assert sim.attrs["shape"] == "sim_count"


def test_path_forms(tmp_path: Path) -> None:
    target = tmp_path / "answer.csv"
    target.write_bytes((DEVICE / "response.csv").read_bytes())
    expected = read_csv(target, request(DEVICE))
    pd.testing.assert_frame_equal(read_csv(str(target), request(DEVICE)), expected)
    with pytest.raises(SchemaError, match="CSV header matches no known layout"):
        read_csv(str(tmp_path / "missing.csv"))


BAD: list[tuple[str | bytes, str, str]] = [
    (
        "time_stamp,name,value\n2022-07-07T00:00:00Z,a,1,9\n",
        "CSV answer does not parse",
        "csv",
    ),
    (
        "time_stamp,name,value\n2022-07-07T00:00:00Z,a,1\n2022-07-07T00:00:00Z,a,2\nnoon,a,3\n",
        "time_stamp is not an ISO 8601 time",
        "row 3.time_stamp",
    ),
    (
        "time_stamp,name,value\n2022-07-07T00:00:00Z,a,lots\n",
        "value is not a number",
        "row 1.value",
    ),
    ("time_stamp,name,value\n2022-07-07T00:00:00Z,,1\n", "name is missing", "row 1.name"),
    ("time_stamp,name,value,Value\n", r"CSV header repeats column\(s\) value", "header"),
    (b"time_stamp,\xff\xfe,value\n", "CSV header is not a line of UTF-8", "header"),
    ("start_time,uplink_bandwidth\n2022-07-07T00:00:00Z,1\n", "has no end_time", "row 1"),
    ("date,physical,esim\n07-07-2022,1,1\n2022.07.08,1,1\n", "not a dd-mm-yyyy", "row 2.date"),
    (
        "time_stamp,name,value,percentile\n2022-07-07T00:00:00Z,a,1,high\n",
        "value is not a number",
        "row 1.percentile",
    ),
    ("a;b;c\n1;2;3\n", "CSV header matches no known layout", "header"),
    # Key cells that are not UTF-8: a run of its own, inside a run, in a column of one value,
    # and in a name (the key columns are read as bytes and decoded once per run).
    *(
        (
            b"time_stamp,name,value,msisdn\n"
            + b"".join(
                b"2022-07-07T0%d:00:00Z,%s,1,%s\n" % (i, n, m) for i, (n, m) in enumerate(rows)
            ),
            "CSV answer does not parse .*invalid UTF8",
            "csv",
        )
        for rows in (
            [(b"a", b"91"), (b"a", b"\xff"), (b"a", b"91")],
            [(b"a", b"91"), (b"a", b"9\xff"), (b"a", b"9\xff")],
            [(b"a", b"\xe9"), (b"a", b"\xe9"), (b"a", b"\xe9")],
            [(b"a", b"91"), (b"\xc3", b"91"), (b"\xc3", b"91")],
        )
    ),
]


@pytest.mark.parametrize(("text", "message", "where"), BAD)
def test_bad_csv_says_where_and_why(text: str | bytes, message: str, where: str) -> None:
    with pytest.raises(SchemaError, match=message) as info:
        read_csv(text)
    assert info.value.where == where


def test_bad_csv_argument() -> None:
    with pytest.raises(SchemaError, match="CSV must be bytes, str or a path, not int"):
        read_csv(123)
