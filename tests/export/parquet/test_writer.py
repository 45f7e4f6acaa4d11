"""Partition writes, read-back, state and lock, on frames built by hand (no service)."""

from __future__ import annotations

import fcntl
import json
import os
from datetime import UTC, date, datetime
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from edgereports import schema
from edgereports._version import __version__
from edgereports.errors import ConfigError, ExportLocked, InputError
from edgereports.export import read_export
from edgereports.export.parquet.lock import LOCK_FILE, ExportLock
from edgereports.export.parquet.state import STATE_FILE, ReportState, load_state, save_state
from edgereports.export.parquet.writer import (
    METADATA_KEY,
    partitions,
    sweep_temporaries,
    write_window,
)

A = datetime(2024, 3, 1, tzinfo=UTC)


def hourly(
    days: int,
    subscribers: tuple[str, ...] = ("919800000001", "919800000002"),
    *,
    offset: float = 0.0,
    start: datetime = A,
) -> pd.DataFrame:
    stamps = pd.date_range(start, periods=24 * days, freq="h", tz="UTC")
    rows = [
        {
            "time_stamp": t,
            "account_id": "ACC",
            "msisdn": s,
            "metric": "uplink_bytes",
            "aggregation": "COUNT",
            "percentile": float("nan"),
            "value": offset + i * 10.0 + k,
        }
        for k, s in enumerate(subscribers)
        for i, t in enumerate(stamps)
    ]
    return schema.TIMESERIES.validate(pd.DataFrame(rows))


def days_of(start: datetime, n: int) -> list[date]:
    return [date.fromordinal(start.date().toordinal() + i) for i in range(n)]


def write(
    frame: pd.DataFrame,
    root: Path,
    start: datetime,
    days: int,
    end: datetime | None = None,
    shape: str = "timeseries",
) -> object:
    end = end or datetime.fromordinal(start.toordinal() + days).replace(tzinfo=UTC)
    return write_window(
        frame,
        root,
        days_of(start, days),
        shape=shape,
        start=start,
        end=end,
        metadata={"report": root.name, "request": {"metrics": []}},
    )


def test_round_trip_keeps_rows_and_dtypes(tmp_path: Path) -> None:
    root = tmp_path / "usage"
    frame = hourly(3)
    wrote = write(frame, root, A, 3)
    assert (wrote.rows, wrote.files, wrote.removed) == (len(frame), 3, 0)
    assert sorted(p.parent.name for p in partitions(root).values()) == [
        "day=2024-03-01",
        "day=2024-03-02",
        "day=2024-03-03",
    ]
    back = read_export(root)
    # the rows come back in the order a fetch gives them (series by series), as written
    pd.testing.assert_frame_equal(back, frame, check_like=False)
    assert dict(back.dtypes) == dict(frame.dtypes)
    assert "day" not in back.columns
    assert back.attrs == {"shape": "timeseries", "report": "usage", "source": "parquet"}


def test_each_file_carries_its_request_and_the_version_but_no_day_column(tmp_path: Path) -> None:
    root = tmp_path / "usage"
    write(hourly(1), root, A, 1)
    part = partitions(root)[date(2024, 3, 1)]
    meta = json.loads(pq.read_schema(part).metadata[METADATA_KEY])
    assert meta["toolkit_version"] == __version__
    assert meta["day"] == "2024-03-01" and meta["rows"] == 48 and meta["shape"] == "timeseries"
    assert meta["request"] == {"metrics": []}
    assert pq.read_schema(part).names == [
        "time_stamp",
        "account_id",
        "msisdn",
        "metric",
        "aggregation",
        "percentile",
        "value",
    ]


def test_a_refetched_day_replaces_the_old_file_whole(tmp_path: Path) -> None:
    root = tmp_path / "usage"
    write(hourly(3), root, A, 3)
    newer = hourly(2, offset=1000.0, start=datetime(2024, 3, 2, tzinfo=UTC))
    write(newer, root, datetime(2024, 3, 2, tzinfo=UTC), 2)
    back = read_export(root)
    assert len(back) == 3 * 48
    assert not back.duplicated(["time_stamp", "msisdn", "metric", "aggregation"]).any()
    later = back[back.time_stamp >= pd.Timestamp("2024-03-02", tz="UTC")]
    assert (later.value >= 1000).all() and len(later) == 96


def test_rows_outside_the_window_are_left_to_their_own_window(tmp_path: Path) -> None:
    root = tmp_path / "usage"
    frame = hourly(3)  # 1st to 3rd; the window is the 2nd until 12:00
    start, end = datetime(2024, 3, 2, tzinfo=UTC), datetime(2024, 3, 2, 12, tzinfo=UTC)
    wrote = write(frame, root, start, 1, end=end)
    back = read_export(root)
    assert wrote.rows == len(back) == 24
    assert back.time_stamp.min() == pd.Timestamp(start) and back.time_stamp.max() < pd.Timestamp(
        end
    )


def test_a_day_that_comes_back_empty_loses_its_old_file(tmp_path: Path) -> None:
    root = tmp_path / "usage"
    write(hourly(2), root, A, 2)
    only_first = hourly(1)
    wrote = write(only_first, root, A, 2)
    assert wrote.removed == 1
    assert list(partitions(root)) == [date(2024, 3, 1)]
    assert not (root / "day=2024-03-02").exists()


def test_sim_counts_partition_on_their_date_column(tmp_path: Path) -> None:
    root = tmp_path / "sims"
    frame = schema.SIM_COUNT.validate(
        pd.DataFrame(
            {
                "date": pd.to_datetime(["2024-03-01", "2024-03-02", "2024-03-03"]),
                "account_id": "ACC",
                "physical": [5, 6, 7],
                "esim": [1, None, 3],
            }
        )
    )
    write(frame, root, A, 2, shape="sim_count")
    back = read_export(root)
    pd.testing.assert_frame_equal(back, frame.iloc[:2].reset_index(drop=True))
    assert back.attrs["shape"] == "sim_count" and str(back.esim.dtype) == "Int64"
    assert len(read_export(root, start="2024-03-02")) == 1


def test_read_filters_by_time(tmp_path: Path) -> None:
    root = tmp_path / "usage"
    write(hourly(3), root, A, 3)
    part = read_export(root, start="2024-03-01T20:00:00Z", end=date(2024, 3, 2))
    assert len(part) == 4 * 2
    part = read_export(tmp_path, "usage", start=datetime(2024, 3, 3, 23, tzinfo=UTC))
    assert len(part) == 2


@pytest.mark.parametrize(
    ("make", "report", "message"),
    [
        (["a", "b"], None, "holds several exported reports (a, b); pass report=NAME"),
        (["a"], "c", "no exported report 'c' under"),
        ([], "c", "(reports: none)"),
    ],
)
def test_read_names_what_is_there(
    tmp_path: Path, make: list[str], report: str | None, message: str
) -> None:
    for name in make:
        write(hourly(1), tmp_path / name, A, 1)
    with pytest.raises(InputError) as info:
        read_export(tmp_path, report)
    assert message in str(info.value)


def test_read_of_a_missing_root_or_a_bad_bound(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no export at .*nothing: not a directory"):
        read_export(tmp_path / "nothing")
    write(hourly(1), tmp_path / "a", A, 1)
    with pytest.raises(InputError, match="start 'soon' is not a date"):
        read_export(tmp_path, start="soon")


def test_an_exported_report_without_partitions_reads_as_an_empty_frame(tmp_path: Path) -> None:
    root = tmp_path / "usage"
    save_state(root, ReportState(shape="timeseries", columns=("msisdn",)))
    back = read_export(root)
    assert back.empty and list(back.columns) == schema.TIMESERIES.columns(["msisdn"])


def test_temporary_files_are_invisible_to_readers_and_swept(tmp_path: Path) -> None:
    root = tmp_path / "usage"
    write(hourly(1), root, A, 1)
    stray = root / "day=2024-03-01" / ".part.parquet.abc.tmp"
    stray.write_bytes(b"half a file")
    (root / ".state.json.x.tmp").write_bytes(b"{")
    assert len(read_export(root)) == 48
    assert sweep_temporaries(root) == 2
    assert not stray.exists()


def test_state_round_trip_and_damage(tmp_path: Path) -> None:
    mark = datetime(2024, 3, 4, 5, tzinfo=UTC)
    state = ReportState(
        watermark=mark, definition={"granularity": "HOUR"}, shape="timeseries", columns=("msisdn",)
    )
    save_state(tmp_path, state)
    loaded = load_state(tmp_path)
    assert (loaded.watermark, loaded.definition, loaded.columns) == (
        mark,
        {"granularity": "HOUR"},
        ("msisdn",),
    )
    assert [p.name for p in tmp_path.iterdir()] == [STATE_FILE]
    assert load_state(tmp_path / "none") == ReportState()
    (tmp_path / STATE_FILE).write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"is damaged .*run with --full-refresh"):
        load_state(tmp_path)


def hold(directory: Path, text: str) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.write(fd, text.encode())
    return fd


def test_the_lock_fails_fast_naming_the_holder_and_takes_all_or_nothing(tmp_path: Path) -> None:
    free, held = tmp_path / "a", tmp_path / "b"
    holder = {
        "pid": 4242,
        "host": "cronbox",
        "started": "2024-03-01T02:00:00+00:00",
        "job": "n.toml",
    }
    fd = hold(held, json.dumps(holder))
    try:
        with pytest.raises(ExportLocked) as info, ExportLock([free, held], job="x"):
            pass
        assert (
            info.value.holder == "pid 4242 on cronbox since 2024-03-01T02:00:00+00:00 (job n.toml)"
        )
        assert "pid 4242 on cronbox" in str(info.value)
        # the free directory was released again: another holder can take it at once
        other = os.open(free / LOCK_FILE, os.O_RDWR)
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(other)
    finally:
        os.close(fd)
    with ExportLock([free, held], job="mine") as lock:
        assert lock is not None
        text = (held / LOCK_FILE).read_text()
        assert json.loads(text)["pid"] == os.getpid() and json.loads(text)["job"] == "mine"
    assert (held / LOCK_FILE).read_text() == ""


def test_a_lock_file_that_is_not_ours_is_shown_redacted(tmp_path: Path) -> None:
    fd = hold(tmp_path, "someone else apikey=SECRET123")
    try:
        with pytest.raises(ExportLocked) as info, ExportLock([tmp_path]):
            pass
    finally:
        os.close(fd)
    assert "SECRET123" not in str(info.value) and "someone else" in info.value.holder


def test_partitions_and_state_follow_the_umask_so_other_readers_can_open_them(
    tmp_path: Path,
) -> None:
    old = os.umask(0o022)
    try:
        write(hourly(1), tmp_path / "usage", A, 1)
        save_state(tmp_path / "usage", ReportState(shape="timeseries"))
    finally:
        os.umask(old)
    part = partitions(tmp_path / "usage")[date(2024, 3, 1)]
    assert part.stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "usage" / STATE_FILE).stat().st_mode & 0o777 == 0o644
