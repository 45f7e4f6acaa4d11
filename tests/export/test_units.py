"""Units of work and the Delta format on a local disk: job keys, ranges, Parquet units, xargs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from edgereports._dependencies import lazy_import
from edgereports.errors import ConfigError
from edgereports.export import Unit, list_reports, read_export, run_export, run_unit, split_units
from edgereports.export.delta import table
from edgereports.export.delta.table import require_deltalake
from edgereports.export.job import parse_job
from edgereports.export.parquet.state import load_state
from edgereports.sandbox import serve
from tests.export.conftest import NOW, canonical, client_for, run_cli, whole_fetch, write_job

ROOT = Path(__file__).resolve().parents[2]
REPORTS = [{"name": "usage", "preset": "active_sim_count"}]
BASE = {"defaults": {"account_id": "62c40843c7a1909709112345", "start": "2024-03-01"}}


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    """One sandbox for this module: its clock stays put."""
    with serve(seed=0, devices=8, clock=NOW) as handle:
        yield handle


@pytest.mark.parametrize(
    ("top", "message"),
    [
        ({"format": "csv"}, "format must be one of 'parquet', 'delta', 'iceberg', got 'csv'"),
        ({"output": "s3://bucket/p"}, 'object storage; .* set format = "delta" or "iceberg"'),
        (
            {"output": "s3://AKIA:hunter22@bucket/p", "format": "delta"},
            "no credentials in it",
        ),
        ({"output": "ftp://host/p", "format": "delta"}, "scheme 'ftp' is not supported"),
    ],
)
def test_format_and_object_store_outputs_are_checked(top: dict[str, Any], message: str) -> None:
    data = {"output": "out", **BASE, "reports": REPORTS, **top}
    with pytest.raises(ConfigError, match=message) as caught:
        parse_job(data)
    assert "hunter22" not in str(caught.value)


def test_a_delta_job_on_s3_keeps_its_uri() -> None:
    job = parse_job({"output": "s3://bkt/edge/", "format": "delta", **BASE, "reports": REPORTS})
    assert (job.format, job.uri, job.location("usage")) == (
        "delta",
        "s3://bkt/edge/",
        "s3://bkt/edge/usage",
    )
    assert parse_job({"output": "out", **BASE, "reports": REPORTS}).format == "parquet"


def test_without_deltalake_the_message_names_the_pip_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "deltalake", None)
    # a process that has not loaded it yet (this one has: a fresh stand-in, as at start-up)
    monkeypatch.setattr(table, "deltalake", lazy_import("deltalake", pip="edgereports[delta]"))
    with pytest.raises(ConfigError, match=r"pip install 'edgereports\[delta\]'"):
        require_deltalake()


def test_without_pyiceberg_the_message_names_the_pip_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from edgereports.export.iceberg import catalog

    monkeypatch.setitem(sys.modules, "pyiceberg.catalog.sql", None)
    fresh = lazy_import("pyiceberg.catalog.sql", pip="edgereports[iceberg]")
    monkeypatch.setattr(catalog, "_sql", fresh)
    with pytest.raises(ConfigError, match=r"pip install 'edgereports\[iceberg\]'"):
        catalog.require_pyiceberg()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from", "2024-03-05", "--until", "2024-03-05"], "must be before --until"),
        (["--from", "2024-03-05", "--full-refresh"], "does not combine with --full-refresh"),
        (["--from", "5 March"], "--from '5 March' is not a date"),
    ],
)
def test_bad_unit_ranges_exit_2_before_any_request(
    tmp_path: Path, sb: Any, args: list[str], message: str
) -> None:
    job = write_job(tmp_path, sb)
    before = sb.request_count()
    done = run_cli(job.source, "--only", "usage", *args, sb=sb)  # type: ignore[arg-type]
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert sb.request_count() == before


def test_split_units_covers_the_range_per_report_from_its_start(tmp_path: Path, sb: Any) -> None:
    job = write_job(tmp_path, sb, start="2024-03-02")
    units = split_units(job, "2024-03-01", "2024-03-06", days=2, only=["usage", "sims"])
    assert [str(u) for u in units] == [
        "usage 2024-03-02 → 2024-03-04",
        "usage 2024-03-04 → 2024-03-06",
        "sims 2024-03-02 → 2024-03-04",
        "sims 2024-03-04 → 2024-03-06",
    ]
    assert units[0] == Unit("usage", date(2024, 3, 2), date(2024, 3, 4))


def test_a_parquet_unit_replaces_its_days_and_moves_the_watermark_only_over_days_written(
    tmp_path: Path, sb: Any
) -> None:
    job = write_job(tmp_path, sb)
    client = client_for(sb)
    report = job.report("usage")
    later = run_unit(job, "usage", "2024-03-05", "2024-03-07", client=client, now=NOW)
    assert later.ok and load_state(job.output / "usage").watermark is None
    first = run_unit(job, "usage", "2024-02-26", "2024-03-05", client=client, now=NOW)
    assert first.ok  # the gap is filled: the watermark moves over the later unit's days too
    assert load_state(job.output / "usage").watermark == datetime(2024, 3, 7, tzinfo=UTC)
    again = run_unit(job, "usage", "2024-03-05", "2024-03-07", client=client, now=NOW)
    assert again.ok
    assert load_state(job.output / "usage").watermark == datetime(2024, 3, 7, tzinfo=UTC)
    got = canonical(read_export(job.output, "usage"), "time_stamp")
    end = datetime(2024, 3, 7, tzinfo=UTC)
    pd.testing.assert_frame_equal(got, whole_fetch(client, report, report.start, end))


@pytest.mark.slow
def test_the_shell_example_runs_units_four_at_a_time_into_a_local_delta_table(
    tmp_path: Path, sb: Any
) -> None:
    job = write_job(tmp_path, sb, start="2024-03-01", format='"delta"')
    assert job.source is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGEREPORTS_")}
    env.update(
        EDGEREPORTS_REPORTING_URL=sb.reporting_url,
        EDGEREPORTS_API_KEY=sb.api_key,
        EDGEREPORTS=f"{sys.executable} -m edgereports.cli",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
    )
    script = ROOT / "examples" / "units_xargs.sh"
    done = subprocess.run(
        ["bash", str(script), str(job.source), "sims", "2024-03-01", "2024-03-09"],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert list_reports(job.output) == ["sims"]
    assert (job.output / "sims" / "_delta_log").is_dir()
    report = job.report("sims")
    lo, hi = datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 3, 9, tzinfo=UTC)
    got = canonical(read_export(job.source, "sims"), "date")  # through the job file
    pd.testing.assert_frame_equal(got, whole_fetch(client_for(sb), report, lo, hi))
    assert read_export(job.output / "sims").attrs["source"] == "delta"
    part = read_export(job.output, "sims", start="2024-03-03", end="2024-03-05")
    assert sorted(part["date"].dt.day.tolist()) == [3, 4]
    summary = run_export(job, only="sims", client=client_for(sb), now=NOW, until=hi)
    assert summary.ok and summary.reports[0].plan.begin == datetime(2024, 3, 7, tzinfo=UTC)


def test_a_delta_full_refresh_leaves_exactly_the_refreshed_range(tmp_path: Path, sb: Any) -> None:
    job = write_job(tmp_path, sb, start="2024-03-01", format='"delta"')
    assert job.source is not None
    client = client_for(sb)
    first = run_export(job, only="usage", client=client, now=NOW)
    assert first.ok and first.reports[0].watermark_after == datetime(2024, 3, 10, tzinfo=UTC)
    # the summary gives the size of the data files written: the table's, as Delta lists them
    import deltalake

    files = deltalake.DeltaTable(str(job.output / "usage")).get_add_actions(flatten=True)
    data = (job.output / "usage").glob("day=*/*.parquet")  # not the log's checkpoints
    on_disk = sum(p.stat().st_size for p in data)
    assert first.reports[0].bytes_written == sum(files.column("size_bytes").to_pylist())
    assert first.reports[0].bytes_written == on_disk > 0
    assert " 0 B" not in str(first)
    # the same report from a later start, refreshed up to an earlier end
    later = job.source.read_text(encoding="utf-8").replace("2024-03-01", "2024-03-03")
    job.source.write_text(later, encoding="utf-8")
    lo, hi = datetime(2024, 3, 3, tzinfo=UTC), datetime(2024, 3, 6, tzinfo=UTC)
    refresh = run_export(
        job.source, only="usage", client=client, now=NOW, full_refresh=True, until=hi
    )
    assert refresh.ok, str(refresh)
    assert refresh.reports[0].removed == 6  # 03-01, 03-02, 03-06 ... 03-09
    assert refresh.reports[0].watermark_after == hi  # the later days' records are reset
    got = canonical(read_export(job.source, "usage"), "time_stamp")
    report = job.report("usage")
    pd.testing.assert_frame_equal(got, whole_fetch(client, report, lo, hi))
    after = run_export(job.source, only="usage", client=client, now=NOW)
    assert after.ok and after.reports[0].plan.begin == datetime(2024, 3, 4, tzinfo=UTC)


def test_reading_a_delta_table_from_mid_bucket_keeps_the_bucket_holding_the_start(
    tmp_path: Path, sb: Any
) -> None:
    job = write_job(tmp_path, sb, start="2024-03-04", format='"delta"')
    hi = datetime(2024, 3, 6, tzinfo=UTC)
    assert run_export(job, only=["usage", "bytes"], client=client_for(sb), now=NOW, until=hi).ok
    start = "2024-03-04T10:30:00Z"
    hours = read_export(job.output, "bytes", start=start)
    days = read_export(job.output, "usage", start=start, end="2024-03-05T00:00:00Z")
    assert hours["time_stamp"].min() == pd.Timestamp("2024-03-04T10:00:00Z")
    assert days["time_stamp"].unique().tolist() == [pd.Timestamp("2024-03-04T00:00:00Z")]


def test_a_damaged_delta_table_stops_the_cli_with_one_line_and_no_traceback(
    tmp_path: Path, sb: Any
) -> None:
    job = write_job(tmp_path, sb, format='"delta"')
    assert job.source is not None
    log = job.output / "usage" / "_delta_log"
    log.mkdir(parents=True)
    (log / "00000000000000000000.json").write_text("{garbage", encoding="utf-8")
    before = sb.request_count()
    done = run_cli(job.source, "--only", "usage", sb=sb)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"the Delta table at {job.output / 'usage'} cannot be read" in lines[0]
    assert "repair or remove it" in lines[0]
    assert sb.request_count() == before  # refused before any request
    with pytest.raises(ConfigError, match=r"cannot be read \(Kernel error: Json error") as caught:
        read_export(job.source, "usage")
    assert "\n" not in str(caught.value)


def test_a_store_error_while_opening_a_table_is_redacted_and_stays_an_os_error() -> None:
    from edgereports.export.delta.table import table_errors

    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    with pytest.raises(OSError) as caught, table_errors("s3://bucket/usage", [secret]):
        raise OSError(f"Generic S3 error: signing with {secret} failed\n   0: <unknown>")
    assert str(caught.value) == "Generic S3 error: signing with *** failed"
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_three_disjoint_parquet_units_run_at_once_and_an_overlapping_one_names_the_holder(
    tmp_path: Path,
) -> None:
    from edgereports.errors import ExportLocked
    from edgereports.export.parquet.lock import ExportLock
    from edgereports.sandbox import FaultConfig

    # every request waits 0.3 s, so the three processes' units overlap in time
    with serve(seed=0, devices=8, clock=NOW, faults=FaultConfig(latency=0.3)) as slow:
        job = write_job(tmp_path, slow, subscribers=2)
        report_dir = job.output / "usage"
        assert job.source is not None
        # this process holds a unit's lock on 2024-03-08 (as a running unit would)
        held = ExportLock([report_dir], job="held", days={report_dir: [date(2024, 3, 8)]})
        with held:
            spans = [("2024-02-26", "2024-02-29"), ("2024-02-29", "2024-03-03")]
            spans.append(("2024-03-03", "2024-03-08"))
            procs = [
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "edgereports.cli",
                        "export",
                        str(job.source),
                        "--only",
                        "usage",
                        "--from",
                        a,
                        "--until",
                        b,
                        "--no-progress",
                    ],
                    env={
                        **os.environ,
                        "EDGEREPORTS_REPORTING_URL": slow.reporting_url,
                        "EDGEREPORTS_API_KEY": slow.api_key,
                    },
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for a, b in spans
            ]
            outputs = [p.communicate(timeout=120) for p in procs]
            assert [p.returncode for p in procs] == [0, 0, 0], outputs
            overlapping = run_cli(
                job.source,
                "--only",
                "usage",
                "--from",
                "2024-03-07",
                "--until",
                "2024-03-09",
                sb=slow,
            )
            assert overlapping.returncode != 0
            assert "Traceback" not in overlapping.stderr
            assert f"pid {os.getpid()}" in overlapping.stderr and "job held" in overlapping.stderr
            with pytest.raises(ExportLocked, match=r"export units \(--from/--until\)"):
                run_export(job, only="usage", client=client_for(slow), now=NOW)
        # the units wrote their days; the watermark moved over the units that ended in line
        # from the start (one that ended before its predecessor left it where it was)
        mark = load_state(report_dir).watermark
        assert mark is not None
        assert datetime(2024, 2, 29, tzinfo=UTC) <= mark <= datetime(2024, 3, 8, tzinfo=UTC)
        report = job.report("usage")
        got = canonical(read_export(job.output, "usage"), "time_stamp")
        end = datetime(2024, 3, 8, tzinfo=UTC)
        pd.testing.assert_frame_equal(got, whole_fetch(client_for(slow), report, report.start, end))


def test_the_orchestrator_examples_compile_and_dagster_sees_real_annotations() -> None:
    import ast

    for name in ("dagster_units.py", "airflow_units.py"):
        source = (ROOT / "examples" / name).read_text(encoding="utf-8")
        tree = ast.parse(source)
        compile(tree, name, "exec")
        futures = [
            alias.name
            for node in tree.body
            if isinstance(node, ast.ImportFrom) and node.module == "__future__"
            for alias in node.names
        ]
        if name.startswith("dagster"):  # Dagster refuses a string annotation of `context`
            assert "annotations" not in futures
        assert "run_unit" in source and "edgereports_api" in source.replace("-", "_")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--shard", "1/2"], "--shard K/N runs a shard of a unit: give --from"),
        (["--shard", "3/2", "--from", "2024-03-01"], "--shard must be K/N with 1 <= K <= N"),
        (["--shard", "x", "--from", "2024-03-01"], "--shard must be K/N"),
    ],
)
def test_bad_shards_exit_2_before_any_request(
    tmp_path: Path, sb: Any, args: list[str], message: str
) -> None:
    job = write_job(tmp_path, sb)
    assert job.source is not None
    before = sb.request_count()
    done = run_cli(job.source, "--only", "usage", *args, sb=sb)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
    assert sb.request_count() == before
