"""v2 reports and the reporting service end to end against the sandbox."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pandas as pd
import pytest

import edgereports as er
from edgereports import presets
from edgereports.sandbox import SandboxHandle

START, END = "2022-07-06T19:19:19-04:00", "2022-07-07T22:19:19-04:00"


def v2_client(sb: SandboxHandle, **options: Any) -> er.ReportingClient:
    return er.ReportingClient(
        sb.api_key, sb.reporting_url, api_version="v2", progress=False, **options
    )


def preset_params(info: presets.PresetInfo, sb: SandboxHandle) -> dict[str, Any]:
    params: dict[str, Any] = {"start": START, "end": END}
    names = {p.name for p in info.params}
    if "account_id" in names:
        params["account_id"] = sb.account_id
    if "customer_name" in names:
        params["customer_name"] = sb.network.accounts[0].name
    return params


@pytest.mark.parametrize("name", presets.names("v2"))
def test_each_v2_preset_runs_in_json_and_csv_with_equal_frames(
    sandbox: SandboxHandle, name: str
) -> None:
    report = presets.build(name, **preset_params(presets.get(name), sandbox))
    with v2_client(sandbox) as client:
        via_json = client.fetch(report)
        via_csv = client.fetch(report, accept=er.reporting.CSV)
    assert len(via_json) > 0
    pd.testing.assert_frame_equal(via_json, via_csv, check_like=False)
    assert via_json.attrs["api_version"] == "v2"
    # v2 stamps each piece at its end: nothing at or before the start, the end itself kept
    stamps = via_json["time_stamp"]
    assert stamps.min() > pd.Timestamp(START) and stamps.max() == pd.Timestamp(END)


def test_a_windowed_v2_pull_equals_the_range_fetched_whole(sandbox: SandboxHandle) -> None:
    report = presets.ue_session_bytes(account_id=sandbox.account_id, start=START, end=END)
    with v2_client(sandbox) as client:
        whole = client.fetch(report, window=timedelta(days=3))
        windowed = client.fetch(report, window=timedelta(hours=5))
    assert len(whole) == 2 * 28  # 27 whole hours and the last piece, per metric
    pd.testing.assert_frame_equal(whole, windowed)


def test_the_edge_point_answer_keeps_its_quirks(sandbox: SandboxHandle) -> None:
    report = presets.edge_point_ran_packets(
        customer_name=sandbox.network.accounts[0].name, start=START, end=END, granularity="DAY"
    )
    with v2_client(sandbox) as client:
        raw = client.run(report)
        frame = client.fetch(report)
    assert raw["account_id"] == "" and frame["account_id"].isna().all()
    assert list(frame.columns[:3]) == ["time_stamp", "account_id", "customer_name"]


def test_a_client_refuses_a_report_of_the_other_version(sandbox: SandboxHandle) -> None:
    v1 = presets.time_usage_enterprise(account_id=sandbox.account_id, start=START, end=END)
    v2 = presets.ue_session_duration(account_id=sandbox.account_id, start=START, end=END)
    before = sandbox.request_count()
    with v2_client(sandbox) as client, pytest.raises(er.InputError) as info:
        client.fetch(v1)
    assert "\n" not in str(info.value) and "written for v1" in str(info.value)
    with er.ReportingClient(sandbox.api_key, sandbox.reporting_url) as client:
        with pytest.raises(er.InputError, match="written for v2"):
            client.run(v2)
        assert client.for_version("v2").run(v2)["result"]
    assert sandbox.request_count() == before + 1


def test_settings_choose_the_api_version() -> None:
    env = {"EDGEREPORTS_API_KEY": "k" * 8, "EDGEREPORTS_REPORTING_URL": "http://h.example",
           "EDGEREPORTS_API_VERSION": "v2"}  # fmt: skip
    assert er.ReportingClient.from_settings(er.Settings.from_env(env)).api_version == "v2"
    with pytest.raises(er.ConfigError, match="EDGEREPORTS_API_VERSION"):
        er.Settings.from_env({**env, "EDGEREPORTS_API_VERSION": "2"})


def service_client(sb: SandboxHandle, **options: Any) -> er.ReportingServiceClient:
    return er.ReportingServiceClient(sb.service_token, sb.base_url, sb.core_id, **options)


def test_the_reporting_service_runs_end_to_end(sandbox: SandboxHandle) -> None:
    report = er.ServiceReport().last("HOUR").step("15m").where(device="BLR-1001")
    with service_client(sandbox) as client:
        frames = {
            m: client.fetch(report.metric(m, "COUNT"))
            for m in er.query.service_report.SERVICE_METRICS
        }
        raw = client.run(report.metric("ue_status", "AVG"))
    assert raw["mobile-core-id"] == sandbox.core_id and raw["edgepoint"] == "BLR-1001"
    for metric, frame in frames.items():
        assert list(frame.columns) == ["time_stamp", "account_id", "mobile_core_id", "edgepoint",
                                       "metric", "aggregation", "percentile", "value"]  # fmt: skip
        assert len(frame) == 4 and (frame["metric"] == metric).all()
        assert frame["time_stamp"].diff().dropna().eq(pd.Timedelta(minutes=15)).all()
    assert (frames["ap_status"]["value"] <= frames["ap_count"]["value"]).all()
    assert (frames["ue_status"]["value"] <= frames["ue_count"]["value"]).all()
    assert sandbox.report_requests()[-1]["step"] == "15m"


def test_the_service_client_retries_and_maps_errors(make_sandbox: Any) -> None:
    sb = make_sandbox(seed=1)
    report = er.ServiceReport().last("HOUR").step("30m").metric("ap_count", "COUNT")
    sb.enqueue_faults("503", "503")
    with service_client(sb, backoff=0.01) as client:
        assert len(client.fetch(report)) == 2
    with service_client(sb, retries=0) as client:
        sb.enqueue_faults("500")
        with pytest.raises(er.ApiError, match="HTTP 500"):
            client.run(report)
    wrong = er.ReportingServiceClient("wrong-token", sb.base_url, sb.core_id)
    with wrong, pytest.raises(er.AuthError):
        wrong.run(report)
    other = er.ReportingServiceClient(sb.service_token, sb.base_url, "other-core")
    with other, pytest.raises(er.NotFoundError):
        other.run(report)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("", "http://h.example", "c"),
            "token is empty; pass token= or set EDGEREPORTS_SERVICE_TOKEN",
        ),
        (("t0ken", "http://h.example", " "), "core_id is empty"),
        (("t0ken", "ftp://h", "c"), "base_url must be an http"),
    ],
)
def test_a_missing_token_or_core_id_is_a_config_error(
    args: tuple[str, str, str], message: str
) -> None:
    with pytest.raises(er.ConfigError, match=message):
        er.ReportingServiceClient(*args)


def test_service_settings_come_from_the_environment() -> None:
    with pytest.raises(er.ConfigError, match=r"service_token \(EDGEREPORTS_SERVICE_TOKEN\)"):
        er.ReportingServiceClient.from_settings(er.Settings.from_env({}))
    env = {"EDGEREPORTS_SERVICE_TOKEN": "tok-123456", "EDGEREPORTS_BASE_URL": "http://h.example",
           "EDGEREPORTS_CORE_ID": "core-9"}  # fmt: skip
    client = er.ReportingServiceClient.from_settings(er.Settings.from_env(env))
    assert repr(client) == "ReportingServiceClient(base_url='http://h.example', core_id='core-9')"
