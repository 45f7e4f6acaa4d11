"""Judging only what is known: partial lists, SIM lives, maintenance windows, and shards."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd
import pytest

import edgereports as er
from edgereports.health import flags_html, flags_table, merge
from edgereports.sandbox import SandboxHandle, build_network, serve

CLOCK = "2024-03-15T12:00:00+05:30"
START, END = "2024-02-15T00:00:00+05:30", "2024-03-15T00:00:00+05:30"
NET = build_network(0, 64)
ACCOUNT = NET.primary_account_id
DEVICES = [d for d in NET.devices if d.account_id == ACCOUNT]
CAMERA = "919733755162"  # a camera of HYD-1004, on 10.10.3.1
CELL = "10.10.5.2"  # an eNodeB of PUN-1006: two cameras, a gateway and a handset
OUT = datetime(2024, 3, 1, 4, tzinfo=UTC)
INCIDENTS = [
    {"kind": "device_offline", "subject": CAMERA, "start": OUT.isoformat(), "hours": 30},
    {"kind": "enodeb_dark", "subject": CELL, "start": "2024-03-10T02:00:00+00:00", "hours": 12},
    {"kind": "site_dark", "subject": "DEL-1003", "start": "2024-02-25T10:00:00+00:00", "hours": 6},
]


@pytest.fixture(scope="module")
def sb() -> Iterator[SandboxHandle]:
    with serve(seed=0, clock=CLOCK, incidents=INCIDENTS) as handle:
        yield handle


def _health(sb: SandboxHandle, **given: Any) -> pd.DataFrame:
    if "msisdn" in given:
        given.setdefault("account_id", ACCOUNT)
    with er.ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
        return er.health(client, **given, start=START, end=END)


def test_one_offline_device_of_a_partial_list_is_a_device_offline_never_a_site_dark(
    sb: SandboxHandle,
) -> None:
    for site_reports in (None, False):
        got = _health(sb, msisdn=[CAMERA], site_reports=site_reports)
        assert got.kind.tolist() == ["device_offline"], flags_table(got)
        assert got.subject.tolist() == [CAMERA] and got.start.tolist() == [OUT]
        assert got.episode.isna().all() and got.attrs["episodes"] == []
        assert got.attrs["inventory"]["complete"] is False
    # the site's own report says the site stayed lit
    assert got.attrs["bases"]["HYD-1004"].startswith("its 1 known devices")


def test_a_partial_list_judges_an_enodeb_from_its_known_devices_and_never_high(
    sb: SandboxHandle,
) -> None:
    cell = [d.msisdn for d in DEVICES if d.enodeb_ip == CELL]
    known = cell[:3]
    got = _health(sb, msisdn=known)
    dark = got[got.kind == "enodeb_dark"]
    assert dark.subject.tolist() == [CELL], flags_table(got)
    assert dark.severity.tolist() == ["medium"]
    assert "(judged from 3 of 3 known devices: the inventory is partial)" in dark.evidence.iloc[0]
    assert "known" in got.attrs["episodes"][0]["summary"]
    alone = _health(sb, msisdn=known[:1])  # one device is no eNodeB
    assert set(alone.kind) <= {"device_offline"}, flags_table(alone)


def test_evidence_counts_only_the_devices_active_at_those_hours(sb: SandboxHandle) -> None:
    got = _health(sb, inventory=er.Inventory.from_sandbox(sb))
    row = got[got.kind == "site_dark"].iloc[0]
    sims = {s.msisdn: s for s in NET.sims}
    there = [d.msisdn for d in DEVICES if d.customer_site_id == "DEL-1003"]
    active = [m for m in there if sims[m].active_on(row.start.date())]
    assert len(active) < len(there)  # a SIM there is not active yet: not counted
    assert row.evidence.startswith(f"all {len(active)} active devices offline for 6 h")
    (episode,) = [e for e in got.attrs["episodes"] if e["episode"] == row.episode]
    assert (episode["devices"], episode["of"], episode["subscribers"]) == (len(active),) * 3


def test_maintenance_windows_suppress_flags_and_are_listed(sb: SandboxHandle) -> None:
    base = er.Inventory.from_sandbox(sb)
    windows = pd.DataFrame(
        {
            "scope": ["msisdn", "site", "enodeb"],
            "subject": [CAMERA, "DEL-1003", CELL],
            "start": [OUT.isoformat(), "2024-02-25T09:00:00+00:00", "2024-03-10T00:00:00+00:00"],
            "end": [
                (OUT + timedelta(hours=30)).isoformat(),
                "2024-02-25T17:00:00+00:00",
                "2024-03-10T15:00:00+00:00",
            ],
            "note": ["camera swap", "power work", "cell upgrade"],
        }
    )
    planned = er.Inventory.from_frame(base.to_frame().rename(columns={
        "activation": "activation_date", "deactivation": "deactivation_date"}), windows,
        account_id=ACCOUNT)  # fmt: skip
    plain = _health(sb, inventory=base)
    got = _health(sb, inventory=planned)
    assert {"device_offline", "site_dark", "enodeb_dark"} <= set(plain.kind), flags_table(plain)
    assert got.empty, flags_table(got)
    assert [w["note"] for w in got.attrs["maintenance"]] == [  # by start
        "power work", "camera swap", "cell upgrade",
    ]  # fmt: skip
    hidden = {(s["kind"], s["subject"]) for s in got.attrs["suppressed"]}
    assert hidden >= {("device_offline", CAMERA), ("site_dark", "DEL-1003"), ("enodeb_dark", CELL)}
    page = flags_html(got)
    assert "Maintenance windows (not judged): site DEL-1003 " in page
    assert "flag(s) suppressed" in page


def test_shards_merge_to_the_whole(sb: SandboxHandle) -> None:
    inventory = er.Inventory.from_sandbox(sb)
    whole = _health(sb, inventory=inventory)
    parts = [_health(sb, inventory=inventory, shard=(i, 3)) for i in (1, 2, 3)]
    assert [p.attrs["shard"] for p in parts] == ["1/3", "2/3", "3/3"]
    assert sum(p.attrs["subjects"] for p in parts) == whole.attrs["subjects"]
    merged = merge(parts)
    pd.testing.assert_frame_equal(merged, whole)
    for key in ("episodes", "unjudged", "deactivated", "sites"):
        assert sorted(map(str, merged.attrs[key])) == sorted(map(str, whole.attrs[key])), key
    assert sum(p.attrs["reports"][0]["requests"] for p in parts) == len(inventory)
    with pytest.raises(er.InputError, match="merge needs shards 1 to 3 once each, got 1, 3"):
        merge([parts[0], parts[2]])
