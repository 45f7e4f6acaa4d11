"""The seeded synthetic network and its activity model."""

from __future__ import annotations

import json
import re
from datetime import date

import numpy as np
import pytest

from edgereports.sandbox import build_network
from edgereports.sandbox.model.accumulate import accumulate
from edgereports.sandbox.model.network import DOCUMENTED_ACCOUNT_ID
from edgereports.sandbox.model.quality import LATENCY_LEVELS

H0 = int(np.datetime64("2022-07-07T00", "h").astype(np.int64))


def test_inventory_shape_and_formats() -> None:
    net = build_network(0, 64)
    assert net.primary_account_id == DOCUMENTED_ACCOUNT_ID
    assert len(net.accounts) == 2 and len(net.sims_of(DOCUMENTED_ACCOUNT_ID)) == 64
    assert len(net.devices) == len(net.sims) == 64 + 8
    for sim in net.sims:
        assert re.fullmatch(r"91[6-9]\d{9}", sim.msisdn)
        assert re.fullmatch(r"40445\d{10}", sim.imsi)
        assert sim.kind in ("physical", "esim")
        assert sim.deactivation_date is None or sim.deactivation_date > sim.activation_date
    for attr in ("msisdn", "imsi", "ue_ip", "lr_id", "device_id"):
        values = [getattr(d, attr) for d in net.devices]
        assert len(set(values)) == len(values), attr
    assert all(re.fullmatch(r"[0-9a-f]{24}", a.account_id) for a in net.accounts)
    sites = {s.customer_site_id for s in net.sites}
    enodebs = {e.enodeb_ip: e.customer_site_id for e in net.enodebs}
    for d in net.devices:
        assert d.customer_site_id in sites and enodebs[d.enodeb_ip] == d.customer_site_id
    json.dumps(net.to_dict())


def test_the_same_seed_gives_the_same_network_and_another_seed_another() -> None:
    a, b, c = build_network(3, 20), build_network(3, 20), build_network(4, 20)
    assert a.to_dict() == b.to_dict()
    assert a.to_dict()["sims"] != c.to_dict()["sims"]
    assert a.primary_account_id != DOCUMENTED_ACCOUNT_ID


def test_active_sim_counts_follow_activation_dates() -> None:
    net = build_network(0, 64)
    sims = net.sims_of(net.primary_account_id)
    before = min(s.activation_date for s in sims)
    assert net.active_sim_counts(net.primary_account_id, date(2020, 12, 31)) == {
        "physical": 0,
        "esim": 0,
    }
    later = net.active_sim_counts(net.primary_account_id, date(2022, 7, 8))
    assert 0 < later["physical"] + later["esim"] <= 64
    assert before >= date(2021, 1, 1)


@pytest.mark.parametrize(("seed", "devices", "extra", "message"), [
    (0, 0, 1, "devices must be between 1 and 100000"),
    (0, 10, 9, "extra_accounts must be between 0 and 8"),
    (-1, 10, 1, "seed must be >= 0"),
])  # fmt: skip
def test_bad_arguments(seed: int, devices: int, extra: int, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        build_network(seed, devices, extra_accounts=extra)


def test_slot_profiles_sum_to_hour_totals_and_devices_sum_to_the_whole() -> None:
    net = build_network(1, 30)
    dev = np.arange(30, dtype=np.int64)
    whole = accumulate(net, dev, H0, 30, profile=True)
    assert whole.profile is not None
    for base in "TUDCLJP":
        assert np.array_equal(whole.profile[base].sum(axis=1), whole.totals[base])
        parts = sum(accumulate(net, dev[i : i + 1], H0, 30).totals[base] for i in range(30))
        assert np.array_equal(parts, whole.totals[base])
    assert (whole.profile["T"] <= 300 * 30).all()
    assert (whole.profile["C"] <= 30).all()


def test_a_window_counts_only_its_slots() -> None:
    net = build_network(1, 30)
    dev = np.arange(30, dtype=np.int64)
    full = accumulate(net, dev, H0, 2, profile=True)
    assert full.profile is not None
    for lo, hi in ((0, 1), (3, 17), (11, 24)):
        part = accumulate(net, dev, H0, 2, window=(H0 * 3600 + lo * 300, H0 * 3600 + hi * 300))
        for base in "TUDCLJP":
            assert part.totals[base].sum() == full.profile[base].ravel()[lo:hi].sum()


def test_no_activity_while_a_sim_is_inactive() -> None:
    net = build_network(0, 64)
    first = min(s.activation_date for s in net.sims)
    h = int(np.datetime64(first.isoformat(), "h").astype(np.int64)) - 24 * 30
    acc = accumulate(net, np.arange(len(net.devices), dtype=np.int64), h, 24 * 30)
    assert all(int(acc.totals[b].sum()) == 0 for b in "TUDCLJP")


def test_only_requested_bases_are_computed_and_they_match_the_full_computation() -> None:
    net = build_network(2, 40)
    dev = np.arange(40, dtype=np.int64)
    full = accumulate(net, dev, H0, 50, profile=True)
    assert full.profile is not None
    for bases in (("T",), ("C",), ("U", "L"), ("D", "J", "P")):
        part = accumulate(net, dev, H0, 50, profile=True, bases=bases, per_device=False)
        assert set(part.totals) == set(bases)
        assert part.profile is not None and set(part.profile) == set(bases)
        for base in bases:
            assert np.array_equal(part.totals[base], full.totals[base])
            assert np.array_equal(part.profile[base], full.profile[base])


def test_quality_samples_stay_in_their_documented_ranges() -> None:
    net = build_network(4, 200)
    arr = net.arrays
    profiles = [d.profile for d in net.devices]
    low = np.array([LATENCY_LEVELS[p][0] for p in profiles]) * 8
    high = np.array([LATENCY_LEVELS[p][1] for p in profiles]) * 8
    assert ((arr["qlevel"] >= low) & (arr["qlevel"] < high)).all()
    lossy = connected = 0
    for k in range(0, 200, 5):
        one = accumulate(net, np.array([k]), H0, 24 * 14, profile=True, bases=("C", "L", "J", "P"),
                         per_device=False)  # fmt: skip
        assert one.profile is not None
        conn = one.profile["C"]  # 0 or 1: one device
        assert set(np.unique(conn)) <= {0.0, 1.0}
        on = conn > 0
        lat, jit, loss = (one.profile[b][on] for b in "LJP")
        assert (lat >= np.floor(low[k] * 0.9)).all()  # the quietest load factor
        assert (jit >= np.floor(lat * 0.04) - 1).all() and (jit <= lat * 0.25).all()
        assert ((loss >= 0) & (loss <= 800)).all()
        # a sample is the device's value for its hour: equal in every connected slot
        hourly = np.where(on, one.profile["L"], np.nan)[on.any(axis=1)]
        assert (np.nanmax(hourly, axis=1) == np.nanmin(hourly, axis=1)).all()
        lossy += int(on.any(axis=1)[(one.profile["P"] > 0).any(axis=1)].sum())
        connected += int(on.any(axis=1).sum())
    assert 0.1 < lossy / connected < 0.3, lossy / connected
