"""The ``[storage]`` table of a Delta job: settings, timeouts, credentials named, never written."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from edgereports.errors import ConfigError
from edgereports.export import load_job, run_export
from edgereports.export.job import parse_job
from edgereports.export.storage import Storage
from edgereports.sandbox import serve
from tests.conftest import Step, scripted
from tests.export.conftest import NOW, client_for, job_text

REPORTS = [{"name": "usage", "preset": "active_sim_count"}]
BASE = {
    "output": "s3://bkt/edge",
    "format": "delta",
    "defaults": {"account_id": "62c40843c7a1909709112345", "start": "2024-03-01"},
    "reports": REPORTS,
}
SECRET = "wJalrXUtnFEMI-not-a-real-secret"


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    with serve(seed=0, devices=4, clock=NOW) as handle:
        yield handle


def test_storage_settings_resolve_with_the_named_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TEAM_S3_SECRET", SECRET)
    storage = {
        "timeout": 2.5,
        "options": {"aws_region": "eu-west-1", "aws_allow_http": True},
        "options_from_env": {"aws_secret_access_key": "TEAM_S3_SECRET"},
    }
    job = parse_job({**BASE, "storage": storage})
    assert job.storage == Storage(
        options=(("aws_allow_http", "true"), ("aws_region", "eu-west-1")),
        from_env=(("aws_secret_access_key", "TEAM_S3_SECRET"),),
        timeout=2.5,
    )
    assert job.storage_options() == {
        "timeout": "2500ms",
        "connect_timeout": "5000ms",
        "retry_timeout": "120000ms",
        "aws_allow_http": "true",
        "aws_region": "eu-west-1",
        "aws_secret_access_key": SECRET,
    }
    assert SECRET not in repr(job) and SECRET not in str(job.storage)
    assert parse_job(BASE).storage_options()["timeout"] == "60000ms"  # ours by default


@pytest.mark.parametrize(
    ("storage", "message"),
    [
        (
            {"options": {"aws_secret_access_key": SECRET}},
            "aws_secret_access_key is a credential; keep credentials out of job files",
        ),
        ({"options": {"AWS_ACCESS_KEY_ID": SECRET}}, "AWS_ACCESS_KEY_ID is a credential"),
        ({"options": {"aws_session_token": SECRET}}, "aws_session_token is a credential"),
        (
            {"options_from_env": {"aws_access_key_id": "not a name"}},
            "aws_access_key_id must name an environment variable",
        ),
        ({"timeout": 0}, r"\[storage\] timeout must be a positive number of seconds, got 0"),
        ({"connect_timeout": "5s"}, "connect_timeout must be a positive number of seconds"),
        ({"options": {"timeout": "5s"}}, r"set timeout as \[storage\] timeout"),
        ({"options": {"aws_region": ["a"]}}, "aws_region must be a string, number or true"),
        ({"options": "aws_region=x"}, "options must be a table"),
        ({"region": "x"}, "unknown key 'region'"),
        (
            {"options": {"aws_region": "x"}, "options_from_env": {"aws_region": "REGION"}},
            "aws_region is in options and in options_from_env",
        ),
    ],
)
def test_bad_storage_tables_name_the_key_and_never_the_value(
    storage: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        parse_job({**BASE, "storage": storage})
    assert SECRET not in str(caught.value)


def test_storage_belongs_to_delta_jobs() -> None:
    parquet = {**BASE, "output": "out", "format": "parquet", "storage": {"timeout": 5}}
    with pytest.raises(ConfigError, match='apply to format = "delta" or "iceberg"'):
        parse_job(parquet)


def test_a_missing_variable_stops_the_run_before_any_request(
    tmp_path: Path, sb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TEAM_S3_SECRET", raising=False)
    path = tmp_path / "job.toml"
    text = job_text(tmp_path / "out", sb.account_id, ["1"], format='"delta"')
    head, reports = text.split("[defaults]")
    storage = '[storage]\noptions_from_env = { aws_secret_access_key = "TEAM_S3_SECRET" }\n'
    path.write_text(f"{head}{storage}\n[defaults]{reports}", encoding="utf-8")
    job = load_job(path)
    before = sb.request_count()
    with pytest.raises(ConfigError, match="names the environment variable TEAM_S3_SECRET, which"):
        run_export(job, only="sims", client=client_for(sb))
    assert sb.request_count() == before
    assert not (tmp_path / "out").exists()


def test_a_store_that_does_not_answer_fails_within_our_timeouts(
    tmp_path: Path, sb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEAM_S3_SECRET", SECRET)
    monkeypatch.setenv("TEAM_S3_KEY_ID", "AKIDEXAMPLE")
    with scripted([Step(sleep=20)]) as store:  # accepts, reads, never answers in time
        data = {
            **BASE,
            "storage": {
                "timeout": 0.5,
                "connect_timeout": 0.5,
                "retry_timeout": 1,
                "options": {
                    "aws_endpoint_url": store.url,
                    "aws_region": "us-east-1",
                    "aws_allow_http": True,
                },
                "options_from_env": {
                    "aws_access_key_id": "TEAM_S3_KEY_ID",
                    "aws_secret_access_key": "TEAM_S3_SECRET",
                },
            },
        }
        job = parse_job(data)
        with pytest.raises(OSError) as caught:  # object_store's own 30 s would see the answer
            run_export(job, client=client_for(sb), now=NOW)
    message = re.sub(r"\x1b\[[0-9;]*m", "", str(caught.value))  # object_store's colours
    assert store.url in message and "timed out" in message and SECRET not in message
    assert re.search(r"retry_timeout\W+1s\b", message), message  # ours, not 3 minutes
