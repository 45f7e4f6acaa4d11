"""The shared request budget (``rate_limit``) against the sandbox's rate-limit mode.

One pull of 60 one-day windows with eight workers, the sandbox at 20 requests per second and
the client's budget at 15 (three quarters, so a loaded machine's stalls cannot crowd 20 into a
second): every thread and part shares the budget, so the sandbox answers no 429 (about 4 s);
eight threads each with a budget of their own would be refused at once. The pause of the
whole pool on a 429 is tested in ``tests/http/test_pacing.py`` (a scripted server records when
each request arrives).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import edgereports as er
from edgereports import presets
from edgereports.reporting import ReportingClient, ReportingServiceClient
from edgereports.sandbox import Limits, SandboxHandle

SandboxFactory = Callable[..., SandboxHandle]
N = 20
PARTS = 60


@pytest.mark.slow
def test_a_pull_at_three_quarters_of_the_limit_gets_no_429(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox(limits=Limits(requests_per_second=N))
    end = datetime(2022, 7, 8, tzinfo=UTC)
    report = presets.time_usage_enterprise(
        account_id=sb.account_id, start=end - timedelta(days=PARTS), end=end
    )
    with ReportingClient(
        sb.api_key, sb.reporting_url, max_workers=8, progress=False, rate_limit=0.75 * N
    ) as client:
        frame = client.fetch(report, window=timedelta(days=1))
    assert sb.rate_limited() == 0
    assert sb.request_count() == PARTS  # one request per window, no retry
    assert len(frame) == PARTS and frame["time_stamp"].is_unique


def test_the_budget_comes_from_settings_and_the_environment() -> None:
    settings = er.Settings.from_env(
        {
            "EDGEREPORTS_API_KEY": "k3y-secret",
            "EDGEREPORTS_REPORTING_URL": "https://r.example",
            "EDGEREPORTS_RATE_LIMIT": "600/min",
        }
    )
    assert settings.rate_limit == 10.0
    client = ReportingClient.from_settings(settings)
    assert client.rate_limit == 10.0
    assert client.for_version("v2").rate_limit == 10.0  # one budget for both versions
    assert ReportingClient.from_settings(settings, rate_limit=None).rate_limit is None
    assert ReportingClient("k3y-secret", "https://r.example").rate_limit is None
    assert ReportingClient("k3y-secret", "https://r.example", rate_limit="2.5/s").rate_limit == 2.5


@pytest.mark.parametrize("bad", [0, -2, "0/s", "ten", "10/hour", True, float("nan")])
def test_a_rate_that_is_not_positive_fails_when_the_client_is_built(bad: object) -> None:
    allowed = r"rate_limit must be a positive number of requests per second .*\"600/min\""
    with pytest.raises(er.ConfigError, match=allowed):
        ReportingClient("k3y-secret", "https://r.example", rate_limit=bad)  # type: ignore[arg-type]
    with pytest.raises(er.ConfigError, match=allowed):
        ReportingServiceClient(
            "eyJ-token",
            "https://r.example",
            "core-1",
            rate_limit=bad,  # type: ignore[arg-type]
        )


def test_a_bad_rate_in_the_environment_names_the_variable() -> None:
    with pytest.raises(er.ConfigError, match=r"rate_limit \(EDGEREPORTS_RATE_LIMIT\) must be"):
        er.Settings.from_env({"EDGEREPORTS_RATE_LIMIT": "-5"})


def test_the_export_takes_the_budget_from_the_environment(
    sandbox: SandboxHandle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from edgereports.export import load_job
    from edgereports.export.client import make_client

    path = tmp_path / "job.toml"
    path.write_text(
        f'output = "{tmp_path / "out"}"\n\n[connection]\n'
        f'reporting_url = "{sandbox.reporting_url}"\n\n'
        '[[reports]]\nname = "sims"\npreset = "active_sim_count"\n'
        f'params = {{ account_id = "{sandbox.account_id}" }}\nstart = 2022-07-01\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("EDGEREPORTS_API_KEY", sandbox.api_key)
    monkeypatch.setenv("EDGEREPORTS_RATE_LIMIT", "120/min")
    monkeypatch.setenv("EDGEREPORTS_BUDGET_DIR", str(tmp_path / "budgets"))
    with make_client(load_job(path)) as client:
        assert client.rate_limit == 2.0


@pytest.mark.slow
def test_without_a_budget_a_limited_service_slows_the_pull_instead_of_failing_it(
    make_sandbox: SandboxFactory,
) -> None:
    """No ``rate_limit=``, eight threads, a service allowing 5 requests per second: the first
    429s set the client's pace (the requests it accepted in that second, Retry-After honoured),
    and every window arrives, with fewer than two requests per window (a client that did not
    slow down is refused until some windows run out of retries)."""
    sb = make_sandbox(limits=Limits(requests_per_second=5))
    end = datetime(2022, 7, 8, tzinfo=UTC)
    parts = 24
    report = presets.time_usage_enterprise(
        account_id=sb.account_id, start=end - timedelta(days=parts), end=end
    )
    with ReportingClient(
        sb.api_key, sb.reporting_url, max_workers=8, progress=False, backoff=0.05
    ) as client:
        assert client.rate_limit is None
        frame = client.fetch(report, window=timedelta(days=1))
    assert len(frame) == parts and frame["time_stamp"].is_unique
    assert sb.rate_limited() >= 1  # it did meet the limit
    assert sb.request_count() < 2 * parts
