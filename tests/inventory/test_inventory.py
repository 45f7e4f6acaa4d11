"""``er.Inventory``: read from frames, files, job tables and the sandbox; lives, windows, shards."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

import edgereports as er
from edgereports.export.job import parse_job
from edgereports.sandbox import SandboxHandle, build_network
from edgereports.sandbox.inventory import write_inventory

DEVICES = pd.DataFrame(
    {
        "msisdn": ["919800000001", "919800000002", "919800000003", 919800000004],
        "imsi": ["4044500001", "4044500002", "4044500003", "4044500004"],
        "customer_site_id": ["S-1", "S-1", "S-1", "S-2"],
        "enodeb_ip": ["10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.1.1"],
        "activation_date": ["2021-01-05", "2024-03-10", "2021-06-01T06:30:00+05:30", "2022-01-01"],
        "deactivation_date": [None, "", "2024-03-12", None],
    }
)
WINDOWS = pd.DataFrame(
    {
        "scope": ["site", "enodeb", "msisdn"],
        "subject": ["S-2", "10.0.0.2", "919800000001"],
        "start": ["2024-03-11T02:00:00+00:00", "2024-03-11T10:30:00+05:30", "2024-03-13"],
        "end": ["2024-03-11T04:00:00+00:00", "2024-03-11T06:00:00+00:00", "2024-03-14"],
        "note": ["router swap", "", "device recall"],
    }
)
HOURS = pd.date_range("2024-03-09", "2024-03-15", freq="h", tz="UTC", inclusive="left")


@pytest.fixture(scope="module")
def inventory() -> er.Inventory:
    return er.Inventory.from_frame(DEVICES, WINDOWS, account_id="A1")


def test_it_says_which_devices_exist_and_where(inventory: er.Inventory) -> None:
    assert len(inventory) == 4 and inventory.complete and inventory.account_id == "A1"
    assert inventory.msisdns[3] == "919800000004"  # a number read as text
    assert inventory.sites == ("S-1", "S-2")
    assert inventory.members(site="S-1") == ("919800000001", "919800000002", "919800000003")
    assert inventory.members(enodeb="10.0.0.1") == ("919800000001", "919800000002")
    assert inventory.site_of("919800000003") == "S-1"
    assert inventory.enodeb_of("919800000003") == "10.0.0.2"


def test_it_says_which_are_active_at_an_hour(inventory: er.Inventory) -> None:
    active = inventory.active_mask(HOURS)
    assert active.shape == (4, len(HOURS))
    born = HOURS.get_loc(pd.Timestamp("2024-03-10", tz="UTC"))
    gone = HOURS.get_loc(pd.Timestamp("2024-03-12", tz="UTC"))
    assert not active[1, :born].any() and active[1, born:].all()  # activated on 10 March
    assert active[2, :gone].all() and not active[2, gone:].any()  # deactivated on 12 March
    assert inventory.active_at("2024-03-11T12:00:00+00:00") == inventory.msisdns
    assert inventory.active_at("2024-03-09T12:00:00+00:00") == (
        "919800000001", "919800000003", "919800000004",
    )  # fmt: skip


def test_it_says_which_windows_apply(inventory: er.Inventory) -> None:
    at = datetime(2024, 3, 11, 3, tzinfo=UTC)
    assert [w.note for w in inventory.windows_at(at, site="S-2")] == ["router swap"]
    assert [w.subject for w in inventory.windows_at(at, msisdn="919800000004")] == ["S-2"]
    assert inventory.windows_at(at, msisdn="919800000001") == []
    # 10:30+05:30 is 05:00 UTC: the window on the eNodeB covers 05:00 to 06:00 UTC
    assert [w.scope for w in inventory.windows_at("2024-03-11T05:15:00+00:00",
                                                  msisdn="919800000003")] == ["enodeb"]  # fmt: skip
    mask = inventory.maintenance_mask(HOURS)
    hours = {m: [str(h)[5:13] for h in HOURS[mask[i]]] for i, m in enumerate(inventory.msisdns)}
    assert hours["919800000004"] == ["03-11 02", "03-11 03"]
    assert hours["919800000003"] == ["03-11 05"]
    assert hours["919800000001"] == [f"03-13 {h:02d}" for h in range(24)]
    assert hours["919800000002"] == []
    site = inventory.scope_maintenance("site", "S-2", HOURS)
    assert site.sum() == 2 and not inventory.scope_maintenance("site", "S-1", HOURS).any()


def test_csv_and_parquet_files_read_alike(tmp_path: Path, inventory: er.Inventory) -> None:
    DEVICES.astype(str).replace({"None": "", "919800000004": "919800000004"}).to_csv(
        tmp_path / "inv.csv", index=False
    )
    DEVICES.astype(str).replace({"None": None}).to_parquet(tmp_path / "inv.parquet")
    WINDOWS.to_csv(tmp_path / "windows.csv", index=False)
    read = [
        er.Inventory.from_file(tmp_path / "inv.csv", tmp_path / "windows.csv", account_id="A1"),
        er.Inventory.from_file(tmp_path / "inv.parquet", WINDOWS, account_id="A1"),
    ]
    for other in read:
        pd.testing.assert_frame_equal(other.to_frame(), inventory.to_frame())
        assert other.windows() == inventory.windows()


def test_a_job_file_names_its_inventory(tmp_path: Path) -> None:
    DEVICES.to_csv(tmp_path / "inv.csv", index=False)
    table = {
        "devices": "inv.csv",
        "complete": False,
        "maintenance": [
            {"scope": "site", "subject": "S-1", "start": "2024-03-11", "end": "2024-03-12"}
        ],
    }
    job = parse_job({"output": "out", "inventory": table,
                     "reports": [{"name": "u", "preset": "time_usage_enterprise",
                                  "account_id": "A1", "start": "2024-01-01"}]},
                    source=tmp_path / "job.toml")  # fmt: skip
    assert job.inventory == table
    inv = er.Inventory.from_table(job.inventory, base=tmp_path)
    assert len(inv) == 4 and not inv.complete and inv.windows()[0].subject == "S-1"
    with pytest.raises(er.ConfigError, match="unknown key 'device' in \\[inventory\\]"):
        parse_job({"output": "o", "inventory": {"device": "x.csv"}, "reports": []})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: f.drop(columns=["enodeb_ip"]), "lacks the column\\(s\\) enodeb_ip"),
        (lambda f: f.assign(colour="red"), "unknown column 'colour'"),
        (lambda f: f.assign(customer_site_id=[None, "S-1", "S-1", "S-2"]),
         "row 1 has no customer_site_id"),
        (lambda f: f.assign(activation_date=["2021-01-05", "10/03/2024", "x", "y"]),
         "activation_date of row 2: '10/03/2024' is not a date"),
        (lambda f: f.assign(activation_date=["2021-01-05", "2024-03-10T08:00:00", "x", "y"]),
         "activation_date of row 2: '2024-03-10T08:00:00' needs a UTC offset"),
        (lambda f: f.assign(deactivation_date=["2020-01-01", None, None, None]),
         "row 1 is deactivated \\(2020-01-01\\) before it is activated"),
        (lambda f: f.assign(msisdn=["1", "1", "2", "3"]), "MSISDN 1 is listed twice"),
        (lambda f: f.assign(account_id=["A1", "A2", "A1", "A1"]), "lists 2 accounts"),
    ],
)  # fmt: skip
def test_bad_inventories_are_refused_naming_row_and_column(change: object, message: str) -> None:
    with pytest.raises(er.InputError, match=message):
        er.Inventory.from_frame(change(DEVICES.copy()))  # type: ignore[operator]


def test_bad_windows_and_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(er.InputError, match="scope 'cell' of row 1 must be one of site, enodeb"):
        er.Inventory.from_frame(DEVICES, WINDOWS.assign(scope=["cell", "site", "site"]))
    with pytest.raises(er.InputError, match=r"the maintenance: row 1 ends .* before it starts"):
        er.Inventory.from_frame(DEVICES, WINDOWS.assign(end=WINDOWS.start.tolist()))
    with pytest.raises(er.InputError, match=r"inventory file .*nothing\.csv does not exist"):
        er.Inventory.from_file(tmp_path / "nothing.csv")
    (tmp_path / "inv.json").write_text("[]")
    with pytest.raises(er.InputError, match=r"must be CSV \(.csv\) or Parquet"):
        er.Inventory.from_file(tmp_path / "inv.json")
    with pytest.raises(er.InputError, match="msisdn must name the subscribers"):
        er.Inventory.from_msisdns([])


def test_shards_split_by_site_and_cover_the_inventory() -> None:
    rows = build_network(3, 300).inventory_rows()
    inv = er.Inventory.from_frame(pd.DataFrame(rows))
    shards = [inv.shard(i, 4) for i in range(1, 5)]
    assert sorted(m for s in shards for m in s.msisdns) == sorted(inv.msisdns)
    assert all(not set(a.sites) & set(b.sites) for a in shards for b in shards if a is not b)
    assert [len(s) for s in shards] == [len(inv.shard(i, 4)) for i in range(1, 5)]  # stable
    with pytest.raises(er.InputError, match="shards split the account by customer site"):
        er.Inventory.from_msisdns(["919800000001"]).shard(1, 2)


def test_the_sandbox_gives_and_writes_its_own(sandbox: SandboxHandle, tmp_path: Path) -> None:
    inv = er.Inventory.from_sandbox(sandbox)
    sims = sandbox.network.sims_of(sandbox.account_id)
    assert inv.msisdns == tuple(s.msisdn for s in sims)
    assert inv.account_id == sandbox.account_id and inv.complete and inv.lifecycle_known
    gone = next(s for s in sims if s.deactivation_date is not None)
    row = inv.to_frame().set_index("msisdn").loc[gone.msisdn]
    assert row.deactivation.date() == gone.deactivation_date
    written = write_inventory(sandbox.inventory(), tmp_path / "inventory.csv")
    again = er.Inventory.from_file(written)
    pd.testing.assert_frame_equal(again.to_frame(), inv.to_frame())
