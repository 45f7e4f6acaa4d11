"""The demo main job: the sandbox run end to end, the live path, failures and the subcommand."""

from __future__ import annotations

import argparse
import base64
import json
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg", force=True)

import pandas as pd
import pyarrow.parquet as pq
import pytest

from edgereports import presets
from edgereports.cli.demo import add_parser
from edgereports.config import Settings
from edgereports.demo import DemoResult, Subjects, plan_reports, range_end, run_demo
from edgereports.demo._result import incident_text
from edgereports.errors import AuthError, ConfigError
from edgereports.sandbox import SandboxHandle, serve

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[DemoResult, list[str]]:
    lines: list[str] = []
    out = tmp_path_factory.mktemp("demo")
    result = run_demo(out, sandbox=True, settings=Settings(), echo=lines.append)
    return result, lines


@pytest.mark.slow
def test_every_preset_gives_a_frame_a_chart_and_a_parquet_file(
    demo: tuple[DemoResult, list[str]],
) -> None:
    result, _ = demo
    assert result.ok
    assert [o.plan.name for o in result.outcomes] == presets.names("v1")
    for outcome in result.outcomes:
        assert outcome.frame is not None and len(outcome.frame) > 0, outcome.plan.name
        assert outcome.chart is not None and outcome.parquet is not None
        assert outcome.chart.read_bytes()[:8] == PNG_MAGIC
        assert outcome.chart.stat().st_size > 10_000
        table = pq.read_table(outcome.parquet)
        assert table.num_rows == len(outcome.frame)
        assert table.column_names == list(outcome.frame.columns)
        info = json.loads(table.schema.metadata[b"edgereports"])
        assert info["shape"] == outcome.frame.attrs["shape"]
        assert info["request"] == outcome.frame.attrs["request"]


@pytest.mark.slow
def test_parquet_files_read_back_equal_to_the_frames(demo: tuple[DemoResult, list[str]]) -> None:
    result, _ = demo
    for outcome in result.outcomes:
        assert outcome.frame is not None and outcome.parquet is not None
        back = pd.read_parquet(outcome.parquet)
        expected = outcome.frame.reset_index(drop=True)
        pd.testing.assert_frame_equal(back, expected, check_dtype=False)
        for column in expected.columns:
            assert str(back[column].dtype) == str(expected[column].dtype), column


@pytest.mark.slow
def test_frames_match_the_sandbox_inventory(demo: tuple[DemoResult, list[str]]) -> None:
    result, _ = demo
    frames = {o.plan.name: o.frame for o in result.outcomes}
    with serve(seed=0) as sb:  # the same seed: the same inventory
        account = sb.account_id
        sites = {s.customer_site_id for s in sb.network.sites if s.account_id == account}
        end = date(2024, 3, 15)  # the demo's present: only the SIMs active then have a status
        active = {s.msisdn for s in sb.network.sims_of(account) if s.active_on(end)}
        ue_ips = {d.ue_ip for d in sb.network.devices if d.msisdn in active}
        assert len(ue_ips) < 64
    status = frames["device_status"]
    assert status is not None and set(status["ue_ip"]) == ue_ips and len(status) == len(ue_ips)
    online = frames["concurrent_online_ues"]
    assert online is not None and set(online["customer_site_id"]) == sites
    pct = frames["bandwidth_percentile"]
    assert pct is not None and set(pct["customer_site_id"]) == sites
    sims = frames["active_sim_count"]
    assert sims is not None
    # 14 days ending at the demo's end, 2024-03-15T00:00Z: 1 to 14 March
    assert list(sims["date"].dt.strftime("%Y-%m-%d")) == [f"2024-03-{d:02d}" for d in range(1, 15)]
    subscriber = frames["time_usage_subscriber"]
    assert subscriber is not None and subscriber["msisdn"].nunique() == 3


@pytest.mark.slow
def test_the_page_shows_every_chart_and_table(demo: tuple[DemoResult, list[str]]) -> None:
    result, _ = demo
    page = result.index.read_text()
    for outcome in result.outcomes:
        assert outcome.chart is not None and outcome.parquet is not None
        inline = base64.b64encode(outcome.chart.read_bytes()).decode("ascii")
        assert f'src="data:image/png;base64,{inline}"' in page  # the chart itself, inline
        assert f'href="frames/{outcome.parquet.name}"' in page
        assert f'id="{outcome.plan.slug}"' in page
    assert page.count("<h3>Summary</h3>") == 11
    assert page.count("<img ") == 11 and 'src="charts/' not in page  # nothing to load
    assert "the local sandbox (seed 0, 64 devices" in page
    # the sandbox's clock: the demo's fixed clock, 12:00 in India
    assert "Service clock (the Date of its last answer): 2024-03-15 06:30:00 UTC" in page
    assert "sandbox-demo-key" not in page


@pytest.mark.slow
def test_the_console_shows_a_summary_per_report_and_where_files_are(
    demo: tuple[DemoResult, list[str]],
) -> None:
    result, lines = demo
    text = "\n".join(lines)
    for outcome in result.outcomes:
        assert f"== {outcome.plan.slug} · " in text
    assert "time_usage_seconds COUNT" in text  # a summary row
    assert f"page:             {result.index}" in text
    assert "sandbox-demo-key" not in text


def test_range_end_is_the_last_utc_midnight_in_india() -> None:
    from datetime import datetime

    assert range_end(datetime.fromisoformat("2024-03-15T12:00:00+05:30")).isoformat() == (
        "2024-03-15T05:30:00+05:30"
    )
    assert range_end(datetime.fromisoformat("2024-03-15T03:00:00+05:30")).isoformat() == (
        "2024-03-14T05:30:00+05:30"
    )


def test_presets_without_their_ids_are_skipped_with_the_flag_to_give() -> None:
    from datetime import datetime

    plans = plan_reports(Subjects(account_id="A"), datetime.fromisoformat("2024-03-15T05:30+05:30"))
    skipped = {p.name: p.skipped for p in plans if p.skipped}
    assert skipped == {
        "time_usage_subscriber": "needs --msisdn (none given)",
        "byte_usage_subscriber": "needs --msisdn (none given)",
        "bandwidth_percentile": "needs --customer-site-id (none given)",
        "ue_connections_subscriber": "needs --imsi (none given)",
    }


def test_live_settings_without_an_account_are_a_config_error(tmp_path: Path) -> None:
    settings = Settings(api_key="k" * 12, reporting_url="https://reports.example")
    with pytest.raises(ConfigError, match="the live service needs an account: pass --account-id"):
        run_demo(tmp_path, settings=settings, echo=lambda _: None)


@pytest.mark.slow
def test_live_path_runs_against_a_configured_service(
    tmp_path: Path, make_sandbox: Callable[..., SandboxHandle]
) -> None:
    sb = make_sandbox(clock=None)  # the live path uses the real "now"
    sim = next(s for s in sb.network.sims if s.account_id == sb.account_id)
    settings = Settings(api_key=sb.api_key, reporting_url=sb.reporting_url)
    subjects = Subjects(account_id=sb.account_id, msisdns=(sim.msisdn,), devices=(sim.msisdn,))
    lines: list[str] = []
    result = run_demo(tmp_path, settings=settings, subjects=subjects, echo=lines.append)
    assert result.ok
    assert result.source == f"the live service at {sb.reporting_url}"
    ran = {o.plan.name for o in result.outcomes if o.frame is not None}
    assert ran == set(presets.names("v1")) - {"bandwidth_percentile", "ue_connections_subscriber"}
    assert "skipped: needs --imsi (none given)" in "\n".join(lines)
    assert sb.api_key not in "\n".join(lines) and sb.api_key not in result.index.read_text()


def test_a_refused_key_stops_the_demo_without_showing_the_key(
    tmp_path: Path, sandbox: SandboxHandle
) -> None:
    wrong = "wrong-key-0123456789"
    settings = Settings(api_key=wrong, reporting_url=sandbox.reporting_url)
    lines: list[str] = []
    with pytest.raises(AuthError) as info:
        run_demo(tmp_path, settings=settings, subjects=Subjects(account_id="A"), echo=lines.append)
    assert info.value.status_code == 401
    assert wrong not in str(info.value) and wrong not in "\n".join(lines)


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="edgereports")
    add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


@pytest.mark.slow
def test_the_subcommand_writes_the_demo_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDGEREPORTS_API_KEY", "not-used-with-sandbox")
    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", "https://reports.example")
    args = _parse(["demo", "--out", str(tmp_path / "out"), "--sandbox", "--devices", "16"])
    handler: Any = args.handler
    assert handler(args) == 0
    out = capsys.readouterr().out
    assert f"page:             {tmp_path / 'out' / 'index.html'}" in out
    assert len(list((tmp_path / "out" / "charts").glob("*.png"))) == 11
    assert len(list((tmp_path / "out" / "frames").glob("*.parquet"))) == 11


@pytest.mark.slow
def test_the_subcommand_exits_1_when_a_preset_fails(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    sb = make_sandbox(clock=None)
    sb.enqueue_faults("400")  # the first request (time_usage_enterprise) is refused
    monkeypatch.setenv("EDGEREPORTS_API_KEY", sb.api_key)
    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", sb.reporting_url)
    args = _parse(["demo", "--out", str(tmp_path), "--account-id", sb.account_id])
    handler: Any = args.handler
    assert handler(args) == 1
    out = capsys.readouterr().out
    assert "== 01_time_usage_enterprise" in out and "error: ApiError" in out
    assert "== 11_device_status" in out  # the other presets still ran
    assert len(list((tmp_path / "charts").glob("*.png"))) == 6  # 11 - 1 failed - 4 skipped


@pytest.mark.slow
def test_charts_say_what_they_show(demo: tuple[DemoResult, list[str]]) -> None:
    from edgereports.plotting import plot

    result, _ = demo
    outcomes = {o.plan.name: o for o in result.outcomes}
    with serve(seed=0) as sb:
        profile = {d.msisdn: d.profile for d in sb.network.devices}
    shown = outcomes["byte_usage_subscriber"]
    assert shown.frame is not None and shown.plan.note == "handsets"
    assert {profile[m] for m in shown.frame["msisdn"]} == {"handset"}
    totals = shown.frame.groupby("metric", observed=True)["value"].sum()
    assert totals["downlink_bytes"] > totals["uplink_bytes"] > 0  # phones download
    samples = outcomes["ue_connections_enterprise"].frame
    assert samples is not None
    assert plot(samples).get_ylabel() == "UE connections (5-minute samples)"
    daily = outcomes["time_usage_enterprise"].frame
    assert daily is not None and len(daily) == 7  # the last 7 days: seven bars, not eight
    assert daily.attrs["dropped_after_end"] == 1  # the service's bucket at the range's end
    docs = (Path(__file__).resolve().parents[2] / "docs" / "sandbox.md").read_text("utf-8")
    for kind in ("handset", "camera", "sensor", "gateway"):
        assert f"`{kind}`" in docs


@pytest.mark.slow
def test_the_page_ends_with_the_health_flags_of_every_device(
    demo: tuple[DemoResult, list[str]],
) -> None:
    result, lines = demo
    assert result.health is not None and result.health_error is None
    # the two injected incidents are found, and nothing else is flagged
    injected = {(i["kind"], i["subject"]) for i in result.incidents}
    assert {i["kind"] for i in result.incidents} == {"device_offline", "sim_idle"}
    assert set(zip(result.health["kind"], result.health["subject"], strict=True)) == injected
    for incident in result.incidents:
        flag = result.health[result.health["subject"] == incident["subject"]].iloc[0]
        start, end = pd.Timestamp(incident["start"]), pd.Timestamp(incident["end"])
        assert flag["start"] < end and flag["end"] > start  # the flag covers the incident
    page = result.index.read_text()
    assert 'id="health"' in page and "Health flags of the account&#x27;s devices" in page
    assert "Injected into the sandbox" in page
    assert all(incident_text(i) in page for i in result.incidents)
    assert "2 injected incident(s)" in result.source
    assert any(line.startswith("\n== health · 64 devices") for line in lines)
    assert any("injected into the sandbox: device_offline of" in line for line in lines)
