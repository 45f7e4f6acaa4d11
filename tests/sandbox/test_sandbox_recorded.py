"""The recorded sandbox answers (sample_data/recorded) are reproducible and the normalizer's
hand-written expectations (sample_data/NN_*/expected.dtypes.json) hold for them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pandas as pd
import pytest

from edgereports.normalize import read_csv, to_frame

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
RECORDED = SAMPLES / "recorded"
HAND_WRITTEN = {
    "time_usage_enterprise": "01_time_usage_enterprise",
    "time_usage_subscriber": "02_time_usage_subscriber",
    "byte_usage_subscriber": "03_byte_usage_subscriber",
    "realtime_bandwidth": "04_realtime_bandwidth",
    "bandwidth_percentile": "05_bandwidth_percentile",
    "ue_connections_avg_peak": "06_ue_connections_avg_peak",
    "active_sim_count": "07_active_sim_count",
    "ue_connections_subscriber": "08_ue_connections_subscriber",
    "ue_connections_enterprise": "09_ue_connections_enterprise",
    "concurrent_online_ues": "10_concurrent_online_ues",
    "device_status": "11_device_status",
}
DIMENSIONS = {"msisdn", "imsi", "customer_site_id", "enodeb_ip", "ue_ip", "lr_id"}


def load_record_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("record_samples", SAMPLES / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_pattern_is_recorded_and_a_rerun_writes_the_same_bytes(tmp_path: Path) -> None:
    written = load_record_script().record(tmp_path)
    names = {p.name for p in written}
    assert names == {f"{n}{s}" for n in HAND_WRITTEN for s in (".request.json", ".json", ".csv")}
    for path in written:
        assert path.read_bytes() == (RECORDED / path.name).read_bytes(), path.name


@pytest.mark.parametrize("pattern", sorted(HAND_WRITTEN))
def test_the_normalizer_expectations_hold_for_recorded_answers(pattern: str) -> None:
    request: dict[str, Any] = json.loads((RECORDED / f"{pattern}.request.json").read_text())
    payload = orjson.loads((RECORDED / f"{pattern}.json").read_bytes())
    from_json = to_frame(payload, request=request)
    from_csv = read_csv((RECORDED / f"{pattern}.csv").read_bytes(), request=request)
    pd.testing.assert_frame_equal(from_json, from_csv)
    hand = json.loads((SAMPLES / HAND_WRITTEN[pattern] / "expected.dtypes.json").read_text())
    assert from_json.attrs["shape"] == hand["shape"]
    ours = {c: str(t) for c, t in from_json.dtypes.items()}
    theirs = hand["dtypes"]
    assert {c for c in ours if c not in DIMENSIONS} == {c for c in theirs if c not in DIMENSIONS}
    for column, dtype in ours.items():
        expected = theirs.get(column, "string" if column in DIMENSIONS else None)
        assert dtype == expected, column
    assert len(from_json) > 0
    if hand["shape"] == "timeseries":
        assert len(from_json) == sum(len(arr) for arr in payload["result"])
