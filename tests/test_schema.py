"""The pinned frame schemas: columns, order, pandas and pyarrow dtypes, empty frames, checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from edgereports import schema
from edgereports.schema import (
    CURRENT,
    SIM_COUNT,
    TIMESERIES,
    arrow_schema,
    empty_frame,
    identifier,
    schema_for,
    shape_of,
    validate_frame,
)

COLUMNS = {
    "timeseries": [
        ("time_stamp", "datetime64[us, UTC]"),
        ("account_id", "string"),
        ("msisdn", "string"),
        ("metric", "string"),
        ("aggregation", "string"),
        ("percentile", "float64"),
        ("value", "float64"),
    ],
    "current": [
        ("start_time", "datetime64[us, UTC]"),
        ("end_time", "datetime64[us, UTC]"),
        ("account_id", "string"),
        ("msisdn", "string"),
        ("metric", "string"),
        ("aggregation", "string"),
        ("value", "float64"),
        ("value_text", "string"),
    ],
    "sim_count": [
        ("date", "datetime64[us]"),
        ("account_id", "string"),
        ("physical", "Int64"),
        ("esim", "Int64"),
    ],
}


@pytest.mark.parametrize("shape", schema.SHAPES)
def test_empty_frame_has_every_column_and_dtype(shape: str) -> None:
    dims = ["msisdn"] if shape != "sim_count" else []
    df = empty_frame(shape, dims)
    expected = [(c, d) for c, d in COLUMNS[shape] if c != "msisdn" or dims]
    assert [(c, str(t)) for c, t in df.dtypes.items()] == expected
    assert len(df) == 0
    assert df.attrs["shape"] == shape


def test_string_storage_is_pinned_to_pyarrow() -> None:
    """pandas 2.2 defaults to python storage, pandas 3 to pyarrow: the schema pins pyarrow."""
    df = empty_frame("timeseries", ["msisdn"])
    for col in ("account_id", "msisdn", "metric", "aggregation"):
        assert isinstance(df[col].dtype, pd.StringDtype)
        assert df[col].dtype.storage == "pyarrow"
        assert df[col].dtype.na_value is pd.NA
    assert df["time_stamp"].dtype == pd.DatetimeTZDtype(unit="us", tz="UTC")
    assert str(df["time_stamp"].dtype.tz) == "UTC"


def test_arrow_schemas() -> None:
    ts = arrow_schema("timeseries", ["msisdn", "imsi"])
    assert ts.names == [
        "time_stamp",
        "account_id",
        "msisdn",
        "imsi",
        "metric",
        "aggregation",
        "percentile",
        "value",
    ]
    assert ts.field("time_stamp").type == pa.timestamp("us", tz="UTC")
    assert not ts.field("time_stamp").nullable
    assert not ts.field("metric").nullable
    assert ts.field("msisdn").type == pa.string()
    assert ts.field("value").type == pa.float64()
    sim = arrow_schema("sim_count")
    assert sim.field("date").type == pa.timestamp("us")
    assert sim.field("physical").type == pa.int64()
    cur = arrow_schema("current", ["ue_ip"])
    assert cur.names[-2:] == ["value", "value_text"]


def test_empty_frame_goes_to_arrow_with_its_schema() -> None:
    df = empty_frame("current", ["ue_ip"])
    table = pa.Table.from_pandas(
        df, schema=arrow_schema("current", ["ue_ip"]), preserve_index=False
    )
    assert table.schema.names == list(df.columns)


@pytest.mark.parametrize(
    ("shape", "dims", "message"),
    [
        ("sim_count", ["msisdn"], "sim_count frames have no dimension columns"),
        ("timeseries", ["metric"], "clash with fixed columns"),
        ("timeseries", ["msisdn", "msisdn"], "duplicate dimension names"),
        ("daily", [], "unknown frame shape 'daily'"),
    ],
)
def test_bad_schema_requests(shape: str, dims: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        empty_frame(shape, dims)


def test_validate_coerces_identifiers_times_and_order() -> None:
    raw = pd.DataFrame(
        {
            "value": [1, 2],
            "time_stamp": ["2022-07-07T05:30:00+05:30", "2022-07-06T20:00:00-04:00"],
            "account_id": ["A", None],
            "msisdn": [919876543210.0, np.nan],
            "metric": ["ue_connections", "ue_connections"],
            "aggregation": ["COUNT", None],
            "percentile": [None, 95],
        }
    )
    raw.attrs["note"] = "kept"
    df = validate_frame(raw, "timeseries")
    assert list(df.columns) == [c for c, _ in COLUMNS["timeseries"]]
    assert [str(t) for t in df.dtypes] == [d for _, d in COLUMNS["timeseries"]]
    assert df["msisdn"].tolist() == ["919876543210", pd.NA]
    assert df["time_stamp"].tolist() == [
        pd.Timestamp("2022-07-07T00:00:00Z"),
        pd.Timestamp("2022-07-07T00:00:00Z"),
    ]
    assert df["percentile"].isna().tolist() == [True, False]
    assert df.attrs == {"note": "kept", "shape": "timeseries"}


def test_validate_naive_times_are_utc_and_sim_dates() -> None:
    raw = pd.DataFrame(
        {
            "date": pd.to_datetime(["2022-07-07", "2022-07-08"]),
            "account_id": [123, 456],
            "physical": [1.0, None],
            "esim": [2, 3],
        }
    )
    df = validate_frame(raw)
    assert str(df["date"].dtype) == "datetime64[us]"
    assert df["account_id"].tolist() == ["123", "456"]
    assert df["physical"].tolist() == [1, pd.NA]
    assert str(df["esim"].dtype) == "Int64"
    naive = pd.DataFrame(
        {
            "start_time": pd.to_datetime(["2022-07-07T04:15:00"]),
            "end_time": pd.to_datetime(["2022-07-07T04:20:00"]),
            "account_id": ["A"],
            "metric": ["ue_online_status"],
            "aggregation": ["EXISTS"],
            "value": [1.0],
            "value_text": ["YES"],
        }
    )
    cur = CURRENT.validate(naive)
    assert cur["start_time"].iloc[0] == pd.Timestamp("2022-07-07T04:15:00Z")


def test_validate_returns_a_conforming_frame_unchanged() -> None:
    df = empty_frame("timeseries", ["imsi"])
    again = TIMESERIES.validate(df)
    pd.testing.assert_frame_equal(again, df)


@pytest.mark.parametrize(
    ("frame", "shape", "message"),
    [
        (pd.DataFrame({"time_stamp": []}), "timeseries", "lacks column"),
        (
            pd.DataFrame({"date": ["x"], "account_id": ["A"], "physical": [1], "esim": [1]}),
            "sim_count",
            "column date .* cannot be cast",
        ),
        (
            pd.DataFrame(
                {"date": [None], "account_id": ["A"], "physical": [1], "esim": [1]},
                dtype=object,
            ),
            "sim_count",
            "nulls in required column date",
        ),
        (
            pd.DataFrame(
                {"date": ["2022-07-07"], "account_id": ["A"], "physical": [1.5], "esim": [1]}
            ),
            "sim_count",
            "column physical .* cannot be cast",
        ),
        (
            pd.DataFrame(
                {
                    "date": ["2022-07-07"],
                    "account_id": ["A"],
                    "physical": [1],
                    "esim": [1],
                    "x": [1],
                }
            ),
            "sim_count",
            "have no dimension columns",
        ),
        ("not a frame", "sim_count", "sim_count frame expected, got str"),
    ],
)
def test_validate_rejects(frame: object, shape: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        schema_for(shape).validate(frame)  # type: ignore[arg-type]


def test_shape_of() -> None:
    assert shape_of(empty_frame("current")) == "current"
    bare = empty_frame("sim_count")
    bare.attrs.clear()
    assert shape_of(bare) == "sim_count"
    with pytest.raises(ValueError, match="cannot tell the shape"):
        shape_of(pd.DataFrame({"x": [1]}))


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (919876543210, "919876543210"),
        (919876543210.0, "919876543210"),
        ("919876543210", "919876543210"),
        (404450000000001.0, "404450000000001"),
        (1.5, "1.5"),
        (True, "true"),
        (None, None),
        (float("nan"), None),
    ],
)
def test_identifier(value: object, text: str | None) -> None:
    assert identifier(value) == text


def test_identifier_rejects_containers() -> None:
    with pytest.raises(ValueError, match="must be a string or a number, not list"):
        identifier([1])


def test_schema_objects_are_consistent() -> None:
    assert SIM_COUNT.columns() == ["date", "account_id", "physical", "esim"]
    assert TIMESERIES.dimensions_of(empty_frame("timeseries", ["a", "b"])) == ("a", "b")
    assert schema.CSV_TIMESERIES_HEADER == ("time_stamp", "name", "aggregation_type", "value")
