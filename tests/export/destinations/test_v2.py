"""v2 reports in every destination: each row lands in the day of the bucket its piece covers
(a stamp at midnight ends the day before), and a read of a range keeps the rows of the buckets
it holds, as a v2 fetch of that range gives them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from edgereports.export import load_job, read_export, run_export
from tests.export.conftest import NOW, client_for
from tests.export.destinations.conftest import Where

DAY_7, DAY_8 = datetime(2024, 3, 7, tzinfo=UTC), datetime(2024, 3, 8, tzinfo=UTC)


def _sorted(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    out = frame.sort_values(["metric", "time_stamp"]).reset_index(drop=True)[columns]
    out.attrs = {}
    return out


def test_a_v2_export_equals_the_range_fetched_whole_and_reads_its_ranges_as_v2_fetches(
    tmp_path: Path, sb: Any, where: Where
) -> None:
    job_file = tmp_path / "job.toml"
    job_file.write_text(f"""
output = "{where.output}"
format = "{where.fmt}"
[[reports]]
name = "ue"
api_version = "v2"
request = {{ granularity = "HOUR", metrics = [
    {{ name = "ue_session_uplink_bytes", aggregation_type = "COUNT" }}] }}
account_id = "{sb.account_id}"
start = 2024-03-07
window_days = 1

[[reports]]
name = "edge"
preset = "edge_point_ran_bytes"
params = {{ customer_name = "{sb.network.accounts[0].name}", granularity = "DAY" }}
start = 2024-03-07
""")
    job = load_job(job_file)
    assert job.report("ue").report.api_version == "v2"
    client = client_for(sb)  # a v1 client: the run asks its v2 twin for the v2 reports
    result = run_export(job, client=client, now=NOW)
    assert result.ok, str(result)
    v2 = client.for_version("v2")
    plans = {r.name: r.plan for r in result.reports}
    for name in ("ue", "edge"):
        report = job.report(name)
        end = plans[name].windows[-1].end
        whole = v2.fetch(report.for_window(DAY_7, end))
        got = read_export(job_file, name)
        assert got.attrs["api_version"] == "v2"
        columns = list(whole.columns)
        pd.testing.assert_frame_equal(_sorted(got, columns), _sorted(whole, columns))
        assert got["time_stamp"].max() == pd.Timestamp(end)  # the stamp at the end is kept
        midnight = got[got["time_stamp"] == pd.Timestamp(DAY_8)]
        assert len(midnight) > 0  # a midnight stamp ends the 7th: read back with it

        # one day: the pieces of its buckets, stamped (7th, 8th], as a v2 fetch of it gives
        day = read_export(job_file, name, start=DAY_7, end=DAY_8)
        fetched = v2.fetch(report.for_window(DAY_7, DAY_8))
        assert len(day) > 0 and day["time_stamp"].max() == pd.Timestamp(DAY_8)
        pd.testing.assert_frame_equal(_sorted(day, columns), _sorted(fetched, columns))

    # a range from inside an hour to inside another keeps both hours: their pieces are
    # stamped at their ends
    hours = read_export(job_file, "ue", start="2024-03-07T05:30:00Z", end="2024-03-07T07:30Z")
    assert sorted(hours["time_stamp"].dt.hour.unique()) == [6, 7, 8]
