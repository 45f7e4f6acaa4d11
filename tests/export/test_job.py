"""The export job file: parsing, defaults, and a ConfigError naming file, report and key."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from edgereports.errors import ConfigError
from edgereports.export import load_job
from edgereports.export.job import DEFAULT_API_KEY_ENV, parse_job
from edgereports.export.reports import parse_lookback

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "export-job.toml"

GOOD = """
output = "out"

[defaults]
account_id = "A1"
start = 2024-01-01
lookback = "3d"

[[reports]]
name = "usage_daily"
preset = "time_usage_subscriber"
params = { msisdn = ["919876543210", "919876543211"] }

[[reports]]
name = "bytes_hourly"
preset = "byte_usage_subscriber"
params = { msisdn = "919876543210" }
start = 2024-03-05T12:30:00+05:30
lookback = "36h"
window_days = 2

[[reports]]
name = "sims"
preset = "active_sim_count"

[[reports]]
name = "raw"
granularity = "HOUR"
request = { metrics = [{ name = "ue_connections", aggregation_type = "MAX" }] }
"""


def write(tmp_path: Path, text: str, name: str = "job.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_complete_job_parses_with_its_defaults(tmp_path: Path) -> None:
    job = load_job(write(tmp_path, GOOD))
    assert job.name == "job"
    assert job.output == tmp_path.resolve() / "out"
    assert job.connection.api_key_env == DEFAULT_API_KEY_ENV
    assert job.connection.api_key is None
    usage, hourly, sims, raw = job.reports
    assert usage.granularity == "DAY" and usage.window_days == 366  # 2 days of rows: a year
    assert usage.start == datetime(2024, 1, 1, tzinfo=UTC)
    assert usage.lookback == timedelta(days=3)
    assert usage.report.filter_values("msisdn") == ("919876543210", "919876543211")
    assert usage.report.account_id == "A1"
    # 12:30+05:30 is 07:00Z; the start is rounded down to that UTC midnight
    assert hourly.start == datetime(2024, 3, 5, tzinfo=UTC)
    assert hourly.granularity == "HOUR" and hourly.window_days == 2
    assert hourly.lookback == timedelta(hours=36)
    assert sims.granularity is None and sims.shape == "sim_count" and sims.time_column == "date"
    assert raw.granularity == "HOUR" and raw.report.account_id == "A1"
    assert raw.definition() == {
        "granularity": "HOUR",
        "dimension_filter_clauses": [
            {
                "filters": [
                    {"dimension_name": "account_id", "operator": "EXACT", "expressions": ["A1"]}
                ]
            }
        ],
        "metrics": [{"name": "ue_connections", "aggregation_type": "MAX"}],
    }


def test_the_window_request_carries_the_window(tmp_path: Path) -> None:
    usage = load_job(write(tmp_path, GOOD)).reports[0]
    start, end = datetime(2024, 2, 1, tzinfo=UTC), datetime(2024, 2, 8, tzinfo=UTC)
    request = usage.for_window(start, end).to_request()
    assert request["start_date_time"] == "2024-02-01T00:00:00+00:00"
    assert request["end_date_time"] == "2024-02-08T00:00:00+00:00"
    assert {k: v for k, v in request.items() if "date_time" not in k} == usage.definition()


def test_the_shipped_example_is_valid() -> None:
    job = load_job(EXAMPLE)
    assert len(job.reports) >= 3
    assert job.connection.api_key is None
    assert tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))["output"]


def test_a_key_in_the_file_needs_insisting_and_is_never_shown(tmp_path: Path) -> None:
    secret = "s3cr3t-key-value"
    text = f'[connection]\napi_key = "{secret}"\n' + GOOD.replace('output = "out"', "")
    text = 'output = "out"\n' + text
    with pytest.raises(ConfigError) as info:
        load_job(write(tmp_path, text))
    assert "api_key_in_file = true" in str(info.value)
    assert secret not in str(info.value)
    insisted = text.replace("[connection]\n", "[connection]\napi_key_in_file = true\n")
    job = load_job(write(tmp_path, insisted))
    assert job.connection.api_key == secret
    assert secret not in repr(job) and secret not in repr(job.connection)


BAD = [
    ("output = 1\n[[reports]]\npreset='x'", "job.toml: output must name the output directory"),
    ('output = "o"', "job.toml: no reports; add at least one [[reports]]"),
    (
        'output = "o"\nouptut = 1\n[[reports]]',
        "job.toml: unknown key 'ouptut' (did you mean 'output'?)",
    ),
    (
        'output = "o"\n[[reports]]\nname = "a"\npreset = "time_usage_enterprise"\n'
        'params = { account_id = "A" }',
        "job.toml reports[0] ('a'): no start; set start = 2024-01-01",
    ),
    (
        'output = "o"\n[[reports]]\nname = "a"\npreset = "time_usage_enterprize"\n'
        "start = 2024-01-01",
        "job.toml reports[0] ('a'): key preset: unknown preset 'time_usage_enterprize'",
    ),
    (
        'output = "o"\n[[reports]]\nname = "a"\npreset = "time_usage_subscriber"\n'
        'start = 2024-01-01\nparams = { account_id = "A" }',
        "job.toml reports[0] ('a'): key params.msisdn: preset 'time_usage_subscriber' needs msisdn",
    ),
    (
        'output = "o"\n[[reports]]\nname = "a"\npreset = "time_usage_enterprise"\n'
        'start = 2024-01-01\nparams = { account_id = "A", end = 2024-02-01 }',
        "job.toml reports[0] ('a'): key params.end: remove it",
    ),
    (
        'output = "o"\n[[reports]]\nname = "a"\npreset = "realtime_bandwidth"\n'
        'start = 2024-01-01\nparams = { account_id = "A" }',
        "key preset: 'realtime_bandwidth' reports the current value (NOW) without a "
        "granularity; the export needs a report over dates with a granularity, or SIM counts: "
        'add granularity = "DAY" or "HOUR" to the report',
    ),
    (
        'output = "o"\n[[reports]]\nname = "a"\npreset = "bandwidth_percentile"\n'
        'start = 2024-01-01\nparams = { account_id = "A", customer_site_id = "S" }',
        "PERCENTILE metrics give one value over the whole range",
    ),
    (
        'output = "o"\n[[reports]]\nname = "a"\npreset = "time_usage_enterprise"\n'
        'start = 2024-01-01\ngranularity = "WEEK"\nparams = { account_id = "A" }',
        "job.toml reports[0] ('a'): granularity must be \"DAY\" or \"HOUR\", got 'WEEK'",
    ),
    (
        'output = "o"\n[[reports]]\nname = "a"\npreset = "active_sim_count"\n'
        'start = 2024-01-01\ngranularity = "DAY"\nparams = { account_id = "A" }',
        "a SIM count report has the one metric sim (COUNT) and no granularity",
    ),
    (
        'output = "o"\n[[reports]]\nname = "_a"\npreset = "time_usage_enterprise"\n'
        'start = 2024-01-01\nparams = { account_id = "A" }',
        "name must be a directory name",
    ),
    (
        'output = "o"\n[defaults]\nstart = 2024-01-01\naccount_id = "A"\n'
        '[[reports]]\nname = "a"\npreset = "time_usage_enterprise"\n'
        '[[reports]]\nname = "a"\npreset = "ue_connections_enterprise"',
        "job.toml: two reports are named 'a'",
    ),
    (
        'output = "o"\n[[reports]]\nname = "a"\nstart = 2024-01-01\n'
        'request = { start_date_time = "NOW", '
        'metrics = [{ name = "sim", aggregation_type = "COUNT" }] }',
        "key request.start_date_time: remove it",
    ),
    (
        'output = "o"\n[[reports]]\nname = "a"\nstart = 2024-01-01\nrequest = { metrics = [] }',
        "job.toml reports[0] ('a'): key request.metrics",
    ),
    (
        'output = "o"\n[[reports]]\nname = "a"\nstart = 2024-01-01\n'
        'request = { metrics = [{ name = "uplink_bytes", aggregation_type = "COUNT" }] }',
        'no granularity; add granularity = "DAY" or "HOUR"',
    ),
    (
        'output = "o"\n[[reports]]\nname = "a"\npreset = "time_usage_enterprise"\n'
        'start = 2024-01-01T00:00:00\nparams = { account_id = "A" }',
        "key start: start must be a date such as 2024-01-01, a timestamp with an offset",
    ),
    (
        'output = "o"\n[[reports]]\nname = "a"\npreset = "time_usage_enterprise"\n'
        'start = 2024-01-01\nlookback = "2 weeks"\nparams = { account_id = "A" }',
        'key lookback: lookback must be a number of days or a string like "2d"',
    ),
    (
        'output = "o"\n[[reports]]\nname = "a"\npreset = "time_usage_enterprise"\n'
        'start = 2024-01-01\nwindow_days = 0\nparams = { account_id = "A" }',
        "window_days must be a whole number of at least 1, got 0",
    ),
    (
        'output = "o"\n[connection]\napi_key_env = "1 BAD"\n[[reports]]\nname = "a"',
        "job.toml [connection]: api_key_env must name an environment variable",
    ),
    (
        'output = "o"\n[connection]\ntimeout = -1\n[[reports]]\nname = "a"',
        "job.toml [connection]: timeout must be a positive number of seconds",
    ),
    ('output = "o"\nmax_workers = 0\n[[reports]]', "job.toml: max_workers must be a whole number"),
    ("output = [", "job.toml: not a valid TOML file"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_invalid_job_files_say_where_and_why(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_job(write(tmp_path, text))
    assert message in str(info.value)
    assert str(tmp_path / "job.toml") in str(info.value)


def test_a_missing_job_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read job file .*nope\.toml"):
        load_job(tmp_path / "nope.toml")


def test_parse_job_without_a_file_uses_the_working_directory() -> None:
    job = parse_job(tomllib.loads(GOOD))
    assert job.output == Path("out") and job.source is None and job.name == "job"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, timedelta(0)),
        (2, timedelta(days=2)),
        ("2d", timedelta(days=2)),
        ("36h", timedelta(hours=36)),
        (" 1 day ", timedelta(days=1)),
        ("48 hours", timedelta(hours=48)),
    ],
)
def test_lookback_values(value: object, expected: timedelta) -> None:
    assert parse_lookback(value, "x") == expected


def test_job_report_lookup_suggests_a_name(tmp_path: Path) -> None:
    job = load_job(write(tmp_path, GOOD))
    assert job.report("sims").name == "sims"
    with pytest.raises(
        ConfigError, match="no report named 'usage_dialy' \\(did you mean 'usage_daily'\\?\\)"
    ):
        job.report("usage_dialy")


@pytest.mark.parametrize(
    ("subscribers", "granularity", "days"),
    [(2, "DAY", 366), (2, "HOUR", 366), (50, "HOUR", 366), (1000, "HOUR", 20), (10**5, "HOUR", 1)],
)
@pytest.mark.slow
def test_the_default_window_keeps_a_million_rows_at_most(
    tmp_path: Path, subscribers: int, granularity: str, days: int
) -> None:
    msisdns = ", ".join(f'"{919800000000 + n}"' for n in range(subscribers))
    text = (
        f'output = "out"\n[[reports]]\nname = "r"\npreset = "byte_usage_subscriber"\n'
        f'granularity = "{granularity}"\nstart = 2024-01-01\n'
        f'params = {{ account_id = "A", msisdn = [{msisdns}] }}\n'
    )
    (report,) = load_job(write(tmp_path, text)).reports
    assert report.window_days == days
    rows_a_day = subscribers * (24 if granularity == "HOUR" else 1) * len(report.report.metrics)
    assert days == 1 or days * rows_a_day <= 1_000_000
