"""``edgereports report`` prints a head and tail with the row count unless ``--all``, and takes
relative dates (issue 19)."""

from __future__ import annotations

from datetime import datetime

import pytest

from edgereports.query import times
from edgereports.sandbox import SandboxHandle
from tests.cli.test_report import env, run_cli  # noqa: F401  (fixture)
from tests.conftest import SANDBOX_NOW


def _args(sb: SandboxHandle, *extra: str) -> list[str]:
    return ["report", "--preset", "ue_connections_avg_peak", "--account-id", sb.account_id,
            "--start", "2d", "--end", "today", *extra]  # fmt: skip


def test_head_tail_and_count_unless_all(
    env: SandboxHandle,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(times, "_utcnow", lambda: datetime.fromisoformat(SANDBOX_NOW))
    assert run_cli(_args(env)) == 0
    short = capsys.readouterr().out.splitlines()
    assert short[-1].startswith("[") and "rows x 6 columns]" in short[-1], short[-1]
    rows = int(short[-1][1:].split()[0])
    assert rows >= 2 * 48  # two metrics, 48 hours (and a bucket at the end until issue 13)
    assert any(line.strip().startswith("...") for line in short)
    assert len(short) < 16
    assert "2022-07-06 00:00:00+00:00" in short[1]
    assert run_cli(_args(env, "--all")) == 0
    full = capsys.readouterr().out.splitlines()
    assert len(full) == rows + 1 and not any(line.strip() == "..." for line in full)
