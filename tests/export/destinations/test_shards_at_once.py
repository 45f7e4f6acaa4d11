"""Shard units of the same days run as processes at once, in every destination.

The table formats commit both (the table is created by whichever comes first; Iceberg's
default catalog is a SQLite file both processes write); Parquet shard units of the same days
take turns: the second stops at once naming the holder (exit 3) and runs again after. Either
way the table ends equal to one whole fetch, and the range counts as written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from edgereports.export import load_job, run_export
from edgereports.sandbox import FaultConfig, serve
from tests.export.conftest import NOW, client_for, run_cli
from tests.export.destinations.conftest import Where, assert_equal_to_fetch, table_bytes
from tests.export.destinations.test_churn import usage_job

pytestmark = pytest.mark.slow  # two processes per destination

START = NOW.replace(hour=0, minute=0) - timedelta(days=6)
END = NOW.replace(hour=0, minute=0)


def test_two_shard_units_at_once_write_the_range_whole(tmp_path: Path, where: Where) -> None:
    # every request waits 0.3 s, so the two processes' units overlap in time
    with serve(seed=0, devices=8, clock=NOW, faults=FaultConfig(latency=0.3)) as sb:
        msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:4]
        job = usage_job(tmp_path, where.output, where.fmt, sb.account_id, msisdns)
        assert job.source is not None
        text = job.source.read_text(encoding="utf-8")
        job.source.write_text(text + "shard_size = 2\n", encoding="utf-8")
        job = load_job(job.source)
        span = ["--only", "usage", "--from", str(START.date()), "--until", str(END.date())]
        env = {k: v for k, v in os.environ.items() if not k.startswith("EDGEREPORTS_")}
        env.update(EDGEREPORTS_REPORTING_URL=sb.reporting_url, EDGEREPORTS_API_KEY=sb.api_key)
        command = [sys.executable, "-m", "edgereports.cli", "export", str(job.source)]
        procs = {
            shard: subprocess.Popen(
                [*command, "--no-progress", "--json", *span, "--shard", shard],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for shard in ("1/2", "2/2")
        }
        done = {shard: (p.communicate(timeout=180), p.returncode) for shard, p in procs.items()}
        codes = {shard: code for shard, (_, code) in done.items()}
        if where.fmt == "parquet":  # one at a time: the other stops at once, naming the holder
            assert 0 in codes.values() and set(codes.values()) <= {0, 3}, done
            for shard, code in codes.items():
                if code == 3:
                    assert "pid " in done[shard][0][1] and "Traceback" not in done[shard][0][1]
                    again = run_cli(job.source, *span, "--shard", shard, sb=sb)
                    assert again.returncode == 0, again.stderr
        else:  # each counts the bytes its own commits added, not the other's
            assert codes == {"1/2": 0, "2/2": 0}, done
            written = sum(json.loads(out)["bytes_written"] for (out, _), _ in done.values())
            assert written == table_bytes(job, "usage") > 0
        plan = run_export(job, client=client_for(sb), now=NOW, dry_run=True).reports[0].plan
        assert plan.watermark == END and plan.reason == "incremental"
        assert_equal_to_fetch(job, sb, "usage", START, END)
