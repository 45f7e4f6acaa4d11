"""Incidents injected into the sandbox: checked specs, and one truth in every report served."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

import edgereports as er
from edgereports import presets
from edgereports.sandbox import SandboxHandle, build_network, serve

CLOCK = "2024-03-15T12:00:00+05:30"
NET = build_network(0, 64)
ACCOUNT = NET.primary_account_id
DEVICES = [d for d in NET.devices if d.account_id == ACCOUNT]
OFF = DEVICES[0]  # a camera: online nearly every hour
DARK_SITE = next(d.customer_site_id for d in DEVICES if d.customer_site_id != OFF.customer_site_id)
SPIKED = next(d for d in DEVICES[1:] if d.customer_site_id != DARK_SITE)
INCIDENTS = [
    {"kind": "device_offline", "subject": OFF.msisdn, "start": "2024-03-10T00:00:00+00:00",
     "hours": 30},
    {"kind": "site_dark", "subject": DARK_SITE, "start": "2024-03-12T04:00:00+00:00", "hours": 6},
    {"kind": "usage_spike", "subject": SPIKED.msisdn, "start": "2024-03-11T00:00:00+00:00",
     "hours": 24, "factor": 8},
]  # fmt: skip


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[SandboxHandle, SandboxHandle]]:
    """The same network with and without the incidents."""
    with serve(seed=0, clock=CLOCK, incidents=INCIDENTS) as hit, serve(seed=0, clock=CLOCK) as calm:
        yield hit, calm


def _client(sb: SandboxHandle, version: str = "v1") -> er.ReportingClient:
    return er.ReportingClient(sb.api_key, sb.reporting_url, api_version=version)


def _hourly(sb: SandboxHandle, msisdn: str, accept: str = "application/json") -> Any:
    report = presets.byte_usage_subscriber(
        account_id=ACCOUNT, msisdn=[msisdn], start="2024-03-09", end="2024-03-13"
    ).metric("time_usage_seconds", "COUNT")
    with _client(sb) as client:
        return client.fetch(report, accept=accept)


def test_the_handle_and_the_admin_route_list_the_incidents(
    pair: tuple[SandboxHandle, SandboxHandle],
) -> None:
    hit, calm = pair
    assert [i["kind"] for i in hit.incidents] == ["device_offline", "site_dark", "usage_spike"]
    first = hit.incidents[0]
    assert first["start"] == "2024-03-10T00:00:00+00:00"
    assert first["end"] == "2024-03-11T06:00:00+00:00"
    assert hit.incidents[2]["factor"] == 8.0
    listed = requests.get(f"{hit.base_url}/sandbox/incidents", timeout=10).json()
    assert listed == {"incidents": hit.incidents}
    assert calm.incidents == []


def test_an_offline_device_has_no_time_and_no_bytes_in_json_and_csv(
    pair: tuple[SandboxHandle, SandboxHandle],
) -> None:
    hit, calm = pair
    got = _hourly(hit, OFF.msisdn)
    same = _hourly(hit, OFF.msisdn, accept="text/csv")
    base = _hourly(calm, OFF.msisdn)
    assert got.equals(same)
    inside = (got.time_stamp >= "2024-03-10T00:00Z") & (got.time_stamp < "2024-03-11T06:00Z")
    assert inside.sum() == 30 * 3
    assert (got.loc[inside, "value"] == 0).all()
    assert (base.loc[inside, "value"] > 0).any()
    # outside the incident the device is as it always was
    assert got.loc[~inside, "value"].tolist() == base.loc[~inside, "value"].tolist()


def test_a_spike_multiplies_the_rates_and_keeps_the_sessions(
    pair: tuple[SandboxHandle, SandboxHandle],
) -> None:
    hit, calm = pair
    got, base = _hourly(hit, SPIKED.msisdn), _hourly(calm, SPIKED.msisdn)
    inside = (got.time_stamp >= "2024-03-11T00:00Z") & (got.time_stamp < "2024-03-12T00:00Z")
    seconds = got.metric == "time_usage_seconds"
    assert got.loc[seconds, "value"].tolist() == base.loc[seconds, "value"].tolist()
    up = (got.metric == "uplink_bytes") & inside
    assert got.loc[up, "value"].sum() > 5 * base.loc[up, "value"].sum()


def test_a_dark_site_is_dark_in_v1_v2_and_the_current_status(
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    # the clock inside the site's dark hours: "now" is dark too
    sb = make_sandbox(seed=0, clock="2024-03-12T07:00:00+00:00", incidents=INCIDENTS)
    members = [d for d in DEVICES if d.customer_site_id == DARK_SITE]
    v1 = (
        er.Report(account_id=ACCOUNT)
        .between("2024-03-12T00:00:00+00:00", "2024-03-12T07:00:00+00:00")
        .granularity("HOUR")
        .by("customer_site_id")
        .where(customer_site_id=[DARK_SITE])
        .metric("time_usage_seconds", "COUNT")
    )
    with _client(sb) as client:
        hours = client.fetch(v1)
        status = client.fetch(
            presets.device_status(account_id=ACCOUNT, imsi=[d.imsi for d in members])
        )
    dark = hours.time_stamp >= "2024-03-12T04:00Z"
    assert (hours.loc[dark, "value"] == 0).all() and (hours.loc[~dark, "value"] > 0).all()
    assert set(status["value"].tolist()) == {0.0}
    v2 = er.Report(account_id=ACCOUNT, api_version="v2").between(
        "2024-03-12T00:00:00+00:00", "2024-03-12T07:00:00+00:00"
    )
    v2 = v2.granularity("HOUR").where(device=[DARK_SITE])
    v2 = v2.metric("ue_session_duration_seconds", "COUNT")
    with _client(sb, "v2") as client:
        pieces = client.fetch(v2)
    late = pieces.time_stamp > "2024-03-12T04:00Z"
    assert (pieces.loc[late, "value"] == 0).all() and (pieces.loc[~late, "value"] > 0).all()


def test_sim_counts_do_not_change(pair: tuple[SandboxHandle, SandboxHandle]) -> None:
    hit, calm = pair
    report = presets.active_sim_count(account_id=ACCOUNT, start="2024-03-01", end="2024-03-15")
    with _client(hit) as a, _client(calm) as b:
        assert a.fetch(report).equals(b.fetch(report))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"kind": "meltdown", "subject": OFF.msisdn, "start": "2024-03-10T00:00:00+00:00",
          "hours": 3}, "kind 'meltdown' must be one of site_dark, enodeb_dark, device_offline"),
        ({"kind": "site_dark", "subject": "NOWHERE-1", "start": "2024-03-10T00:00:00+00:00",
          "hours": 3}, "subject 'NOWHERE-1' of site_dark must be a customer site id"),
        ({"kind": "device_offline", "subject": "1", "start": "2024-03-10T00:00:00+00:00",
          "hours": 3}, "must be the MSISDN of a device"),
        ({"kind": "device_offline", "subject": OFF.msisdn, "start": "2024-03-10T10:00:00+05:30",
          "hours": 3}, "must fall on a whole UTC hour"),
        ({"kind": "device_offline", "subject": OFF.msisdn, "start": "2024-03-10T10:00:00",
          "hours": 3}, "needs a UTC offset"),
        ({"kind": "sim_idle", "subject": OFF.msisdn, "start": "2024-03-10T00:00:00+00:00",
          "hours": 5}, "hours of sim_idle must be 24 to"),
        ({"kind": "usage_drop", "subject": OFF.msisdn, "start": "2024-03-10T00:00:00+00:00",
          "hours": 5, "factor": 2}, "factor of usage_drop must be between 0 and 1"),
        ({"kind": "device_offline", "subject": OFF.msisdn, "hours": 5}, "missing start"),
        ({"kind": "device_offline", "subject": OFF.msisdn, "start": "2024-03-10T00:00:00Z",
          "hours": 5, "when": 1}, "unknown field 'when'"),
        ("device_offline:123", "must look like KIND:SUBJECT:START:HOURS"),
    ],
)  # fmt: skip
def test_bad_incidents_are_refused_with_the_field_named(spec: Any, message: str) -> None:
    with (
        pytest.raises(ValueError, match="incident 1: .*" + message.replace("(", r"\(")),
        serve(seed=0, clock=CLOCK, incidents=[spec]),
    ):
        pass  # pragma: no cover - never reached


def test_the_command_takes_incidents_and_refuses_bad_ones_in_one_line() -> None:
    ok = f"device_offline:{OFF.msisdn}:2024-03-10T00:00:00+00:00:12"
    run = [sys.executable, "-m", "edgereports.sandbox", "--port", "0", "--now", CLOCK]
    done = subprocess.run(
        [*run, "--incident", ok, "--duration", "0"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert f"incident:       device_offline {OFF.msisdn} 2024-03-10T00:00:00+00:00 for 12 h" in (
        done.stdout
    )
    bad = subprocess.run(
        [*run, "--incident", "device_offline:1:2024-03-10T00:00:00+00:00:12", "--duration", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "must be the MSISDN of a device" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_an_idle_sim_keeps_its_sessions_and_a_drop_cuts_its_rates(
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    idle, dropped = DEVICES[5].msisdn, DEVICES[6].msisdn
    window = {"start": "2024-03-10T00:00:00+00:00", "hours": 48}
    hit = make_sandbox(seed=0, clock=CLOCK, incidents=[
        {"kind": "sim_idle", "subject": idle, **window},
        {"kind": "usage_drop", "subject": dropped, **window},
    ])  # fmt: skip
    calm = make_sandbox(seed=0, clock=CLOCK)
    for number in (idle, dropped):
        got, base = _hourly(hit, number), _hourly(calm, number)
        inside = (got.time_stamp >= "2024-03-10T00:00Z") & (got.time_stamp < "2024-03-12T00:00Z")
        seconds = got.metric == "time_usage_seconds"
        assert got.loc[seconds, "value"].tolist() == base.loc[seconds, "value"].tolist()
        octets = ~seconds & inside
        if number == idle:
            assert (got.loc[octets, "value"] == 0).all() and base.loc[octets, "value"].sum() > 0
        else:
            assert 0 < got.loc[octets, "value"].sum() < 0.2 * base.loc[octets, "value"].sum()
        assert got.loc[~inside, "value"].tolist() == base.loc[~inside, "value"].tolist()


ENODEB = next(
    e.enodeb_ip
    for e in NET.enodebs
    if e.account_id == ACCOUNT and sum(d.enodeb_ip == e.enodeb_ip for d in DEVICES) >= 2
)
GONE = next(s for s in NET.sims_of(ACCOUNT) if s.deactivation_date is None)
LIFE = [
    {"kind": "enodeb_dark", "subject": ENODEB, "start": "2024-03-12T04:00:00+00:00", "hours": 6},
    {"kind": "sim_deactivated", "subject": GONE.msisdn, "start": "2024-03-10T00:00:00+00:00"},
]


def test_a_dark_enodeb_silences_its_devices_and_no_other(
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    sb = make_sandbox(seed=0, clock=CLOCK, incidents=LIFE)
    calm = make_sandbox(seed=0, clock=CLOCK)
    report = (
        er.Report(account_id=ACCOUNT)
        .between("2024-03-12T00:00:00+00:00", "2024-03-12T12:00:00+00:00")
        .granularity("HOUR")
        .by("msisdn")
        .where(msisdn=[d.msisdn for d in DEVICES])
        .metric("time_usage_seconds", "COUNT")
    )
    with _client(sb) as a, _client(calm) as b:
        got, base = a.fetch(report), b.fetch(report)
    inside = (got.time_stamp >= "2024-03-12T04:00Z") & (got.time_stamp < "2024-03-12T10:00Z")
    behind = got.msisdn.isin([d.msisdn for d in DEVICES if d.enodeb_ip == ENODEB])
    got, base = got[got.msisdn != GONE.msisdn], base[base.msisdn != GONE.msisdn]  # deactivated
    inside, behind = inside[got.index], behind[got.index]
    assert (got.loc[inside & behind, "value"] == 0).all()
    assert base.loc[inside & behind, "value"].sum() > 0
    assert (
        got.loc[~(inside & behind), "value"].tolist()
        == base.loc[~(inside & behind), "value"].tolist()
    )
    assert sb.incidents[0]["end"] == "2024-03-12T10:00:00+00:00"


def test_a_deactivated_sim_agrees_in_sim_counts_activity_and_inventory(
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    sb = make_sandbox(seed=0, clock=CLOCK, incidents=LIFE)
    calm = make_sandbox(seed=0, clock=CLOCK)
    counts = presets.active_sim_count(account_id=ACCOUNT, start="2024-03-08", end="2024-03-12")
    with _client(sb) as a, _client(calm) as b:
        fell, was = a.fetch(counts), b.fetch(counts)
        daily = a.fetch(
            presets.time_usage_subscriber(
                account_id=ACCOUNT, msisdn=[GONE.msisdn], start="2024-03-08", end="2024-03-12"
            )
        )
    total = (fell.physical + fell.esim).to_numpy() - (was.physical + was.esim).to_numpy()
    assert total.tolist() == [0, 0, -1, -1]  # from 10 March on, one SIM fewer
    assert daily.value.tolist()[2:] == [0.0, 0.0] and daily.value.tolist()[0] > 0
    row = next(r for r in sb.inventory() if r["msisdn"] == GONE.msisdn)
    assert row["deactivation_date"] == "2024-03-10"
    assert next(s for s in sb.network.sims if s.msisdn == GONE.msisdn).deactivation_date is not None
    assert sb.incidents[1] == {
        "kind": "sim_deactivated",
        "subject": GONE.msisdn,
        "start": "2024-03-10T00:00:00+00:00",
        "end": None,
        "hours": None,
    }


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"kind": "enodeb_dark", "subject": "10.99.99.99", "start": "2024-03-10T00:00:00+00:00",
          "hours": 3}, "subject '10.99.99.99' of enodeb_dark must be an eNodeB's IP address"),
        ({"kind": "sim_deactivated", "subject": GONE.msisdn, "start": "2024-03-10T00:00:00+00:00",
          "hours": 3}, "sim_deactivated takes no hours"),
        ({"kind": "sim_deactivated", "subject": GONE.msisdn, "start": "2024-03-10T05:00:00+00:00"},
         "must be a UTC midnight"),
        ({"kind": "sim_deactivated", "subject": GONE.msisdn, "start": "2019-03-10T00:00:00+00:00"},
         "is not active on 2019-03-10"),
    ],
)  # fmt: skip
def test_bad_lifecycle_and_enodeb_incidents_are_refused(spec: Any, message: str) -> None:
    with (
        pytest.raises(ValueError, match="incident 1: .*" + message.replace("(", r"\(")),
        serve(seed=0, clock=CLOCK, incidents=[spec]),
    ):
        pass  # pragma: no cover - never reached


@pytest.mark.slow
@pytest.mark.parametrize("name", ["inventory.csv", "inventory.parquet"])
def test_the_command_writes_its_inventory(name: str, tmp_path: Any) -> None:
    import pandas as pd

    target = tmp_path / name
    done = subprocess.run(
        [sys.executable, "-m", "edgereports.sandbox", "--port", "0", "--now", CLOCK,
         "--incident", f"sim_deactivated:{GONE.msisdn}:2024-03-10T00:00:00+00:00",
         "--write-inventory", str(target), "--duration", "0"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (
        f"incident:       sim_deactivated {GONE.msisdn} 2024-03-10T00:00:00+00:00\n" in done.stdout
    )
    read = pd.read_parquet(target) if name.endswith(".parquet") else pd.read_csv(target, dtype=str)
    assert len(read) == len(NET.sims_of(ACCOUNT)) and f"inventory:      {target}" in done.stdout
    assert list(read.columns)[:5] == [
        "msisdn",
        "imsi",
        "device_id",
        "customer_site_id",
        "enodeb_ip",
    ]
    gone = read[read.msisdn == GONE.msisdn].iloc[0]
    assert gone.deactivation_date == "2024-03-10" and gone.enodeb_ip in {
        e.enodeb_ip for e in NET.enodebs
    }
