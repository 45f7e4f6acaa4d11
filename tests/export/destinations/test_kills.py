"""A run killed (SIGKILL) at a random moment leaves whole days, and the next run completes the
table exactly, in every destination.

The moment is drawn from a seed printed with any failure: the write of a random window and a
random delay after it starts (into the write, or the fetches after it).
"""

from __future__ import annotations

import random
import signal
from pathlib import Path
from typing import Any

import pytest

from edgereports.export import run_export
from tests.export.conftest import NOW, client_for, run_cli
from tests.export.destinations.conftest import (
    Where,
    assert_equal_to_fetch,
    assert_whole_days,
    job_in,
)

pytestmark = pytest.mark.slow  # a process per destination

MIDNIGHT = NOW.replace(hour=0, minute=0)
ENDS = {"usage": MIDNIGHT, "sims": MIDNIGHT, "bytes": NOW.replace(minute=0)}


def test_a_run_killed_at_a_random_moment_leaves_whole_days_and_a_rerun_completes_it(
    tmp_path: Path, sb: Any, where: Where
) -> None:
    job = job_in(tmp_path, sb, where)
    assert job.source is not None
    windows = run_export(job, client=client_for(sb), now=NOW, dry_run=True).windows
    seed = random.randrange(2**32)
    killed = run_cli(job.source, sb=sb, hook=f"{seed}:{windows}")
    why = f"seed {seed}: {killed.stdout}{killed.stderr}"
    assert killed.returncode in (0, -signal.SIGKILL), why  # 0: killed after its last write
    assert "testing-secret" not in killed.stdout + killed.stderr
    for report in job.reports:  # readable, each day it holds whole
        try:
            assert_whole_days(job, sb, report.name, report.start, ENDS[report.name])
        except AssertionError as exc:
            raise AssertionError(f"{why}\n{exc}") from None
    again = run_export(job, client=client_for(sb), now=NOW)
    assert again.ok, f"{why}\n{again}"
    for report in job.reports:
        assert_equal_to_fetch(job, sb, report.name, report.start, ENDS[report.name])
    assert {r.name: r.watermark_after for r in again.reports} == ENDS, why
