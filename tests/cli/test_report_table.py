"""``edgereports report`` prints a head and tail with the row count unless ``--all``, and takes
relative dates, counted back from the service's present (not this machine's clock)."""

from __future__ import annotations

import pytest

from edgereports.sandbox import SandboxHandle
from tests.cli.test_report import env, run_cli  # noqa: F401  (fixture)


def _args(sb: SandboxHandle, *extra: str) -> list[str]:
    return ["report", "--preset", "ue_connections_avg_peak", "--account-id", sb.account_id,
            "--start", "2d", "--end", "today", *extra]  # fmt: skip


def test_head_tail_and_count_unless_all(
    env: SandboxHandle,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_cli(_args(env)) == 0
    short = capsys.readouterr().out.splitlines()
    assert short[-1].startswith("[") and "rows x 6 columns]" in short[-1], short[-1]
    rows = int(short[-1][1:].split()[0])
    assert rows == 2 * 48  # two metrics, 48 hours: the two days before the sandbox's today
    assert any(line.strip().startswith("...") for line in short)
    assert len(short) < 16
    assert "2022-07-06 00:00:00+00:00" in short[1]
    assert run_cli(_args(env, "--all")) == 0
    full = capsys.readouterr().out.splitlines()
    assert len(full) == rows + 1 and not any(line.strip() == "..." for line in full)


def test_last_days_with_a_preset_counts_back_from_the_service_present(
    env: SandboxHandle,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["report", "--preset", "time_usage_enterprise", "--account-id", env.account_id,
            "--last", "3d", "--json"]  # fmt: skip
    assert run_cli(args) == 0
    out = capsys.readouterr().out
    assert out.count("time_stamp") == 3  # 5, 6 and 7 July: the sandbox's clock is 8 July
    assert "2022-07-05T00:00:00" in out and "2022-07-08T" not in out
