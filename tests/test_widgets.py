"""The explorer driven in-process: set widget values, click buttons, read the frame and messages."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg", force=True)

import pandas as pd
import pytest

from edgereports import presets
from edgereports.errors import AuthError, InputError, QueryError
from edgereports.export import save_parquet
from edgereports.reporting import ReportingClient
from edgereports.sandbox import SandboxHandle
from edgereports.widgets import Explorer

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
END = date(2022, 7, 8)  # the shared sandbox's clock is 2022-07-08T10:00:00+05:30


@pytest.fixture
def client(sandbox: SandboxHandle) -> Iterator[ReportingClient]:
    with ReportingClient(sandbox.api_key, sandbox.reporting_url, progress=False) as c:
        yield c


def known_values(sb: SandboxHandle) -> dict[str, list[str]]:
    sims = [s for s in sb.network.sims if s.account_id == sb.account_id]
    sites = [s.customer_site_id for s in sb.network.sites if s.account_id == sb.account_id]
    return {
        "msisdn": [s.msisdn for s in sims[:4]],
        "imsi": [s.imsi for s in sims[:4]],
        "customer_site_id": sites,
    }


@pytest.fixture
def explorer(client: ReportingClient, sandbox: SandboxHandle, tmp_path: Path) -> Explorer:
    return Explorer(
        client,
        account_id=sandbox.account_id,
        values=known_values(sandbox),
        end=END,
        tz="+05:30",
        export_dir=tmp_path,
    )


@pytest.mark.parametrize("name", presets.names())
def test_run_shows_the_frame_and_chart_of_every_preset(
    explorer: Explorer, client: ReportingClient, name: str
) -> None:
    explorer.version.value = presets.get(name).api_version  # offers that version's presets
    explorer.preset.value = name
    explorer.run_button.click()
    assert explorer.error is None, explorer.message
    frame = explorer.frame
    assert frame is not None and len(frame) > 0
    assert explorer.message.startswith(f"{len(frame)} rows × {len(frame.columns)} columns in ")
    assert f"<b>{len(frame)} rows × {len(frame.columns)} columns</b>" in explorer.table.value
    assert bytes(explorer.chart.value)[:8] == PNG_MAGIC
    assert (explorer.progress.value, explorer.progress.bar_style) == (1, "success")
    assert not explorer.run_button.disabled
    # the frame is the report the controls describe, fetched by the same client
    expected = client.for_version(explorer.report().api_version).fetch(explorer.report())
    pd.testing.assert_frame_equal(frame, expected)


def test_controls_make_the_presets_request(explorer: Explorer, sandbox: SandboxHandle) -> None:
    msisdns = known_values(sandbox)["msisdn"]
    explorer.preset.value = "time_usage_subscriber"
    explorer.dimensions["msisdn"].value = msisdns[:2]
    explorer.start.value = date(2022, 7, 1)
    explorer.granularity.value = "HOUR"
    expected = (
        presets.time_usage_subscriber(
            account_id=sandbox.account_id,
            msisdn=msisdns[:2],
            start="2022-07-01T00:00:00+05:30",
            end="2022-07-08T00:00:00+05:30",
        )
        .granularity("HOUR")
        .to_request()
    )
    assert explorer.report().to_request() == expected


def test_a_keyword_range_ends_at_now(explorer: Explorer) -> None:
    explorer.preset.value = "ue_connections_avg_peak"
    explorer.range.value = "LAST DAY"
    assert explorer.start.disabled and explorer.end.disabled
    request = explorer.report().to_request()
    assert (request["start_date_time"], request["end_date_time"]) == ("LAST DAY", "NOW")
    explorer.run_button.click()
    assert explorer.error is None and explorer.frame is not None and len(explorer.frame) > 0


def test_controls_follow_the_preset(explorer: Explorer) -> None:
    def shown(name: str) -> bool:
        return explorer._dimension_rows[name].layout.display != "none"

    explorer.preset.value = "bandwidth_percentile"
    assert shown("customer_site_id") and not shown("msisdn") and not shown("imsi")
    assert explorer.percentile.layout.display != "none"
    explorer.preset.value = "device_status"
    assert shown("imsi") and not shown("msisdn") and not shown("customer_site_id")
    assert explorer.range.disabled and explorer.start.disabled and explorer.granularity.disabled
    assert explorer.percentile.layout.display == "none"
    assert explorer.export_path.value.endswith("device_status.parquet")


def test_show_request_gives_the_json_and_code_that_builds_it(
    explorer: Explorer, sandbox: SandboxHandle
) -> None:
    explorer.preset.value = "bandwidth_percentile"
    explorer.dimensions["customer_site_id"].value = known_values(sandbox)["customer_site_id"][:2]
    explorer.percentile.value = 99.5
    explorer.granularity.value = "DAY"
    explorer.request_button.click()
    assert explorer.error is None, explorer.message
    shown = explorer.request_text.value
    body, _, code = shown.partition("\n\n# the same report in Python\n")
    request = json.loads(body)
    assert request == explorer.report().to_request()
    scope: dict[str, Any] = {}
    exec(code.replace("df = client.fetch(report)", "pass"), scope)
    assert scope["report"].to_request() == request
    assert explorer.outputs.selected_index == 2


def test_export_writes_the_current_frame(explorer: Explorer, tmp_path: Path) -> None:
    explorer.preset.value = "active_sim_count"
    explorer.run_button.click()
    target = tmp_path / "sub" / "sims.parquet"
    explorer.export_path.value = str(target)
    explorer.export_button.click()
    frame = explorer.frame
    assert explorer.error is None and frame is not None, explorer.message
    assert explorer.message == f"Wrote {len(frame)} rows to {target}"
    back = pd.read_parquet(target)
    pd.testing.assert_frame_equal(back, frame.reset_index(drop=True), check_dtype=True)
    assert [p.name for p in target.parent.iterdir()] == ["sims.parquet"]  # no temporary left


def test_save_parquet_keeps_the_request_in_the_metadata(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    frame = pd.DataFrame({"date": pd.to_datetime(["2024-03-01"]), "physical": [3], "esim": [1]})
    frame.attrs.update(shape="sim_count", request={"metrics": [{"name": "sim"}]})
    path = save_parquet(frame, tmp_path / "f.parquet")
    info = json.loads(pq.read_schema(path).metadata[b"edgereports"])
    assert info["shape"] == "sim_count" and info["request"] == {"metrics": [{"name": "sim"}]}


def _set(explorer: Explorer, **values: Any) -> None:
    for name, value in values.items():
        target = (
            explorer.dimensions[name[4:]] if name.startswith("dim_") else getattr(explorer, name)
        )
        target.value = value


@pytest.mark.parametrize(
    ("values", "button", "error", "message"),
    [
        (
            {"preset": "time_usage_subscriber", "dim_msisdn": []},
            "run_button",
            QueryError,
            "QueryError: preset 'time_usage_subscriber' needs msisdn",
        ),
        (
            {"tz": "Mars/Base"},
            "run_button",
            InputError,
            "InputError: Zone: timezone 'Mars/Base' is neither an offset like '+05:30' nor an "
            "IANA zone name like 'Asia/Kolkata'",
        ),
        (
            {"start": date(2022, 7, 9)},
            "run_button",
            QueryError,
            "QueryError: start_date_time '2022-07-09T00:00:00+05:30' must be before "
            "end_date_time '2022-07-08T00:00:00+05:30'",
        ),
        (
            {"end": None},
            "request_button",
            InputError,
            "InputError: pick both dates (From and To), or choose a LAST ... range",
        ),
        (
            {"account": ""},
            "run_button",
            QueryError,
            "QueryError: preset 'time_usage_enterprise' needs account_id",
        ),
        ({}, "export_button", InputError, "InputError: nothing to export yet: press Run first"),
    ],
)
def test_errors_are_messages_not_tracebacks(
    explorer: Explorer, values: dict[str, Any], button: str, error: type, message: str
) -> None:
    _set(explorer, **values)
    getattr(explorer, button).click()
    assert isinstance(explorer.error, error)
    assert explorer.message.startswith(message), explorer.message
    assert "Traceback" not in explorer.status.value
    assert "#b42318" in explorer.status.value  # shown as an error


def test_an_empty_export_name_is_refused(explorer: Explorer) -> None:
    explorer.preset.value = "realtime_bandwidth"
    explorer.run_button.click()
    explorer.export_path.value = "  "
    explorer.export_button.click()
    assert explorer.message == "InputError: give a file name to export to"


def test_a_refused_key_is_a_message_without_the_key(sandbox: SandboxHandle) -> None:
    wrong = "wrong-key-0123456789"
    with ReportingClient(wrong, sandbox.reporting_url, progress=False) as bad:
        explorer = Explorer(bad, account_id=sandbox.account_id, end=END)
        explorer.run_button.click()
    assert isinstance(explorer.error, AuthError)
    assert explorer.message.startswith("AuthError: ")
    assert wrong not in explorer.message and wrong not in explorer.status.value
    assert explorer.progress.bar_style == "danger" and not explorer.run_button.disabled
    assert explorer.frame is None


def test_compare_fetches_the_previous_period_beside_each_row(
    explorer: Explorer, client: ReportingClient, tmp_path: Path
) -> None:
    explorer.preset.value = "time_usage_subscriber"
    explorer.start.value = date(2022, 7, 1)
    explorer.compare.value = "previous_period"
    explorer.run_button.click()
    assert explorer.error is None, explorer.message
    frame = explorer.frame
    assert frame is not None and frame["compare_value"].notna().all()
    expected = client.fetch(explorer.report(), compare="previous_period")
    pd.testing.assert_frame_equal(frame, expected)
    assert "compare='previous_period'" in explorer.python_code()
    assert bytes(explorer.chart.value)[:8] == PNG_MAGIC
    explorer.preset.value = "device_status"  # a NOW preset: no other period to compare with
    assert explorer.compare.disabled
    explorer.preset.value = "time_usage_subscriber"
    explorer.run_button.click()
    explorer.export_path.value = str(tmp_path / "compared.parquet")
    explorer.export_button.click()
    assert list(pd.read_parquet(tmp_path / "compared.parquet").columns)[-2:] == [
        "change_pct",
        "compare_partial",
    ]
