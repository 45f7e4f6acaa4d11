"""``er.fetch``: one call, relative dates, the clients it keeps, outputs and errors."""

from __future__ import annotations

import dataclasses
import importlib
import subprocess
import sys
import threading
from datetime import datetime

import pandas as pd
import pyarrow as pa
import pytest
import requests

import edgereports as er
from edgereports.reporting import ReportingClient
from edgereports.sandbox import SandboxHandle
from tests.conftest import SANDBOX_NOW

fetch_module = importlib.import_module("edgereports._fetch")


def _inside(data: pd.DataFrame | pa.Table) -> int:
    """Rows of buckets that begin before the range's end (the range rule)."""
    end = pd.Timestamp(er.provenance(data)["request"]["end_date_time"])
    stamps = (
        data.column("time_stamp").to_pandas() if isinstance(data, pa.Table) else data["time_stamp"]
    )
    return int((stamps < end).sum())


def _settings(sb: SandboxHandle) -> er.Settings:
    return er.Settings(api_key=sb.api_key, reporting_url=sb.reporting_url, account_id=sb.account_id)


def test_preset_name_relative_dates_and_settings(sandbox: SandboxHandle) -> None:
    """Relative dates resolve against the service's clock (the shared sandbox's, fixed at
    SANDBOX_NOW, years before this machine's), not the local one."""
    msisdn = [s.msisdn for s in sandbox.network.sims_of(sandbox.account_id)[:2]]
    df = er.fetch(
        "byte_usage_subscriber",
        msisdn=msisdn,
        start="2d",
        end="today",
        settings=_settings(sandbox),
    )
    assert df.attrs["request"]["start_date_time"] == "2022-07-06T00:00:00+00:00"
    assert df.attrs["request"]["end_date_time"] == "2022-07-08T00:00:00+00:00"
    clock = df.attrs["clock"]
    assert clock["source"] == "service"  # the Date of its answers, plus the seconds since
    late = datetime.fromisoformat(clock["now"]) - datetime.fromisoformat(SANDBOX_NOW)
    assert late.total_seconds() < 60
    assert df.attrs["relative"] == {"start": "2d", "end": "today"}
    assert set(df["msisdn"]) == {str(m) for m in msisdn}
    assert _inside(df) == 2 * 2 * 48  # two subscribers, two metrics, 48 hours
    client = ReportingClient.from_settings(_settings(sandbox))
    direct = client.fetch(
        er.presets.byte_usage_subscriber(
            account_id=sandbox.account_id, msisdn=msisdn, start="2d", end="today"
        )
    )
    pd.testing.assert_frame_equal(df, direct)


def test_from_env_and_one_client_per_settings(
    sandbox: SandboxHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDGEREPORTS_API_KEY", sandbox.api_key)
    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", sandbox.reporting_url)
    monkeypatch.setenv("EDGEREPORTS_ACCOUNT_ID", sandbox.account_id)
    made: list[er.Settings] = []
    real = ReportingClient.from_settings

    def counting(settings: er.Settings, **options: object) -> ReportingClient:
        made.append(settings)
        return real(settings, **options)

    monkeypatch.setattr(ReportingClient, "from_settings", counting)
    er.fetch_clients.close()  # start with no kept client
    first = er.fetch("time_usage_enterprise", start="7d", end="today")
    second = er.fetch("time_usage_enterprise", start="yesterday", end="today", output="arrow")
    assert _inside(first) == 7 and _inside(second) == 1
    assert len(made) == 1  # the second call reused the client of the same Settings


def test_sandbox_true_embeds_a_sandbox() -> None:
    df = er.fetch("time_usage_enterprise", start="3d", end="today", sandbox=True)
    assert _inside(df) == 3
    assert er.provenance(df)["request"]["granularity"] == "DAY"
    report = er.presets.time_usage_enterprise(
        account_id=df["account_id"][0], start="2d", end="today"
    )
    assert _inside(er.fetch(report, sandbox=True)) == 2


@pytest.mark.parametrize("output", ["arrow", "polars"])
def test_client_outputs_equal_pandas(sandbox: SandboxHandle, output: str) -> None:
    if output == "polars":
        pytest.importorskip("polars")
    report = er.presets.ue_connections_avg_peak(
        account_id=sandbox.account_id, start="2022-07-06T00:00:00Z", end="2022-07-08T00:00:00Z"
    )
    client = ReportingClient.from_settings(_settings(sandbox))
    df = client.fetch(report)
    out = client.fetch(report, output=output)  # type: ignore[arg-type]
    table = out if isinstance(out, pa.Table) else out.to_arrow()
    back = table.to_pandas(types_mapper={pa.string(): pd.StringDtype()}.get)
    back = back.astype({c: df[c].dtype for c in df.columns})
    pd.testing.assert_frame_equal(back, df)
    assert er.provenance(out)["request"] == df.attrs["request"]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"settings": er.Settings(account_id="A")},
            er.ConfigError,
            r"missing settings: api_key \(EDGEREPORTS_API_KEY\), reporting_url .*sandbox=True",
        ),
        (
            {"settings": er.Settings()},
            er.ConfigError,
            r"needs an account: pass account_id=..., or set EDGEREPORTS_ACCOUNT_ID.*sandbox=True",
        ),
        (
            {"settings": er.Settings(account_id="A"), "output": "csv"},
            er.InputError,
            "output must be one of 'pandas', 'arrow', 'polars'",
        ),
        (
            {"settings": er.Settings(account_id="A"), "colour": "red"},
            er.QueryError,
            "takes no parameter 'colour'",
        ),
        (
            {"settings": er.Settings(account_id="A"), "start": "7x"},
            er.QueryError,
            "nor a relative date",
        ),
    ],
)
def test_errors_before_any_request(kwargs: dict[str, object], error: type, message: str) -> None:
    kwargs.setdefault("start", "7d")
    kwargs.setdefault("end", "today")
    with pytest.raises(error, match=message):
        er.fetch("time_usage_enterprise", **kwargs)  # type: ignore[arg-type]


def test_unknown_preset_and_report_with_params() -> None:
    with pytest.raises(er.QueryError, match="did you mean"):
        er.fetch("time_usage_enterprize", settings=er.Settings(account_id="A"))
    with pytest.raises(er.QueryError, match="only with a preset name"):
        er.fetch(er.Report(), msisdn=["1"], settings=er.Settings())
    assert fetch_module.fetch is er.fetch


def _workers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("edgereports_")}


def test_the_cache_keeps_one_client_per_settings_and_options(sandbox: SandboxHandle) -> None:
    settings = _settings(sandbox)
    with fetch_module.ClientCache() as clients:
        client = clients.get(settings)
        assert clients.get(dataclasses.replace(settings)) is client  # equal settings
        slower = clients.get(dataclasses.replace(settings, timeout=99.0))
        quiet = clients.get(settings, progress=False)
        assert len({id(client), id(slower), id(quiet)}) == 3
        assert clients.get(settings, progress=False) is quiet
        assert len(clients) == 3
        before = _workers()
        msisdn = [s.msisdn for s in sandbox.network.sims_of(sandbox.account_id)[:3]]
        report = er.presets.byte_usage_subscriber(
            account_id=sandbox.account_id, msisdn=msisdn, start="2d", end="today"
        )
        assert len(client.fetch(report)) > 0
        started = _workers() - before  # the fan-out ran on the client's worker threads
        assert started
    assert len(clients) == 0
    assert not [t for t in started if t.is_alive()]  # close() stopped them
    assert clients.get(settings) is not client  # a closed cache makes new clients
    clients.close()


def test_an_option_that_cannot_key_a_client_is_refused(sandbox: SandboxHandle) -> None:
    clients = fetch_module.ClientCache()
    with pytest.raises(er.InputError, match=r"option retry_statuses= .* hashable"):
        clients.get(_settings(sandbox), retry_statuses=[500])
    assert len(clients) == 0


def test_close_stops_the_embedded_sandbox() -> None:
    clients = fetch_module.ClientCache()
    settings = clients.sandbox()
    assert clients.sandbox() is settings  # started once
    assert settings.reporting_url is not None
    assert requests.get(settings.reporting_url, timeout=10).status_code < 500
    clients.close()
    with pytest.raises(requests.ConnectionError):
        requests.get(settings.reporting_url, timeout=10)
    restarted = clients.sandbox()  # usable again: a new sandbox
    assert restarted.reporting_url is not None
    clients.close()


def test_a_script_that_fetches_from_the_embedded_sandbox_exits() -> None:
    """Nothing to close by hand: the sandbox's threads are daemons and the kept clients are
    closed at exit (the timeout only guards the suite against a hang)."""
    code = (
        "import edgereports as er; "
        "df = er.fetch('time_usage_enterprise', start='3d', end='today', sandbox=True); "
        "print(len(df) > 0, len(er.fetch_clients))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "1"]


def test_warnings_name_the_line_that_called_er_fetch(sandbox: SandboxHandle) -> None:
    with pytest.warns(er.EdgeReportsWarning) as seen:
        er.fetch(
            "time_usage_enterprise",
            start="2022-07-01T00:00:00+05:30",  # UTC days: the first and last in part
            end="2022-07-08T00:00:00+05:30",
            settings=_settings(sandbox),
        )
    assert {w.category for w in seen} >= {er.PartialBucketWarning}
    assert {w.filename for w in seen} == {__file__}
