"""The cache is never wrong: integrity, access and finality (against the sandbox, loopback).

- Integrity: bit flips in segments, segments swapped between subscribers (file contents and
  index entries), a truncated or overwritten index, a garbage index row. Each damaged segment
  (or row) is dropped with a warning and its chunks fetched again; the frame equals the
  uncached one; ``cache clear`` works on a damaged index.
- Access: rows cached with one key are not served to another, nor to a key the service
  refuses for their account: a wrong key gets its AuthError.
- Finality: a pull through a proxy that rewrites the ``Date`` header (ahead of the truth,
  missing, unparseable, ahead of the local clock, behind the data) stores nothing as final
  that the truth later changes.

The figures print with ``pytest -s``.
"""

from __future__ import annotations

import random
import shutil
import threading
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pandas.testing as pdt
import pytest
import requests

import edgereports as er
from edgereports.cli.main import main as cli
from edgereports.errors import AuthError, EdgeReportsWarning
from edgereports.sandbox import SandboxHandle
from tests.reporting.test_cache import client, counted, hourly

FIGURES: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def figures() -> Iterator[None]:
    FIGURES.clear()
    yield
    print(
        f"\ncache trust: {FIGURES['corruptions']} corruptions injected, "
        f"{FIGURES['dates']} Date headers skewed, {FIGURES['keys']} wrong keys tried; "
        f"wrong rows served: {FIGURES['wrong rows']}, raw exceptions: {FIGURES['raw']}"
    )


def _segments(root: Path) -> list[Path]:
    return sorted((root / "segments").glob("*.arrow"))


def _exact(got: Any, want: Any) -> None:
    """The frames are equal; rows that differ count as wrong rows in the figures."""
    if len(got) != len(want) or not got.reset_index(drop=True).equals(want):
        FIGURES["wrong rows"] += max(1, abs(len(got) - len(want)))
    pdt.assert_frame_equal(got, want)


def _pull(sb: SandboxHandle, cache: Path, report: er.Report) -> tuple[Any, int, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got, sent = counted(sb, lambda: client(sb, cache).fetch(report))
        except er.EdgeReportsError:
            raise
        except Exception:
            FIGURES["raw"] += 1
            raise
    return got, sent, [str(w.message) for w in caught if issubclass(w.category, EdgeReportsWarning)]


# ---------------------------------------------------------------------------------- integrity


@pytest.mark.parametrize("flips", [1, 8])
def test_bit_flips_in_segments_are_detected_dropped_and_fetched_again(
    sandbox: SandboxHandle, tmp_path: Path, flips: int
) -> None:
    report = hourly(sandbox, "2022-06-01", "2022-06-04", n=2)
    plain = client(sandbox).fetch(report)
    client(sandbox, tmp_path).fetch(report)
    rng = random.Random(flips)
    damaged = _segments(tmp_path)
    assert damaged
    for path in damaged:
        data = bytearray(path.read_bytes())
        for _ in range(flips):
            at = rng.randrange(len(data))
            data[at] ^= 1 << rng.randrange(8)
            FIGURES["corruptions"] += 1
        path.write_bytes(bytes(data))
    got, sent, said = _pull(sandbox, tmp_path, report)
    assert sent == 2  # both subscribers fetched again
    assert sum("fails its checksum" in s for s in said) == len(damaged)
    _exact(got, plain)
    again, sent, said = _pull(sandbox, tmp_path, report)  # repaired
    assert (sent, said) == (0, [])
    _exact(again, plain)


def test_swapped_segments_are_not_served_as_each_other(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    sims = [str(s.msisdn) for s in sandbox.network.sims_of(sandbox.account_id)[:2]]
    reports = [
        er.presets.byte_usage_subscriber(
            account_id=sandbox.account_id, msisdn=[m], start="2022-05-01", end="2022-05-03"
        )
        for m in sims
    ]
    plains = [client(sandbox).fetch(r) for r in reports]
    for r in reports:
        client(sandbox, tmp_path).fetch(r)
    a, b = _segments(tmp_path)
    # 1. the bytes of b copied over a (the name of a, the contents of b)
    shutil.copyfile(b, a)
    FIGURES["corruptions"] += 1
    for report, plain in zip(reports, plains, strict=True):
        got, _, _ = _pull(sandbox, tmp_path, report)
        _exact(got, plain)
    # 2. the index points one subscriber's chunks at the other's sound segment
    import sqlite3

    with sqlite3.connect(tmp_path / "index.sqlite") as db:
        series = [s for (s,) in db.execute("SELECT DISTINCT series FROM entries ORDER BY series")]
        other = db.execute("SELECT segment FROM entries WHERE series = ?", (series[1],)).fetchone()
        db.execute("UPDATE entries SET segment = ? WHERE series = ?", (other[0], series[0]))
    FIGURES["corruptions"] += 1
    for report, plain in zip(reports, plains, strict=True):
        got, _, _ = _pull(sandbox, tmp_path, report)
        _exact(got, plain)


@pytest.mark.parametrize("damage", ["truncated", "overwritten", "emptied header"])
def test_a_damaged_index_is_set_aside_and_rebuilt(
    sandbox: SandboxHandle, tmp_path: Path, damage: str
) -> None:
    report = hourly(sandbox, "2022-06-05", "2022-06-08")
    plain = client(sandbox).fetch(report)
    first = client(sandbox, tmp_path)
    first.fetch(report)
    first.close()
    _damage(tmp_path / "index.sqlite", damage)
    got, sent, said = _pull(sandbox, tmp_path, report)
    assert any("set aside" in s for s in said), said
    assert list(tmp_path.glob("index.sqlite.damaged-*"))
    _exact(got, plain)
    assert sent <= 2


def _damage(index: Path, damage: str) -> None:
    for extra in ("-wal", "-shm"):
        index.with_name(index.name + extra).unlink(missing_ok=True)
    data = index.read_bytes()
    index.write_bytes(
        {
            "truncated": data[: len(data) // 3],
            "overwritten": b"\x00garbage" * 100,
            "emptied header": b"\x00" * 100 + data[100:],
        }[damage]
    )
    FIGURES["corruptions"] += 1


@pytest.mark.parametrize(
    "garbage", ["not json", "[[1, 2], [3]", "null", 7, "[[1, 2], [3]]", '[["x"], [1]]']
)
def test_a_garbage_index_row_is_dropped_and_its_chunks_fetched_again(
    sandbox: SandboxHandle, tmp_path: Path, garbage: object
) -> None:
    import sqlite3

    report = hourly(sandbox, "2022-06-20", "2022-06-23")
    plain = client(sandbox).fetch(report)
    client(sandbox, tmp_path).fetch(report)
    with sqlite3.connect(tmp_path / "index.sqlite") as db:
        (series,) = db.execute("SELECT series FROM entries ORDER BY series LIMIT 1").fetchone()
        db.execute("UPDATE entries SET chunks = ? WHERE series = ?", (garbage, series))
    FIGURES["corruptions"] += 1
    got, sent, said = _pull(sandbox, tmp_path, report)
    assert sent == 1  # the subscriber of that row, fetched again
    assert sum("cannot be read" in s for s in said) == 1, said
    _exact(got, plain)
    again, sent, said = _pull(sandbox, tmp_path, report)  # stored anew
    assert (sent, said) == (0, [])
    _exact(again, plain)


@pytest.mark.parametrize("damage", ["truncated", "emptied header"])
def test_cache_clear_works_on_a_damaged_index(
    sandbox: SandboxHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    first = client(sandbox, tmp_path)
    first.fetch(hourly(sandbox, "2022-06-10", "2022-06-12"))
    first.close()
    _damage(tmp_path / "index.sqlite", damage)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EdgeReportsWarning)
        assert cli(["cache", "clear", "--dir", str(tmp_path)]) == 0
    assert "removed" in capsys.readouterr().out
    assert _segments(tmp_path) == []
    assert client(sandbox, tmp_path).cache.info()["chunks"] == 0  # type: ignore[union-attr]


# ------------------------------------------------------------------------------------ access


def test_a_wrong_key_never_reads_the_cache(sandbox: SandboxHandle, tmp_path: Path) -> None:
    report = hourly(sandbox, "2022-06-14", "2022-06-16")
    client(sandbox, tmp_path).fetch(report)
    for wrong in ("WRONGKEY-0000000000", sandbox.api_key + "x", sandbox.api_key.upper()):
        if wrong == sandbox.api_key:
            continue
        FIGURES["keys"] += 1
        thief = er.ReportingClient(wrong, sandbox.reporting_url, cache=tmp_path, progress=False)
        before = sandbox.request_count()
        with pytest.raises(AuthError):
            thief.fetch(report)
        assert sandbox.request_count() > before
        with pytest.raises(AuthError):  # and again: a failed key is never bound
            thief.fetch(report)
    # the right key still reads it, sending nothing
    _, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    assert sent == 0
    # the key itself is in no file; its fingerprint is salted per cache
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert sandbox.api_key.encode() not in path.read_bytes()


PRIMARY = "62c40843c7a1909709112345"  # the primary account of seed 0


def test_a_key_refused_for_an_account_never_reads_its_cached_rows(
    make_sandbox: Callable[..., SandboxHandle], tmp_path: Path
) -> None:
    """A key that works for one account, and is seen working there, is refused by the
    service for another: it reads none of the other account's cached rows, and every pull of
    them is sent (and refused), alone or beside a pull of its own account."""
    narrow = "KEY-OF-ONE-ACCOUNT-0123456789"
    sb = make_sandbox(account_keys={narrow: [PRIMARY]})
    other = next(a.account_id for a in sb.network.accounts if a.account_id != PRIMARY)

    def report(account: str) -> er.Report:
        sims = [str(s.msisdn) for s in sb.network.sims_of(account)[:3]]
        return er.presets.byte_usage_subscriber(
            account_id=account, msisdn=sims, start="2022-06-01", end="2022-06-07"
        )

    mine, theirs = report(PRIMARY), report(other)
    for r in (mine, theirs):  # the key of both accounts caches their rows
        client(sb, tmp_path).fetch(r)
    thief = er.ReportingClient(narrow, sb.reporting_url, cache=tmp_path, progress=False)
    got, sent = counted(sb, lambda: thief.fetch(mine))
    assert sent >= 1  # proved on its own account first
    _exact(got, client(sb).fetch(mine))
    _, sent = counted(sb, lambda: thief.fetch(mine))
    assert sent == 0  # bound there: it reads its own account's rows
    for pull in (lambda: thief.fetch(theirs), lambda: thief.fetch_many([mine, theirs])):
        FIGURES["keys"] += 1
        before = sb.request_count()
        with pytest.raises(AuthError, match="may not read account"):
            pull()
        assert sb.request_count() > before
    # the key of both accounts still reads both, sending nothing
    for r in (mine, theirs):
        _, sent = counted(sb, lambda r=r: client(sb, tmp_path).fetch(r))
        assert sent == 0


# -------------------------------------------------------------------------------- the clock


@contextmanager
def date_proxy(target: str) -> Iterator[dict[str, Callable[[str | None], str | None]]]:
    """A loopback proxy to ``target`` whose answers carry ``mode["date"](the real Date)``
    as their Date header (None: no Date header)."""
    mode: dict[str, Callable[[str | None], str | None]] = {"date": lambda real: real}
    session = requests.Session()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
            answer = session.post(f"{target}{self.path}", data=body, headers=headers, timeout=30)
            self.send_response_only(answer.status_code)
            date = mode["date"](answer.headers.get("Date"))
            if date is not None:
                self.send_header("Date", date)
            self.send_header("Content-Type", answer.headers.get("Content-Type", "text/plain"))
            self.send_header("Content-Length", str(len(answer.content)))
            self.end_headers()
            self.wfile.write(answer.content)

        do_GET = do_POST

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        mode["url"] = f"http://127.0.0.1:{httpd.server_address[1]}"  # type: ignore[assignment]
        yield mode
    finally:
        httpd.shutdown()
        httpd.server_close()
        session.close()


def _http(moment: datetime) -> str:
    return format_datetime(moment.astimezone(UTC), usegmt=True)


TRUTH = datetime(2022, 7, 8, 4, 30, tzinfo=UTC)  # the sandbox's clock (SANDBOX_NOW)
SKEWS: dict[str, Callable[[str | None], str | None]] = {
    "two days ahead of the truth": lambda _: _http(TRUTH + timedelta(days=2)),
    "a week ahead of the truth": lambda _: _http(TRUTH + timedelta(days=7)),
    "missing": lambda _: None,
    "unparseable": lambda _: "yesterday-ish",
    "ahead of the local clock": lambda _: _http(datetime.now(UTC) + timedelta(days=400)),
    "behind the data served": lambda _: _http(TRUTH - timedelta(days=3)),
}


@pytest.mark.parametrize("skew", list(SKEWS))
def test_a_present_the_cache_cannot_trust_stores_nothing_the_truth_changes(
    make_sandbox: Callable[..., SandboxHandle], tmp_path: Path, skew: str
) -> None:
    sb = make_sandbox(seed=4)
    report = hourly(sb, "2022-07-06", "2022-07-09", n=1)  # 07-08 holds the sandbox's now
    with date_proxy(sb.reporting_url) as proxy:
        url = str(proxy["url"])
        cached = er.ReportingClient(sb.api_key, url, cache=tmp_path, progress=False)
        proxy["date"] = SKEWS[skew]
        FIGURES["dates"] += 1
        first = cached.fetch(report)
        assert first.attrs["cache"]["misses"] == 3
        if skew in ("missing", "unparseable", "ahead of the local clock", "behind the data served"):
            assert first.attrs["cache"]["provisional"] == 3  # no present to trust: nothing final
        else:
            assert first.attrs["cache"]["provisional"] >= 1  # 07-08 is short of its end
        # the truth moves on: 07-08 fills up; a pull with the true Date must see it whole
        requests.post(f"{sb.base_url}/sandbox/clock", json={"set": "2022-07-10T12:00:00Z"},
                      timeout=10).raise_for_status()  # fmt: skip
        proxy["date"] = lambda real: real
        later = er.ReportingClient(sb.api_key, url, cache=tmp_path, progress=False).fetch(report)
        truth = er.ReportingClient(sb.api_key, sb.reporting_url, progress=False).fetch(report)
        assert len(truth) > len(first)  # the day did fill up
        _exact(later, truth)


def test_a_trusted_present_still_makes_past_days_final(
    make_sandbox: Callable[..., SandboxHandle], tmp_path: Path
) -> None:
    sb = make_sandbox(seed=4)
    report = hourly(sb, "2022-07-05", "2022-07-09", n=1)
    cached = client(sb, tmp_path)
    got = cached.fetch(report)
    assert (got.attrs["cache"]["misses"], got.attrs["cache"]["provisional"]) == (4, 1)


def test_a_full_disk_is_named_as_such_and_the_pull_goes_on(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    from tests.export.parquet.test_checks import fill, tmpfs

    report = hourly(sandbox, "2022-05-01", "2022-06-01", n=3)
    with tmpfs(tmp_path / "mnt", "size=2m") as mount:
        cached = client(sandbox, mount)
        fill(mount, 20_000)
        got, _, said = _pull_with(cached, report)
    full = [s for s in said if "going on without a cache" in s]
    assert len(full) == 1, said
    assert "is full: no space is left on its disk" in full[0] and "Errno 28" in full[0]
    assert got.attrs["cache"]["not_cached"] == ["the cache directory could not be written"]
    _exact(got, client(sandbox).fetch(report))


def _pull_with(cached: er.ReportingClient, report: er.Report) -> tuple[Any, int, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = cached.fetch(report)
    return got, 0, [str(w.message) for w in caught if issubclass(w.category, EdgeReportsWarning)]


def test_day_buckets_with_short_windows_fetch_each_missing_month_once(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    """DAY chunks are UTC months: weekly windows of one month shared its chunk, and each
    window fetched the whole month (2.2-2.9x the requests of the missing chunks)."""
    sims = [str(s.msisdn) for s in sandbox.network.sims_of(sandbox.account_id)[:2]]
    report = er.presets.time_usage_subscriber(
        account_id=sandbox.account_id, msisdn=sims, start="2022-03-01", end="2022-06-01"
    )
    week = timedelta(days=7)
    plain = client(sandbox).fetch(report, window=week)
    cold, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report, window=week))
    # 2 subscribers x 3 months: at most one request per missing chunk (a window across two
    # months may claim both in one request, as the threads' order has it)
    assert 2 <= sent <= 2 * 3
    assert cold.attrs["cache"]["provisional"] == 0
    _exact(cold, plain)
    warm, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report, window=week))
    assert sent == 0
    _exact(warm, plain)


def test_a_key_revoked_since_it_was_last_seen_working_must_prove_itself_again(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    """A binding lasts a day: a key that worked once (then revoked: the service refuses it)
    reads nothing once that day is over, and the right key proves itself with one request."""
    import sqlite3
    import time

    report = hourly(sandbox, "2022-06-17", "2022-06-19")
    client(sandbox, tmp_path).fetch(report)
    revoked = "REVOKED-KEY-0123456789"
    store = er.reporting.Cache(tmp_path).store
    with sqlite3.connect(tmp_path / "index.sqlite") as db:
        (scope,) = db.execute("SELECT DISTINCT scope FROM keys").fetchone()
        db.execute(
            "INSERT INTO keys (scope, fingerprint, seen) VALUES (?, ?, ?)",
            (scope, store.fingerprint(revoked), time.time() - 2 * 86400),
        )
        db.execute("UPDATE keys SET seen = ?", (time.time() - 2 * 86400,))
    FIGURES["keys"] += 1
    thief = er.ReportingClient(revoked, sandbox.reporting_url, cache=tmp_path, progress=False)
    with pytest.raises(AuthError):
        thief.fetch(report)
    _, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    assert sent >= 1  # the right key proved itself again
    _, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    assert sent == 0
