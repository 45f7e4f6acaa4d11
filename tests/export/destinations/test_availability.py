"""An availability table: the ledger written by the export in every destination, read back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import edgereports as er
from edgereports.availability import SERIES, ledger_series
from edgereports.export import load_job, read_export, run_export
from edgereports.sandbox.inventory import write_inventory
from tests.export.conftest import NOW, canonical, client_for
from tests.export.destinations.conftest import Where, duckdb_frame, polars_frame, records

START = "2024-02-26"
MIDNIGHT = NOW.replace(hour=0, minute=0)


def _job(tmp_path: Path, sb: Any, where: Where) -> Path:
    write_inventory(sb.inventory(), tmp_path / "inventory.csv")
    path = tmp_path / "job.toml"
    path.write_text(
        f"""
output = "{where.output}"
format = "{where.fmt}"

[defaults]
account_id = "{sb.account_id}"
start = {START}

[inventory]
devices = "inventory.csv"

[[inventory.maintenance]]
scope = "enodeb"
subject = "{sb.inventory()[0]["enodeb_ip"]}"
start = "2024-03-02T10:30:00+00:00"
end = "2024-03-02T13:00:00+00:00"

[[reports]]
name = "sites"
availability = "site"

[[reports]]
name = "devices"
availability = "msisdn"
window_days = 7
""",
        encoding="utf-8",
    )
    return path


# duckdb's .df() calls DataFrame.drop(inplace=True), deprecated in pandas 3.1
@pytest.mark.filterwarnings("ignore:The inplace keyword")
def test_the_ledger_is_written_as_a_table_and_read_back_by_three_readers(
    tmp_path: Path, sb: Any, where: Where
) -> None:
    path = _job(tmp_path, sb, where)
    job = load_job(path)
    plan = run_export(job, client=client_for(sb), now=NOW, dry_run=True)
    devices = len(sb.inventory())
    requests = {r.name: r.plan.requests for r in plan.reports}
    assert requests == {"sites": devices + 1, "devices": 2 * (devices + 1)}  # 13 days: 1 and 2
    summary = run_export(job, client=client_for(sb), now=NOW)
    assert summary.ok, str(summary)
    assert {r.name: r.watermark_after for r in summary.reports} == {
        "sites": MIDNIGHT, "devices": MIDNIGHT,
    }  # fmt: skip
    inventory = er.Inventory.from_table(job.inventory or {}, base=tmp_path)
    with client_for(sb) as client:
        ledger = er.availability(client, inventory=inventory, start=START, end=MIDNIGHT,
                                 by="site", granularity="DAY")  # fmt: skip
    expected = canonical(ledger_series(ledger), "time_stamp")
    got = canonical(read_export(path, "sites"), "time_stamp")
    pd.testing.assert_frame_equal(got, expected, check_like=False)
    assert set(got["metric"]) == set(SERIES)
    assert (got.loc[got["metric"] == "maintenance_hours", "value"].sum()) == 3  # 10, 11, 12 h
    columns = list(got.columns)
    for reader in (duckdb_frame, polars_frame):
        assert records(reader(job, "sites"), "time_stamp", columns) == records(
            got, "time_stamp", columns
        ), reader.__name__
    days = read_export(path, "devices")
    assert days["msisdn"].nunique() == devices and days["time_stamp"].nunique() == 13
    again = run_export(job, client=client_for(sb), now=NOW)  # the lookback, computed again
    assert again.ok and [r.plan.reason for r in again.reports] == ["incremental"] * 2
    pd.testing.assert_frame_equal(canonical(read_export(path, "sites"), "time_stamp"), expected)


def test_an_availability_table_needs_the_jobs_inventory(tmp_path: Path) -> None:
    path = tmp_path / "job.toml"
    path.write_text(
        'output = "out"\n[defaults]\naccount_id = "A"\nstart = 2024-01-01\n'
        '[[reports]]\nname = "sites"\navailability = "site"\n',
        encoding="utf-8",
    )
    with pytest.raises(er.ConfigError, match=r"is judged from the job's \[inventory\]"):
        load_job(path)
    path.write_text(path.read_text() + 'preset = "active_sim_count"\n', encoding="utf-8")
    with pytest.raises(er.ConfigError, match="unknown key 'preset'"):
        load_job(path)
    path.write_text(
        'output = "out"\n[defaults]\naccount_id = "A"\nstart = 2024-01-01\n'
        '[inventory]\ndevices = "inventory.csv"\n'
        '[[reports]]\nname = "sites"\navailability = "region"\n',
        encoding="utf-8",
    )
    with pytest.raises(er.ConfigError, match="availability must be site, enodeb or msisdn"):
        load_job(path)
