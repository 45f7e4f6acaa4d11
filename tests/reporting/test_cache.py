"""The finality-aware chunk cache, against the sandbox over loopback (docs/caching.md). The
shared sandbox's clock is fixed at 2022-07-08T04:30Z: HOUR chunks (UTC days)
up to 2022-07-07 are final with the default 3-hour horizon, 2022-07-08 is provisional."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas.testing as pdt
import pytest

import edgereports as er
from edgereports import presets
from edgereports.errors import ConfigError, EdgeReportsWarning
from edgereports.reporting.cache import Cache
from edgereports.sandbox import SandboxHandle
from tests.export.parquet.test_checks import tmpfs

DAY = timedelta(days=1)


def subscribers(sb: SandboxHandle, n: int = 2) -> list[str]:
    return [str(s.msisdn) for s in sb.network.sims_of(sb.account_id)[:n]]


def hourly(sb: SandboxHandle, start: str, end: str, n: int = 2) -> er.Report:
    return presets.byte_usage_subscriber(
        account_id=sb.account_id, msisdn=subscribers(sb, n), start=start, end=end
    )


def client(sb: SandboxHandle, cache: Any = None, **options: Any) -> er.ReportingClient:
    return er.ReportingClient(sb.api_key, sb.reporting_url, cache=cache, progress=False, **options)


def counted(sb: SandboxHandle, call: Callable[[], Any]) -> tuple[Any, int]:
    before = sb.request_count()
    out = call()
    return out, sb.request_count() - before


def test_cold_then_warm_sends_nothing_and_equals_the_uncached_frame(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    report = hourly(sandbox, "2022-06-20", "2022-07-01")  # 11 final days x 2 subscribers
    plain = client(sandbox).fetch(report, window=2 * DAY)
    cold, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report, window=2 * DAY))
    assert sent == 2 * 6  # 2 subscribers x 6 windows, each its own days
    assert cold.attrs["cache"]["hits"] == 0 and cold.attrs["cache"]["misses"] == 22
    pdt.assert_frame_equal(cold, plain)
    # a new client (as a new process would), another window size, an overlapping range
    warm, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report, window=5 * DAY))
    assert sent == 0
    assert warm.attrs["cache"] == {**cold.attrs["cache"], "hits": 22, "misses": 0}
    pdt.assert_frame_equal(warm, plain)
    inner = hourly(sandbox, "2022-06-22", "2022-06-25")
    part, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(inner))
    assert sent == 0
    pdt.assert_frame_equal(part, client(sandbox).fetch(inner))
    assert (
        er.provenance(client(sandbox, tmp_path).fetch(report, output="arrow"))["cache"]["hits"]
        == 22
    )


def test_day_buckets_in_months_of_different_lengths_are_counted_per_month(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    """DAY chunks are UTC months: February (28 days) then March (31), one request each; the
    rows of March's last days are March's, and a warm pull serves both months."""
    report = presets.time_usage_subscriber(
        account_id=sandbox.account_id,
        msisdn=subscribers(sandbox),
        start="2022-02-01",
        end="2022-04-01",
    )
    plain = client(sandbox).fetch(report)
    cold = client(sandbox, tmp_path).fetch(report)
    assert cold.attrs["cache"]["misses"] == 2 * 2 and not cold.attrs["cache"]["not_cached"]
    pdt.assert_frame_equal(cold, plain)
    cached = Cache(tmp_path)
    assert cached.info()["chunks"] == 2 * 2 and cached.info()["rows"] == len(plain)
    warm, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    assert sent == 0 and warm.attrs["cache"]["hits"] == 2 * 2
    pdt.assert_frame_equal(warm, plain)


def test_refresh_fetches_and_rewrites(sandbox: SandboxHandle, tmp_path: Path) -> None:
    report = hourly(sandbox, "2022-06-01", "2022-06-04")
    cached = client(sandbox, tmp_path)
    first = cached.fetch(report)
    assert cached.cache is not None
    before = cached.cache.info()
    old = set((tmp_path / "segments").iterdir())
    again, sent = counted(sandbox, lambda: cached.fetch(report, refresh=True))
    assert sent == 2 and again.attrs["cache"]["refresh"] is True
    assert again.attrs["cache"]["misses"] == 6
    pdt.assert_frame_equal(again, first)
    after = cached.cache.info()
    assert after["chunks"] == before["chunks"] == 6
    files = set((tmp_path / "segments").iterdir())
    assert old and not old & files  # the replaced segments are gone
    assert len(files) == after["segments"]


def test_provisional_chunks_are_fetched_again(sandbox: SandboxHandle, tmp_path: Path) -> None:
    report = hourly(sandbox, "2022-07-05", "2022-07-09", n=1)  # 07-08 holds the sandbox's now
    cached = client(sandbox, tmp_path)
    cold, sent = counted(sandbox, lambda: cached.fetch(report))
    assert sent == 1
    assert (cold.attrs["cache"]["misses"], cold.attrs["cache"]["provisional"]) == (4, 1)
    warm, sent = counted(sandbox, lambda: cached.fetch(report))
    assert sent == 1  # only the provisional day
    assert (warm.attrs["cache"]["hits"], warm.attrs["cache"]["misses"]) == (3, 1)
    pdt.assert_frame_equal(warm, client(sandbox).fetch(report))
    # a wider horizon: more days are provisional, none is stored
    wide = client(sandbox, tmp_path / "wide", horizon=timedelta(days=2))
    wide.fetch(report)
    again, sent = counted(sandbox, lambda: wide.fetch(report))
    assert again.attrs["cache"]["provisional"] == 3 and sent == 1
    assert wide.cache is not None and wide.cache.info()["chunks"] == 1


def test_failed_parts_are_not_cached(make_sandbox: Callable[..., SandboxHandle], tmp_path: Path):
    sb = make_sandbox(seed=1)
    report = hourly(sb, "2022-06-01", "2022-06-03", n=1)
    cached = client(sb, tmp_path, retries=0, max_workers=1)
    sb.enqueue_faults("503")  # the first window's request fails
    got = cached.fetch(report, window=DAY, on_error="collect")
    assert len(got.attrs["failures"]) == 1
    assert cached.cache is not None and cached.cache.info()["chunks"] == 1
    again, sent = counted(sb, lambda: cached.fetch(report, window=DAY))
    assert sent == 1  # only the part that failed
    pdt.assert_frame_equal(again, client(sb).fetch(report))


def test_what_is_never_cached_says_why(sandbox: SandboxHandle, tmp_path: Path) -> None:
    cached = client(sandbox, tmp_path)
    now = er.Report(account_id=sandbox.account_id).now().metric("ue_connections", "MAX")
    zoned = hourly(sandbox, "2022-06-01T00:00:00+05:45", "2022-06-02T00:00:00+05:45")
    unpinned = (
        er.Report(account_id=sandbox.account_id)
        .between("2022-06-01", "2022-06-02")
        .granularity("HOUR")
        .by("msisdn")
        .metric("downlink_bytes", "COUNT")
    )
    reasons = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EdgeReportsWarning)
        for report in (now, zoned, unpinned):
            reasons += cached.fetch(report).attrs["cache"]["not_cached"]
    assert [r.split(" ")[0] for r in reasons] == ["NOW/LAST", "range", "grouped"]
    assert cached.cache is not None and cached.cache.info()["chunks"] == 0


def test_no_key_in_any_cache_file(sandbox: SandboxHandle, tmp_path: Path) -> None:
    client(sandbox, tmp_path).fetch(hourly(sandbox, "2022-06-10", "2022-06-12"))
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) >= 3  # the index and segments
    for path in files:
        assert sandbox.api_key.encode() not in path.read_bytes(), path
    assert sandbox.api_key not in repr(client(sandbox, tmp_path).cache)


def test_a_damaged_segment_is_a_miss_and_is_replaced(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    report = hourly(sandbox, "2022-06-12", "2022-06-14", n=1)
    plain = client(sandbox, tmp_path).fetch(report)
    for segment in (tmp_path / "segments").iterdir():
        segment.write_bytes(segment.read_bytes()[:100])
    again, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    assert sent == 1
    pdt.assert_frame_equal(again, plain)
    _, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    assert sent == 0


def test_the_cache_can_be_bounded(sandbox: SandboxHandle, tmp_path: Path) -> None:
    bounded = Cache(tmp_path, max_bytes=60_000)
    cached = client(sandbox, bounded)
    cached.fetch(hourly(sandbox, "2022-05-01", "2022-05-21"), window=DAY)
    info = bounded.info()
    assert 0 < info["bytes"] <= 60_000 and info["chunks"] < 40  # the oldest were evicted
    assert sum(p.stat().st_size for p in (tmp_path / "segments").iterdir()) == info["bytes"]
    assert bounded.clear() == info["segments"] and bounded.info()["chunks"] == 0


def test_bad_input_is_refused_when_the_client_is_built(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    afile = tmp_path / "file"
    afile.write_text("")
    with pytest.raises(ConfigError, match="cache must be a writable directory"):
        client(sandbox, afile)
    with pytest.raises(ConfigError, match="horizon must not be negative"):
        client(sandbox, tmp_path, horizon=timedelta(hours=-1))
    with pytest.raises(ConfigError, match="cache must be a directory path"):
        client(sandbox, 3)
    with pytest.raises(ConfigError, match="max_bytes"):
        Cache(tmp_path, max_bytes=0)
    ro = tmp_path / "ro"
    with tmpfs(ro, "ro,size=1m"), pytest.raises(ConfigError, match="writable directory"):
        client(sandbox, ro)


def test_an_unwritable_directory_degrades_with_one_warning(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    mount = tmp_path / "mnt"
    report = hourly(sandbox, "2022-06-01", "2022-06-05")
    with tmpfs(mount, "size=4m"):
        cached = client(sandbox, mount)
        # the segments' directory turns read-only under the open cache (a remount of the whole
        # file system is refused while the index is open for writing)
        with (
            tmpfs(mount / "segments", "ro,size=1m"),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always")
            got = cached.fetch(report, window=DAY)
        assert got.attrs["cache"]["not_cached"] == ["the cache directory could not be written"]
        mine = [w for w in caught if "cannot be written" in str(w.message)]
        assert len(mine) == 1, [str(w.message) for w in caught]
        pdt.assert_frame_equal(got, client(sandbox).fetch(report))


PULL = """
import sys
from datetime import timedelta
import edgereports as er
from edgereports import presets
url, key, account, cache, start, end, *msisdns = sys.argv[1:]
report = presets.byte_usage_subscriber(account_id=account, msisdn=msisdns, start=start, end=end)
client = er.ReportingClient(key, url, cache=cache, max_workers=1, progress=False)
client.fetch(report, window=timedelta(days=1))
"""


def pull_process(sb: SandboxHandle, cache: Path, start: str, end: str) -> subprocess.Popen[bytes]:
    args = [sb.reporting_url, sb.api_key, sb.account_id, str(cache), start, end]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-c", PULL, *args, *subscribers(sb)], env=env)


@pytest.mark.slow
def test_a_pull_killed_with_sigkill_resumes(
    make_sandbox: Callable[..., SandboxHandle], tmp_path: Path
) -> None:
    sb = make_sandbox(seed=2, faults={"latency": 0.05})
    start, end = "2022-05-01", "2022-05-31"  # 2 subscribers x 30 days, one request per day
    proc = pull_process(sb, tmp_path, start, end)
    index = tmp_path / "index.sqlite"
    stored = 0
    deadline = time.monotonic() + 60
    while stored < 5 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
        with contextlib.suppress(sqlite3.Error), sqlite3.connect(index) as db:
            stored = db.execute("SELECT COALESCE(SUM(count), 0) FROM entries").fetchone()[0]
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the pull ended before it was killed"
    report = hourly(sb, start, end)
    cached = client(sb, tmp_path, max_workers=1)
    assert cached.cache is not None
    kept = cached.cache.info()["chunks"]
    assert 5 <= kept < 60
    got, sent = counted(sb, lambda: cached.fetch(report, window=DAY))
    assert sent == 60 - kept
    assert got.attrs["cache"]["hits"] == kept
    pdt.assert_frame_equal(got, client(sb).fetch(report))


@pytest.mark.slow
def test_two_processes_share_one_cache(sandbox: SandboxHandle, tmp_path: Path) -> None:
    start, end = "2022-04-01", "2022-04-15"
    procs = [pull_process(sandbox, tmp_path, start, end) for _ in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    with sqlite3.connect(tmp_path / "index.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    report = hourly(sandbox, start, end)
    got, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    assert sent == 0 and got.attrs["cache"]["hits"] == 28
    pdt.assert_frame_equal(got, client(sandbox).fetch(report))
    assert not list((tmp_path / "segments").glob("*.tmp"))


def test_settings_name_the_cache(tmp_path: Path) -> None:
    env = {"EDGEREPORTS_CACHE": str(tmp_path)}
    assert er.Settings.from_env(env).cache == str(tmp_path)
    assert er.Settings.from_env({"EDGEREPORTS_CACHE": "1"}).cache is True
    assert er.Settings.from_env({"EDGEREPORTS_CACHE": "off"}).cache is None
    settings = er.Settings(
        api_key="k3y-secret", reporting_url="http://127.0.0.1:9", cache=str(tmp_path)
    )
    made = er.ReportingClient.from_settings(settings)
    assert made.cache is not None and made.cache.path == tmp_path
