"""``er.availability`` against a sandbox with outages, a deactivation and maintenance windows.

Every expected count comes from the incidents, the windows and the sandbox's inventory (whole
UTC hours of a UTC range), or from the service's own hourly answers, never from the ledger.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd
import pytest

import edgereports as er
from edgereports.availability import SERIES, STATES, ledger_series, ledger_table
from edgereports.sandbox import SandboxHandle, build_network, serve

CLOCK = "2024-03-15T12:00:00+05:30"
START, END = datetime(2024, 2, 15, tzinfo=UTC), datetime(2024, 3, 15, tzinfo=UTC)
HOURS = int((END - START).total_seconds() // 3600)
NET = build_network(0, 64)
ACCOUNT = NET.primary_account_id
DEVICES = [d for d in NET.devices if d.account_id == ACCOUNT]
CAMERA = "919733755162"  # a camera of HYD-1004, on 10.10.3.1
GONE = "917775035851"  # a handset of DEL-1003, deactivated on 10 March
LATE = "918630245251"  # a camera of HYD-1004 (10.10.3.3), activated on 13 March
MUM_DEVICE = "917225457202"
BY = {"customer_site_id": "customer_site_id", "enodeb": "enodeb_ip", "msisdn": "msisdn"}
OUTAGES = [  # kind, subject, start, hours
    ("site_dark", "DEL-1003", datetime(2024, 2, 25, 10, tzinfo=UTC), 6),
    ("enodeb_dark", "10.10.5.2", datetime(2024, 3, 10, 2, tzinfo=UTC), 12),
    ("device_offline", CAMERA, datetime(2024, 3, 1, 4, tzinfo=UTC), 30),
]
PLANNED = ("site_dark", "MUM-1002", datetime(2024, 3, 7, 0, tzinfo=UTC), 4)  # in its window
INCIDENTS = [
    *({"kind": k, "subject": s, "start": t.isoformat(), "hours": h} for k, s, t, h in OUTAGES),
    {"kind": PLANNED[0], "subject": PLANNED[1], "start": PLANNED[2].isoformat(), "hours": 4},
    {"kind": "sim_deactivated", "subject": GONE, "start": "2024-03-10T00:00:00+00:00"},
]
SIMS = {s.msisdn: s for s in NET.with_incidents(INCIDENTS).sims_of(ACCOUNT)}  # lives as served
WINDOWS = pd.DataFrame(
    [  # scope, subject, start, end, and the whole UTC hours each touches
        ("site", "CHE-1005", "2024-03-05T08:00:00+05:30", "2024-03-05T11:40:00+05:30", "power"),
        ("enodeb", "10.10.3.2", "2024-02-20T10:00:00+00:00", "2024-02-20T13:00:00+00:00", "cell"),
        ("msisdn", MUM_DEVICE, "2024-03-02T00:45:00+00:00", "2024-03-02T01:15:00+00:00", "swap"),
        ("site", "MUM-1002", "2024-03-06T23:30:00+00:00", "2024-03-07T04:00:00+00:00", "work"),
    ],
    columns=["scope", "subject", "start", "end", "note"],
)
TOUCHED = {"CHE-1005": 5, "10.10.3.2": 3, MUM_DEVICE: 2, "MUM-1002": 5}


def members(*, site: str | None = None, cell: str | None = None) -> list[str]:
    return [d.msisdn for d in DEVICES if d.customer_site_id == site or d.enodeb_ip == cell]


def _active_hours(msisdn: str) -> int:
    """The hours of the range in which the SIM is active, by the sandbox's network."""
    sim = SIMS[msisdn]
    days = (END.date() - START.date()).days
    return 24 * sum(sim.active_on(START.date() + timedelta(days=n)) for n in range(days))


@pytest.fixture(scope="module")
def sb() -> Iterator[SandboxHandle]:
    with serve(seed=0, clock=CLOCK, incidents=INCIDENTS) as handle:
        yield handle


@pytest.fixture(scope="module")
def inventory(sb: SandboxHandle) -> er.Inventory:
    return er.Inventory.from_frame(pd.DataFrame(sb.inventory()), WINDOWS)


def _ledger(sb: SandboxHandle, **options: Any) -> pd.DataFrame:
    options.setdefault("start", START)
    options.setdefault("end", END)
    options.setdefault("granularity", None)
    with er.ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
        return er.availability(client, **options)


@pytest.fixture(scope="module")
def frames(sb: SandboxHandle, inventory: er.Inventory) -> dict[str, pd.DataFrame]:
    """The whole range per site, eNodeB and subscriber."""
    return {by: _ledger(sb, inventory=inventory, by=by) for by in BY}


@pytest.fixture(scope="module")
def ledgers(frames: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The same, indexed by their subject."""
    return {by: frame.set_index(BY[by]) for by, frame in frames.items()}


def _row(ledgers: dict[str, pd.DataFrame], subject: str) -> pd.Series:
    for frame in ledgers.values():
        if subject in frame.index:
            return frame.loc[subject]
    raise KeyError(subject)


@pytest.mark.parametrize(
    ("kind", "subject", "start", "hours"), OUTAGES, ids=[o[1] for o in OUTAGES]
)
def test_an_outage_counts_its_hours_unavailable_and_nothing_else(
    ledgers: dict[str, pd.DataFrame], kind: str, subject: str, start: datetime, hours: int
) -> None:
    row = _row(ledgers, subject)
    assert row["unavailable_hours"] == hours
    assert row["hours"] == HOURS
    assert row["availability_pct"] == pytest.approx(
        100 * row["available_hours"] / (row["available_hours"] + hours)
    )
    taken = [o for o in ledgers["msisdn"].attrs["outages"] if o["subject"] == subject]
    assert [(o["kind"], o["start"]) for o in taken] == [(kind, start.isoformat())]


def test_an_outage_of_one_part_is_not_its_sites(ledgers: dict[str, pd.DataFrame]) -> None:
    sites = ledgers["customer_site_id"]
    # the camera's site and the dark eNodeB's site stayed lit by their other devices (or, at
    # night, their other eNodeB's devices slept: unknown, never unavailable)
    assert sites.loc["HYD-1004", "unavailable_hours"] == 0
    assert sites.loc["PUN-1006", "unavailable_hours"] == 0
    assert ledgers["enodeb"].loc["10.10.5.1", "unavailable_hours"] == 0


def test_idle_hours_are_unknown_and_online_hours_available(
    sb: SandboxHandle, ledgers: dict[str, pd.DataFrame]
) -> None:
    """A device's available hours are the hours the service shows it online; its other active
    hours outside an outage and maintenance are unknown, never unavailable."""
    report = er.presets.time_usage_subscriber(
        account_id=ACCOUNT, msisdn=list(SIMS), start=START, end=END
    ).granularity("HOUR")
    with er.ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
        seconds = client.fetch(report)
    online = seconds[seconds["value"] > 0].groupby("msisdn")["value"].size()
    devices = ledgers["msisdn"]
    outage = {CAMERA, *members(site="DEL-1003"), *members(cell="10.10.5.2")}
    for msisdn, row in devices.iterrows():
        expected = int(online.get(msisdn, 0))
        in_window = row["maintenance_hours"] > 0  # an online hour in a window is excluded
        assert row["available_hours"] == expected or in_window, msisdn
        if msisdn not in outage:
            assert row["unavailable_hours"] == 0, msisdn
        assert row["unknown_hours"] == (
            row["hours"] - row["available_hours"] - row["unavailable_hours"]
            - row["excluded_hours"]
        )  # fmt: skip
    assert (devices["unknown_hours"] > 0).sum() > len(devices) // 2  # handsets and sensors sleep


def test_maintenance_hours_are_excluded_exactly_and_listed(
    ledgers: dict[str, pd.DataFrame],
) -> None:
    for subject, hours in TOUCHED.items():
        row = _row(ledgers, subject)
        assert row["maintenance_hours"] == hours, subject
    # a window covers what is in its subject: a site's eNodeBs and devices, an eNodeB's devices
    for msisdn in members(site="CHE-1005"):
        if _active_hours(msisdn) == HOURS:
            assert ledgers["msisdn"].loc[msisdn, "maintenance_hours"] == 5
    assert ledgers["enodeb"].loc["10.10.4.1", "maintenance_hours"] == 5
    for msisdn in members(cell="10.10.3.2"):
        assert ledgers["msisdn"].loc[msisdn, "maintenance_hours"] == 3
    # ... but not what holds it: one eNodeB's window is not its site's
    assert ledgers["customer_site_id"].loc["HYD-1004", "maintenance_hours"] == 0
    # the planned outage at MUM-1002 is inside its window: excluded, not unavailable
    assert ledgers["customer_site_id"].loc["MUM-1002", "unavailable_hours"] == 0
    listed = ledgers["customer_site_id"].attrs["maintenance"]
    assert sorted(w["note"] for w in listed) == sorted(WINDOWS["note"])


def test_hours_outside_a_sims_life_are_inactive(
    sb: SandboxHandle, inventory: er.Inventory, ledgers: dict[str, pd.DataFrame]
) -> None:
    devices = ledgers["msisdn"]
    for msisdn in (GONE, LATE):
        assert devices.loc[msisdn, "inactive_hours"] == HOURS - _active_hours(msisdn) > 0
    assert devices.loc[GONE, "inactive_hours"] == 5 * 24  # from 10 March
    assert devices.loc[GONE, "excluded_hours"] == 5 * 24
    # a group is inactive while none of its devices is: here by the inventory's word, whatever
    # the service shows (the other device of 10.10.3.3 was online before)
    frame = inventory.to_frame()
    frame.loc[frame["enodeb_ip"] == "10.10.3.3", "activation"] = pd.Timestamp("2024-03-13", tz=UTC)
    later = er.Inventory.from_frame(frame.rename(columns={
        "activation": "activation_date", "deactivation": "deactivation_date"}),
        account_id=ACCOUNT)  # fmt: skip
    cells = _ledger(sb, inventory=later, by="enodeb").set_index("enodeb_ip")
    assert cells.loc["10.10.3.3", "inactive_hours"] == 27 * 24
    assert cells.loc["10.10.3.3", "available_hours"] > 0  # from 13 March


def test_a_partial_list_judges_a_site_from_its_own_report_and_says_so(sb: SandboxHandle) -> None:
    known = members(site="DEL-1003")[:3]
    sites = _ledger(sb, msisdn=known, account_id=ACCOUNT).set_index("customer_site_id")
    assert list(sites.index) == ["DEL-1003"]
    row = sites.loc["DEL-1003"]
    assert row["unavailable_hours"] == 6
    assert row["inactive_hours"] == 0  # the devices not listed may be active
    assert row["basis"] == "its own report (3 known devices: the inventory is partial)"
    assert sites.attrs["inventory"]["complete"] is False
    cells = _ledger(sb, msisdn=known, account_id=ACCOUNT, by="enodeb")
    assert cells["basis"].str.contains("partial").all()
    assert "its own report" in ledger_table(sites.reset_index())


def test_two_runs_give_the_same_ledger(sb: SandboxHandle, inventory: er.Inventory) -> None:
    one = _ledger(sb, inventory=inventory, by="enodeb", granularity="DAY")
    two = _ledger(sb, inventory=inventory, by="enodeb", granularity="DAY")
    pd.testing.assert_frame_equal(one, two)
    assert one.attrs == two.attrs


def test_days_months_and_hours_add_up_to_the_range(
    sb: SandboxHandle, inventory: er.Inventory, ledgers: dict[str, pd.DataFrame]
) -> None:
    days = _ledger(sb, inventory=inventory, granularity="DAY")
    months = _ledger(sb, inventory=inventory, granularity="MONTH")
    counted = [f"{s}_hours" for s in STATES]
    whole = ledgers["customer_site_id"][counted]
    for frame in (days, months):
        summed = frame.groupby("customer_site_id")[counted].sum()
        pd.testing.assert_frame_equal(summed, whole, check_names=False)
    assert (days["hours"] == 24).all() and days["time_stamp"].nunique() == 29
    stamps = sorted(months["time_stamp"].unique())
    assert [t.isoformat() for t in stamps] == [
        "2024-02-01T00:00:00+00:00", "2024-03-01T00:00:00+00:00",
    ]  # fmt: skip
    feb = months[months["time_stamp"] == stamps[0]]
    assert (feb["hours"] == 15 * 24).all()  # UTC 15 to 29 February
    hours = _ledger(sb, inventory=inventory, granularity="HOUR", by="customer_site_id")
    assert (hours["hours"] == 1).all() and len(hours) == HOURS * len(whole)


def test_the_frame_its_types_and_what_it_rests_on(frames: dict[str, pd.DataFrame]) -> None:
    sites = frames["customer_site_id"]
    assert list(sites.columns) == [
        "time_stamp", "account_id", "customer_site_id", "hours", "available_hours",
        "unavailable_hours", "excluded_hours", "maintenance_hours", "inactive_hours",
        "unknown_hours", "availability_pct", "basis",
    ]  # fmt: skip
    assert str(sites["time_stamp"].dtype) == "datetime64[us, UTC]"
    assert str(sites["available_hours"].dtype) == "Int64"
    attrs = sites.attrs
    assert "available / (available + unavailable)" in attrs["rule"]
    assert attrs["range"] == [START.isoformat(), END.isoformat()]
    assert attrs["reports"][0]["requests"] == len(SIMS)  # one request per subscriber
    assert list(frames["enodeb"].columns[2:4]) == ["enodeb_ip", "customer_site_id"]
    assert list(frames["msisdn"].columns[2:5]) == ["msisdn", "customer_site_id", "enodeb_ip"]
    for frame in frames.values():  # rows by subject
        assert frame.iloc[:, 2].tolist() == sorted(frame.iloc[:, 2])


def test_the_long_form_is_a_time_series_frame_of_the_same_numbers(
    frames: dict[str, pd.DataFrame],
) -> None:
    sites = frames["customer_site_id"]
    long = ledger_series(sites)
    assert long.attrs["shape"] == "timeseries"
    assert list(long.columns) == [
        "time_stamp", "account_id", "customer_site_id", "metric", "aggregation", "percentile",
        "value",
    ]  # fmt: skip
    assert len(long) == len(sites) * len(SERIES)
    back = long.pivot(index="customer_site_id", columns="metric", values="value")
    for column in SERIES:
        expected = sites.set_index("customer_site_id")[column].astype("float64")
        pd.testing.assert_series_equal(back[column], expected, check_names=False)
    pct = long["metric"] == "availability_pct"
    assert (long.loc[pct, "aggregation"] == "AVG").all()
    assert (long.loc[~pct, "aggregation"] == "COUNT").all()


def test_bad_input_is_refused_before_any_request(
    sb: SandboxHandle, inventory: er.Inventory
) -> None:
    before = sb.request_count()
    bad: list[tuple[dict[str, Any], str]] = [
        ({"by": "region"}, "by must be one of customer_site_id, enodeb, msisdn"),
        ({"granularity": "WEEK"}, "granularity must be one of HOUR, DAY, MONTH"),
        ({"msisdn": ["919733755162"]}, "not both or neither"),
        ({"end": START}, "must be after start"),
    ]
    for options, message in bad:
        with pytest.raises(er.InputError, match=message):
            _ledger(sb, **{"inventory": inventory, **options})
    assert sb.request_count() == before
