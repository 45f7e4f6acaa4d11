"""The hand-written v2 samples (sample_data/v2): each request round-trips, each answer gives
its expected frame from JSON (and from CSV for the v2 report)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import edgereports as er
from edgereports.normalize import read_csv, service_frame, to_frame
from tests.normalize.test_samples import check, request

CASES = sorted((Path(__file__).resolve().parents[2] / "sample_data" / "v2").iterdir())
CASES = [c for c in CASES if c.is_dir()]
IDS = [c.name for c in CASES]


def test_there_are_v2_report_and_service_samples() -> None:
    assert len(CASES) == 3


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_request_round_trips(case: Path) -> None:
    d = request(case)
    if "step" in d:
        back = er.ServiceReport.from_request(d).to_request()
    else:
        back = er.Report.from_request(d, api_version="v2").to_request()
    assert json.dumps(back) == json.dumps(d)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_answer_gives_the_expected_frame(case: Path) -> None:
    body = (case / "response.json").read_bytes()
    check(to_frame(body, request(case)), case, "json")
    if (case / "response.csv").is_file():
        check(read_csv(case / "response.csv", request(case)), case, "csv")
    else:
        check(service_frame(json.loads(body), request(case)), case, "json")


@pytest.mark.parametrize(
    ("member", "value"),
    [
        ("time_stamp", "x"),
        ("time_stamp", 5),
        ("time_stamp", "2024-08-13T20:58:24+00:00"),  # would have stamped every point with it
        ("value", "7"),
        ("percentile", "p95"),
        ("edge\ud800", "PHI-1"),
        ("edgepoint", "PHI\ud800"),
    ],
)
def test_a_service_answer_echoing_a_column_or_bad_text_is_a_schema_error(
    member: str, value: object
) -> None:
    path = Path(__file__).resolve().parents[2] / "sample_data/v2/03_service_ap_count"
    payload = json.loads((path / "response.json").read_text(encoding="utf-8"))
    payload[member] = value
    for read in (service_frame, to_frame):
        with pytest.raises(er.SchemaError) as caught:
            read(payload)
        assert caught.value.where  # says where
