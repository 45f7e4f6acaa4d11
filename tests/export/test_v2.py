"""The export job takes api_version for v2 reports; in every destination a v2 row lands in the
day of the bucket its piece covers (a stamp at midnight ends the day before)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from edgereports.errors import ConfigError
from edgereports.export import load_job, read_export, run_export
from edgereports.reporting import ReportingClient
from edgereports.sandbox import serve

NOW = datetime(2024, 3, 10, 6, 30, tzinfo=UTC)


@pytest.mark.parametrize("fmt", ["parquet", "delta", "iceberg"])
def test_a_v2_export_equals_the_range_fetched_whole(tmp_path: Path, fmt: str) -> None:
    with serve(seed=0, devices=8, clock=NOW) as sb:
        job_file = tmp_path / "job.toml"
        job_file.write_text(f"""
output = "{tmp_path / "out"}"
format = "{fmt}"
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
        client = ReportingClient(sb.api_key, sb.reporting_url, progress=False)  # a v1 client
        result = run_export(job, client=client, now=NOW)
        assert result.ok, str(result)
        v2 = client.for_version("v2")
        plans = {r.name: r.plan for r in result.reports}
        for name in ("ue", "edge"):
            report = job.report(name)
            end = plans[name].windows[-1].end
            whole = v2.fetch(report.for_window(datetime(2024, 3, 7, tzinfo=UTC), end))
            got = read_export(job.output / name).sort_values(["metric", "time_stamp"])
            want = whole.sort_values(["metric", "time_stamp"])
            pd.testing.assert_frame_equal(
                got.reset_index(drop=True)[list(want.columns)], want.reset_index(drop=True),
                check_like=False, check_dtype=False,
            )  # fmt: skip
            assert got["time_stamp"].max() == pd.Timestamp(end)  # the stamp at the end is kept
            midnight = got[got["time_stamp"] == pd.Timestamp("2024-03-08", tz="UTC")]
            assert len(midnight) > 0  # a midnight stamp ends the 7th: read back with it
            assert got.attrs["api_version"] == "v2"
            # one day: the pieces of its buckets, stamped (7th, 8th], as a v2 fetch gives them
            day_7, day_8 = datetime(2024, 3, 7, tzinfo=UTC), datetime(2024, 3, 8, tzinfo=UTC)
            day = read_export(job.output / name, start=day_7, end=day_8)
            fetched = v2.fetch(report.for_window(day_7, day_8))
            assert len(day) > 0 and day["time_stamp"].max() == pd.Timestamp(day_8)
            assert sorted(day["time_stamp"]) == sorted(fetched["time_stamp"])
        # a range from inside an hour to inside another keeps both hours: their pieces are
        # stamped at their ends
        hours = read_export(
            job.output / "ue", start="2024-03-07T05:30:00Z", end="2024-03-07T07:30Z"
        )
        assert sorted(hours["time_stamp"].dt.hour.unique()) == [6, 7, 8]


@pytest.mark.parametrize(
    ("report", "message"),
    [
        (  # a preset of the other version
            'preset = "time_usage_enterprise"\napi_version = "v2"\nparams = { account_id = "A" }',
            "is a v1 report, not 'v2'",
        ),
        (  # a version the service does not have
            'api_version = "v3"\naccount_id = "A"\nrequest = { granularity = "DAY", metrics = ['
            '{ name = "uplink_bytes", aggregation_type = "COUNT" }] }',
            "key api_version must be one of 'v1', 'v2', got 'v3'",
        ),
    ],
)
def test_a_wrong_api_version_is_refused_with_the_reason(
    tmp_path: Path, report: str, message: str
) -> None:
    job_file = tmp_path / "job.toml"
    job_file.write_text(
        f'output = "{tmp_path / "out"}"\n[[reports]]\nname = "x"\n{report}\nstart = 2024-03-07\n'
    )
    with pytest.raises(ConfigError, match=message):
        load_job(job_file)
