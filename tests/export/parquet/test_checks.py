"""What an adversarial run found in the export.

Each case runs ``edgereports export`` in this process (the command's own ``main``) and looks at
what the user sees: one line on stderr, the exit status, and what is left on disk. The disk
cases mount small tmpfs file systems (read-only, or 2 MiB to fill up); they need root, and are
skipped with the reason when mounting is not permitted.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from edgereports.cli.export import main
from edgereports.errors import ConfigError, SchemaError
from edgereports.export import read_export
from edgereports.export.parquet.lock import LOCK_FILE
from edgereports.export.parquet.state import STATE_FILE, load_state
from edgereports.export.parquet.writer import PART_FILE
from edgereports.sandbox import serve
from tests.export.conftest import NOW, canonical, write_job


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    with serve(seed=0, devices=8, clock=NOW) as handle:
        yield handle


@pytest.fixture
def export(sb: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    """``export(job, *args)`` -> (status, stderr); ``export.out`` is the last stdout."""
    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", sb.reporting_url)
    monkeypatch.setenv("EDGEREPORTS_API_KEY", sb.api_key)

    def run(job: Path, *args: str) -> tuple[int, str]:
        capsys.readouterr()
        status = main([str(job), "--no-progress", *args])
        captured = capsys.readouterr()
        run.out = captured.out  # type: ignore[attr-defined]
        return status, captured.err

    return run


def one_line(err: str) -> str:
    """The error output is one line, with no traceback."""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".tmp")]


# ---------------------------------------------------------------------------- states (10, 11)


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b'{"format": 1, "watermark": "2024-03-04T00:00:00+00:00", "x": "\xff\xfe"}', "utf-8"),
        (b'{"format": 1, "watermark": "2099-01-01T00:00:00+00:00"}', "in the future"),
        (b'{"format": 1, "shape": "spiral"}', "shape 'spiral' is not one of"),
        (b'{"format": 1, "dimensions": [1, 2]}', "dimensions must be a list of column names"),
        (b'{"format": 1, "dimensions": "msisdn"}', "dimensions must be a list of column names"),
        (b'{"format": 1, "definition": [1]}', "definition must be an object"),
    ],
    ids=["not-utf8", "future", "shape", "dims-numbers", "dims-text", "definition"],
)
def test_a_state_that_cannot_be_trusted_is_refused(
    tmp_path: Path, sb: Any, export: Any, content: bytes, why: str
) -> None:
    """Items 10, 11: a UnicodeDecodeError traceback, or accepted silently (exit 0, no fetch)."""
    job = write_job(tmp_path, sb)
    assert job.source is not None
    state = job.output / "sims" / STATE_FILE
    state.parent.mkdir(parents=True)
    state.write_bytes(content)
    before = sb.request_count()
    status, err = export(job.source, "--only", "sims", "--until", "2024-03-04")
    assert status == 2
    assert one_line(err).startswith(f"edgereports: error: export state {state} ")
    assert why in err and "--full-refresh" in err
    assert sb.request_count() == before
    assert not (job.output / "sims" / LOCK_FILE).exists(), "refused before the lock is taken"
    if why != "in the future":
        with pytest.raises(ConfigError, match="--full-refresh"):
            read_export(job.output, "sims")
    # the way out works
    status, err = export(job.source, "--only", "sims", "--until", "2024-03-04", "--full-refresh")
    assert status == 0, err
    assert load_state(job.output / "sims").watermark == datetime(2024, 3, 4, tzinfo=UTC)


# -------------------------------------------------------------------------- --until (13)


def test_until_before_the_start_is_refused_before_touching_the_output(
    tmp_path: Path, sb: Any, export: Any
) -> None:
    """Item 13: exited 0 "ok" with 0 windows, and created the lock file."""
    job = write_job(tmp_path, sb)
    assert job.source is not None
    before = sb.request_count()
    status, err = export(job.source, "--until", "2024-02-01")
    assert status == 2
    assert one_line(err) == (
        f"edgereports: error: --until 2024-02-01 is not after the start of {job.source} "
        "(2024-02-26): there is nothing to export before it; give a later --until or leave "
        "it out\n"
    )
    assert not job.output.exists() and sb.request_count() == before


# ------------------------------------------------------------------ damaged partitions (12)


@pytest.mark.parametrize("damage", ["truncate", "overwrite", "empty"])
def test_a_damaged_partition_is_named_and_fetched_again(
    tmp_path: Path, sb: Any, export: Any, damage: str
) -> None:
    """Item 12: read_export raised raw pyarrow errors; the next export said "ok" and left it."""
    job = write_job(tmp_path, sb)
    assert job.source is not None
    assert export(job.source, "--only", "usage", "--until", "2024-03-08")[0] == 0
    good = canonical(read_export(job.output, "usage"), "time_stamp")
    part = job.output / "usage" / "day=2024-02-27" / PART_FILE  # long before the lookback
    data = part.read_bytes()
    part.write_bytes(
        {"truncate": data[: len(data) // 2], "overwrite": os.urandom(len(data)), "empty": b""}[
            damage
        ]
    )
    with pytest.raises(SchemaError, match=f"exported partition {part} is damaged"):
        read_export(job.output, "usage")
    status, err = export(job.source, "--only", "usage", "--until", "2024-03-08", "--dry-run")
    assert (status, err) == (0, "") and "and 1 damaged day(s) again" in export.out
    status, err = export(job.source, "--only", "usage", "--until", "2024-03-08")
    assert status == 0, err
    pd.testing.assert_frame_equal(canonical(read_export(job.output, "usage"), "time_stamp"), good)


# ----------------------------------------------------------------------------- disks (9)


@contextlib.contextmanager
def tmpfs(directory: Path, options: str) -> Iterator[Path]:
    """Mount a tmpfs at ``directory`` for the block (skips when mounting is not permitted)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (make test runs as root in CI)")
    directory.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(directory)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"mount -t tmpfs is not permitted here: {done.stderr.strip()}")
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], check=False)


def fill(directory: Path, leave: int) -> None:
    """Fill the file system of ``directory`` so that about ``leave`` bytes stay free."""
    stats = os.statvfs(directory)
    free = stats.f_bavail * stats.f_frsize
    with open(directory / "filler", "wb") as fh, contextlib.suppress(OSError):
        fh.write(b"\0" * max(free - leave, 0))
        fh.flush()


def test_read_only_output_is_one_line_exit_1(tmp_path: Path, sb: Any, export: Any) -> None:
    """Item 9: a raw OSError traceback."""
    job = write_job(tmp_path, sb)
    assert job.source is not None
    with tmpfs(job.output, "ro,size=1m"):
        status, err = export(job.source, "--only", "sims", "--until", "2024-03-04")
    assert status == 1
    assert one_line(err) == (
        "edgereports: error: cannot write the export: Read-only file system: "
        f"{job.output / 'sims'}\n"
    )


def test_output_that_is_a_file_is_one_line_exit_1(tmp_path: Path, sb: Any, export: Any) -> None:
    """Item 9: a raw OSError traceback."""
    job = write_job(tmp_path, sb)
    assert job.source is not None
    job.output.write_text("not a directory")
    status, err = export(job.source, "--only", "sims", "--until", "2024-03-04")
    assert status == 1
    assert one_line(err).startswith("edgereports: error: cannot write the export: ")
    assert str(job.output) in err


@pytest.mark.parametrize("leave", [0, 2048, 8192, 65536, 200_000])
def test_a_full_disk_leaves_a_valid_state_and_no_temporary_file(
    tmp_path: Path, sb: Any, export: Any, leave: int
) -> None:
    """Item 9: a full disk while the state or the lock was written gave a raw traceback."""
    job = write_job(tmp_path, sb)
    assert job.source is not None
    with tmpfs(job.output, "size=2m"):
        assert export(job.source, "--only", "usage", "--until", "2024-03-01")[0] == 0
        before = load_state(job.output / "usage")
        fill(job.output, leave)
        status, err = export(job.source, "--only", "usage", "--until", "2024-03-09")
        assert "Traceback" not in err
        assert status in (0, 1)
        if status == 1:  # one line on stderr, or the windows that failed in the summary
            assert "No space left on device" in err + export.out, err + export.out
            assert not err or one_line(err)
        after = load_state(job.output / "usage")  # valid: it reads
        assert after.watermark is not None and before.watermark is not None
        assert after.watermark >= before.watermark
        assert not leftovers(job.output)
        (job.output / "filler").unlink()
        status, err = export(job.source, "--only", "usage", "--until", "2024-03-09")
        assert status == 0, err
        assert load_state(job.output / "usage").watermark == datetime(2024, 3, 9, tzinfo=UTC)


@pytest.mark.parametrize(
    ("mine", "foreign"), [("usage", "bytes"), ("usage", "sims"), ("sims", "usage")]
)
def test_a_partition_holding_another_reports_file_is_named_and_replaced(
    tmp_path: Path, sb: Any, export: Any, mine: str, foreign: str
) -> None:
    """A valid Parquet file of another report in a partition: read_export gave wrong rows (same
    shape) or a raw ValueError; it names the partition and the command that replaces the day."""
    job = write_job(tmp_path, sb)
    assert job.source is not None
    assert export(job.source, "--until", "2024-03-08")[0] == 0
    good = read_export(job.output, mine)
    part = job.output / mine / "day=2024-02-27" / PART_FILE
    part.write_bytes((job.output / foreign / "day=2024-02-27" / PART_FILE).read_bytes())
    with pytest.raises(SchemaError, match=f"holds report '{foreign}'") as caught:
        read_export(job.output, mine)
    assert f"--only {mine} --from 2024-02-27 --until 2024-02-28" in str(caught.value)
    args = ("--only", mine, "--from", "2024-02-27", "--until", "2024-02-28")
    assert export(job.source, *args)[0] == 0
    pd.testing.assert_frame_equal(
        read_export(job.output, mine).reset_index(drop=True), good.reset_index(drop=True)
    )
