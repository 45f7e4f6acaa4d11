"""Arrow, polars and wide outputs equal the pandas frame; provenance reads from each."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import edgereports as er
from edgereports.errors import ConfigError, InputError
from edgereports.normalize import output
from edgereports.normalize.wide import measure_name, parse_measure
from edgereports.schema import arrow_schema, shape_of

SAMPLES = sorted((Path(__file__).parents[2] / "sample_data").glob("*/request.json"))
SAMPLES = [p.parent for p in SAMPLES]


def _frame(sample: Path) -> pd.DataFrame:
    request = json.loads((sample / "request.json").read_text())
    return er.to_frame((sample / "response.json").read_bytes(), request)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_arrow_equals_pandas_with_pinned_schema(sample: Path) -> None:
    df = _frame(sample)
    table = output.to_arrow(df)
    dims = [c for c in df.columns if c not in arrow_schema(shape_of(df)).names]
    assert table.schema.remove_metadata() == arrow_schema(shape_of(df), dims)
    back = table.to_pandas(types_mapper={pa.string(): pd.StringDtype()}.get)
    back.attrs = df.attrs
    pd.testing.assert_frame_equal(back, df, check_dtype=False)
    assert er.provenance(table) == json.loads(json.dumps(df.attrs, default=str))


@pytest.mark.slow
def test_arrow_of_a_large_frame_shares_its_text() -> None:
    """A constant column's repeated chunk is converted once; the table equals pyarrow's own
    conversion of the frame."""
    stamps = pd.date_range("2000-01-01", periods=2 * 65_536 + 10, freq="h", tz="UTC")
    points = [{"time_stamp": t.isoformat(), "name": "uplink_bytes", "value": i,
               "aggregation_type": "COUNT"} for i, t in enumerate(stamps)]  # fmt: skip
    df = er.to_frame({"result": [points], "account_id": "acc-1", "msisdn": 919876543210})
    table = output.to_arrow(df)
    schema = table.schema
    expected = pa.Table.from_pandas(df, schema=schema.remove_metadata(), preserve_index=False)
    assert table.equals(expected.replace_schema_metadata(schema.metadata), check_metadata=True)
    for name in ("account_id", "msisdn"):
        chunks = table.column(name).chunks
        assert len(chunks) == 3  # 65,536 rows twice, then the rest: slices of one chunk
        assert chunks[0].buffers()[1].address == chunks[1].buffers()[1].address, name


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_polars_equals_pandas(sample: Path) -> None:
    pl = pytest.importorskip("polars")
    df = _frame(sample)
    frame = output.to_polars(df)
    assert isinstance(frame, pl.DataFrame)
    assert frame.columns == list(df.columns)
    assert frame.height == len(df)
    expected = pl.from_pandas(df.astype({c: object for c in df.select_dtypes("string")}))
    assert frame.equals(expected.cast(frame.schema))
    assert er.provenance(frame)["shape"] == df.attrs["shape"]


def test_polars_missing_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def fake(name: str, *args: object, **kwargs: object) -> object:
        if name == "polars":
            raise ImportError(name)
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(ConfigError, match=r"pip install 'edgereports\[polars\]'"):
        output.to_polars(_frame(SAMPLES[0]))


def test_output_is_checked() -> None:
    with pytest.raises(InputError, match="output must be one of 'pandas', 'arrow', 'polars'"):
        output.check_output("numpy")
    with pytest.raises(InputError, match="provenance"):
        er.provenance([1, 2])


@pytest.mark.parametrize(
    ("parts", "name"),
    [
        (("uplink_bytes", "COUNT", None), "uplink_bytes__count"),
        (("uplink_bandwidth", None, 95.0), "uplink_bandwidth__p95"),
        (("uplink_bandwidth", None, 99.5), "uplink_bandwidth__p99.5"),
        (("ue_online_status", "EXISTS", None), "ue_online_status__exists"),
        (("jitter", None, None), "jitter"),
    ],
)
def test_measure_names_round_trip(parts: tuple[str, str | None, float | None], name: str) -> None:
    assert measure_name(*parts) == name
    assert parse_measure(name) == parts


@pytest.mark.parametrize(
    "sample",
    [s for s in SAMPLES if shape_of(_frame(s)) in ("timeseries", "current")],
    ids=lambda p: p.name,
)
def test_wide_and_back(sample: Path) -> None:
    df = _frame(sample)
    if "value_text" in df.columns and df["value_text"].notna().any():
        with pytest.raises(InputError, match="value_text"):
            er.wide(df)
        return
    w = er.wide(df)
    keys = [
        c
        for c in df.columns
        if c not in ("metric", "aggregation", "percentile", "value", "value_text")
    ]
    assert list(w.columns[: len(keys)]) == keys
    assert len(w) == len(df[keys].drop_duplicates())
    for row in df.itertuples(index=False):
        pct = getattr(row, "percentile", None)
        agg = None if pd.isna(row.aggregation) else row.aggregation
        col = measure_name(row.metric, agg, None if pct is None or pd.isna(pct) else pct)
        match = w
        for key in keys:
            match = match[match[key] == getattr(row, key)] if pd.notna(getattr(row, key)) else match
        assert row.value in set(match[col])
    back = er.long(w)
    order = [*keys, "metric", "aggregation"]
    pd.testing.assert_frame_equal(
        back.sort_values(order, ignore_index=True), df.sort_values(order, ignore_index=True)
    )


def test_wide_refuses_sim_counts() -> None:
    sims = next(s for s in SAMPLES if "sim" in s.name)
    with pytest.raises(InputError, match="already wide"):
        er.wide(_frame(sims))
