"""The export job takes api_version for v2 reports, and refuses a wrong one with the reason
(v2 in every destination: tests/export/destinations/test_v2.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from edgereports.errors import ConfigError
from edgereports.export import load_job

NOW = datetime(2024, 3, 10, 6, 30, tzinfo=UTC)


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
