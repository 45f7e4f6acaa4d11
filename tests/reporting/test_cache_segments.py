"""Segments that hold several entries (a pull's writer stores what it has at hand in one file),
against the sandbox over loopback: what they hold reads back exactly, and integrity, eviction
and the index's rebuild treat the file as one (a damaged file drops every entry in it, and
each is fetched again)."""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path

import orjson
import pandas.testing as pdt
import pyarrow as pa
import pytest
import requests

import edgereports as er
from edgereports.errors import EdgeReportsWarning
from edgereports.normalize import to_frame
from edgereports.reporting.cache import Cache, store
from edgereports.reporting.cache.segments import Entry, Segment, _plain, _runs, checksum
from edgereports.reporting.cache.store import INDEX, Reader
from edgereports.reporting.client import REPORT_PATH
from edgereports.sandbox import SandboxHandle
from tests.reporting.test_cache import client, counted, hourly


def _series(root: Path) -> list[str]:
    with sqlite3.connect(root / "index.sqlite") as db:
        return [s for (s,) in db.execute("SELECT DISTINCT series FROM entries ORDER BY series")]


def _files(root: Path) -> list[Path]:
    return sorted((root / "segments").glob("*.arrow"))


def _entries(cache: Cache) -> list[Entry]:
    """Every stored entry, read back (each series held by one segment)."""
    store = cache.store
    reader = Reader(store, keep=None)
    out = []
    for series in _series(cache.path):
        held = store.index.stored(series)
        assert len({segment for _, segment, _ in held}) == 1
        entry = reader.entry(held[0][1], series, [c for c, _, _ in held])
        assert entry is not None
        out.append(entry)
    return out


def _shared(sb: SandboxHandle, root: Path, n: int = 3) -> tuple[er.Report, Cache]:
    """A cache whose one segment holds the entries of ``n`` subscribers (a cold pull's)."""
    report = hourly(sb, "2022-05-02", "2022-05-05", n=n)
    client(sb, root).fetch(report)
    cache = Cache(root)
    cache.store.write_entries(_entries(cache))  # one file, an entry per subscriber
    files = _files(root)
    assert len(files) == 1 and len(Segment(files[0].stem, files[0].read_bytes()).chunks()) == n
    return report, cache


def test_a_shared_segment_serves_each_subscriber_exactly(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    report, cache = _shared(sandbox, tmp_path)
    plain = client(sandbox).fetch(report)
    got, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    assert sent == 0 and got.attrs["cache"]["hits"] == 9
    pdt.assert_frame_equal(got, plain)
    assert cache.info()["segments"] == 1 and cache.info()["chunks"] == 9


def test_a_flipped_byte_in_a_shared_segment_drops_all_its_entries_once(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    report, _ = _shared(sandbox, tmp_path)
    plain = client(sandbox).fetch(report)
    (path,) = _files(tmp_path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    said = [str(w.message) for w in caught if issubclass(w.category, EdgeReportsWarning)]
    assert sum("fails its checksum" in s for s in said) == 1, said  # one file, one warning
    assert sent == 3  # every subscriber it held is fetched again
    pdt.assert_frame_equal(got, plain)
    assert path not in _files(tmp_path)
    again, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    assert sent == 0  # repaired
    pdt.assert_frame_equal(again, plain)


def test_an_index_pointing_at_a_shared_segment_that_lacks_the_series_drops_it(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    report, cache = _shared(sandbox, tmp_path, n=2)
    plain = client(sandbox).fetch(report)
    (path,) = _files(tmp_path)
    with sqlite3.connect(tmp_path / "index.sqlite") as db:  # a third series, said to be there
        db.execute(
            "INSERT INTO entries SELECT ?, segment, first, last, chunks, count, rows "
            "FROM entries LIMIT 1",
            ("f" * 64,),
        )
    reader = Reader(cache.store)
    first = cache.store.index.stored("f" * 64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert reader.entry(path.stem, "f" * 64, [c for c, _, _ in first]) is None
    assert any("holds another series" in str(w.message) for w in caught)
    assert cache.info()["chunks"] == 0  # the file and every entry pointing to it are gone
    got, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    assert sent == 2
    pdt.assert_frame_equal(got, plain)


def test_evicting_a_shared_segment_drops_every_entry_in_it(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    report, _ = _shared(sandbox, tmp_path)
    (path,) = _files(tmp_path)
    bounded = Cache(tmp_path, max_bytes=path.stat().st_size)
    newer = hourly(sandbox, "2022-05-10", "2022-05-11", n=1)
    client(sandbox, bounded).fetch(newer)  # over the bound: the oldest file goes, whole
    assert path not in _files(tmp_path)
    assert not any(len(bounded.store.index.stored(s)) == 3 for s in _series(tmp_path))
    _, sent = counted(sandbox, lambda: client(sandbox, bounded).fetch(report))
    assert sent == 3


def test_an_index_of_the_first_layout_is_rebuilt_from_the_segments(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    report, cache = _shared(sandbox, tmp_path)
    before = cache.info()
    with sqlite3.connect(tmp_path / "index.sqlite") as db:  # the first layout: a row per chunk
        db.execute("DELETE FROM entries")
        db.execute("CREATE TABLE chunks (series TEXT, chunk INTEGER, segment TEXT, rows INTEGER)")
    reopened = Cache(tmp_path)
    assert reopened.info() == before
    _, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    assert sent == 0


def test_a_segment_of_the_first_format_is_read(sandbox: SandboxHandle, tmp_path: Path) -> None:
    """A file holding one series, its identity, attrs and request in keys of their own."""
    report = hourly(sandbox, "2022-05-02", "2022-05-04", n=1)
    plain = client(sandbox).fetch(report)
    client(sandbox, tmp_path).fetch(report)
    (entry,) = _entries(Cache(tmp_path))
    meta = dict(entry.table.schema.metadata or {})
    meta[b"edgereports.attrs"] = orjson.dumps(entry.attrs)
    meta[b"edgereports.request"] = orjson.dumps(entry.request)
    meta[b"edgereports.identity"] = orjson.dumps(
        {"series": entry.series, "chunks": [[c, e, n] for c, (e, n) in entry.chunks.items()]}
    )
    sink = pa.BufferOutputStream()
    table = entry.table.replace_schema_metadata(meta)
    with pa.ipc.new_file(sink, table.schema) as out:
        out.write_table(table)
    data = sink.getvalue().to_pybytes()
    old = tmp_path / "old"  # a cache of the first layout: a row per chunk, that file
    (old / "segments").mkdir(parents=True)
    (old / "segments" / f"{'0' * 32}-{checksum(data)}.arrow").write_bytes(data)
    with sqlite3.connect(tmp_path / "index.sqlite") as src, sqlite3.connect(old / INDEX) as db:
        src.backup(db)  # the keys seen to work, and the salt, are kept
        db.execute("DROP TABLE entries")
        db.execute("DELETE FROM segments")
        db.execute("CREATE TABLE chunks (series TEXT, chunk INTEGER, segment TEXT, rows INTEGER)")
    got, sent = counted(sandbox, lambda: client(sandbox, old).fetch(report))
    assert sent == 0 and got.attrs["cache"]["hits"] == 2
    pdt.assert_frame_equal(got, plain)


def test_a_segment_run_end_encodes_strings_and_reads_back_the_same_table(
    sandbox: SandboxHandle,
) -> None:
    """What the cache stores of an answer is its table with the string columns run-end
    encoded; read back, it is the same table, metadata included."""
    report = hourly(sandbox, "2022-05-02", "2022-05-04", n=1)
    sent = report.to_request()
    answer = requests.post(
        f"{sandbox.reporting_url.rstrip('/')}/{REPORT_PATH}",
        params={"apikey": sandbox.api_key},
        json=sent,
        timeout=10,
    )
    table = pa.Table.from_pandas(to_frame(answer.content, sent), preserve_index=False)
    encoded = _runs(table)
    assert any(pa.types.is_run_end_encoded(t) for t in encoded.schema.types)
    assert encoded.nbytes < table.nbytes
    assert _plain(encoded).equals(table, check_metadata=True)


def test_an_index_set_aside_is_written_by_no_thread_after(tmp_path: Path) -> None:
    """Once one thread sets the index aside, another thread's open connection does not go on
    writing into the file set aside: it opens the new index."""
    from concurrent.futures import ThreadPoolExecutor

    index = Cache(tmp_path).store.index
    with ThreadPoolExecutor(1) as other:
        other.submit(index.see_key, "before", "f").result()  # that thread's connection opens
        aside = index.set_aside()
        index.create()
        other.submit(index.see_key, "after", "f").result()
    for path, scopes in ((tmp_path / INDEX, ["after"]), (aside, ["before"])):
        with sqlite3.connect(path) as db:
            assert [s for (s,) in db.execute("SELECT scope FROM keys")] == scopes


def test_a_sound_index_is_not_set_aside_for_one_failed_query(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    cache.store.index.see_key("scope", "f")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: nothing is set aside
        cache.store.recover(sqlite3.DatabaseError("database disk image is malformed"))
    assert not list(tmp_path.glob(f"{INDEX}.damaged-*"))
    assert cache.store.key_seen("scope", "f")


def test_a_pull_leaves_what_earlier_pulls_stored_where_it_is(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    """A pull stores its own chunks; the segments earlier pulls of the same subscribers
    stored are neither read nor rewritten, so a pull's cost does not grow with the cache."""
    early = hourly(sandbox, "2022-05-02", "2022-05-04")
    client(sandbox, tmp_path).fetch(early)
    before = {p.name: p.read_bytes() for p in _files(tmp_path)}
    later = hourly(sandbox, "2022-05-10", "2022-05-12")
    assert client(sandbox, tmp_path).fetch(later).attrs["cache"]["hits"] == 0
    after = {p.name: p.read_bytes() for p in _files(tmp_path)}
    assert before.items() <= after.items() and len(after) > len(before)
    both = hourly(sandbox, "2022-05-02", "2022-05-12")
    got, _ = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(both))
    pdt.assert_frame_equal(got, client(sandbox).fetch(both))
    assert got.attrs["cache"]["hits"] == 2 * 4 and got.attrs["cache"]["misses"] == 2 * 6


def test_a_warm_pull_reads_each_segment_once_per_process_and_keeps_its_text_shared(
    sandbox: SandboxHandle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Segments read and checked are kept by the process: a later pull, by another client of
    the same directory too, reads no file again; its frame equals the uncached one, its text
    columns slices of one array per value (not a copy of the text per row)."""
    report = hourly(sandbox, "2022-05-02", "2022-05-06", n=3)
    plain = client(sandbox).fetch(report)
    client(sandbox, tmp_path).fetch(report)
    read: list[str] = []

    class Counted(Segment):
        def __init__(self, name: str, data: bytes) -> None:
            read.append(name)
            super().__init__(name, data)

    monkeypatch.setattr(store, "Segment", Counted)
    warm, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    assert sent == 0 and read
    pdt.assert_frame_equal(warm, plain)
    account = pa.chunked_array(pa.array(warm["account_id"].array))
    assert account.get_total_buffer_size() < len(warm) * len(sandbox.account_id) / 4
    first = len(read)
    again, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    assert sent == 0 and len(read) == first  # no file read again
    pdt.assert_frame_equal(again, plain)


def test_a_kept_segment_whose_file_changed_is_read_again_and_checked(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    """A segment this process keeps is served only while its file is the one read: a byte
    flipped in it since is found by the checksum on the next pull, and fetched again."""
    report = hourly(sandbox, "2022-05-02", "2022-05-04", n=2)
    plain = client(sandbox).fetch(report)
    client(sandbox, tmp_path).fetch(report)
    _, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    assert sent == 0  # read and kept
    for path in _files(tmp_path):
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0x10
        path.write_bytes(bytes(data))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    assert any("fails its checksum" in str(w.message) for w in caught)
    assert sent == 2
    pdt.assert_frame_equal(got, plain)


def test_a_warm_pull_of_percentiles_keeps_each_entry_in_its_place(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    """Runs told by the stored columns, the percentile among them: two percentiles of one
    metric, read warm, come in the order of the request, as uncached."""
    site = next(
        s.customer_site_id for s in sandbox.network.sites if s.account_id == sandbox.account_id
    )
    report = (
        er.Report(account_id=sandbox.account_id)
        .between("2022-06-01T00:00:00Z", "2022-06-04T00:00:00Z")
        .granularity("HOUR")
        .by("customer_site_id")
        .where(customer_site_id=site)
        .metric("uplink_bandwidth", percentile=95)
        .metric("uplink_bandwidth", percentile=50)
    )
    plain = client(sandbox).fetch(report)
    client(sandbox, tmp_path).fetch(report)
    warm, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
    assert sent == 0
    pdt.assert_frame_equal(warm, plain)
    assert warm["percentile"].drop_duplicates().tolist() == [95.0, 50.0]


def test_a_process_keeps_no_more_segments_than_its_bound(
    sandbox: SandboxHandle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the bound on what a process keeps, a segment is read again by the next pull."""
    report = hourly(sandbox, "2022-05-02", "2022-05-04", n=2)
    client(sandbox, tmp_path).fetch(report)
    read: list[str] = []

    class Counted(Segment):
        def __init__(self, name: str, data: bytes) -> None:
            read.append(name)
            super().__init__(name, data)

    monkeypatch.setattr(store, "Segment", Counted)
    monkeypatch.setattr(store, "KEPT", store.Kept(max_bytes=1))  # smaller than any segment
    for _ in range(2):
        _, sent = counted(sandbox, lambda: client(sandbox, tmp_path).fetch(report))
        assert sent == 0
    assert len(read) == 2 * len(set(read)) > 0  # every file read by each pull
