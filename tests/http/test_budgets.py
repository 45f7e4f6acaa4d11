"""Where shared budgets live: one file per API key and service host, salted names, stale files
removed, no key anywhere."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import pytest

import edgereports as er
from edgereports.http import SharedPacer, budget_file
from edgereports.http.budgets import PREFIX, STALE_AFTER, default_directory
from edgereports.reporting import ReportingClient

KEY = "er-live-5b2c9d7e1f3a4b6c"
URL = "https://reports.example/connectivity"


def test_one_key_and_host_share_a_file_other_keys_and_hosts_do_not(tmp_path: Path) -> None:
    one = budget_file(KEY, URL, tmp_path)
    assert one == budget_file(KEY, "https://REPORTS.example:443/v2", tmp_path)
    others = {
        budget_file("er-live-000000000000", URL, tmp_path),  # another key
        budget_file(KEY, "https://other.example", tmp_path),  # another host
        budget_file(KEY, "https://reports.example:8443", tmp_path),  # another port
        budget_file(KEY, "http://reports.example", tmp_path),  # another scheme
    }
    assert one not in others and len(others) == 4
    assert all(p.parent == tmp_path and p.name.startswith(PREFIX) for p in others | {one})


def test_the_name_is_salted_per_directory_and_holds_no_key(tmp_path: Path) -> None:
    """The file name is a salted fingerprint: the same key and host in another directory
    (another salt) has another name, and neither the key nor its plain hash shows."""
    import hashlib

    a = budget_file(KEY, URL, tmp_path / "a")
    b = budget_file(KEY, URL, tmp_path / "b")
    assert a.name != b.name
    plain = hashlib.sha256(KEY.encode()).hexdigest()
    for path in (a, b):
        assert KEY not in path.name and plain[:16] not in path.name
    assert (tmp_path / "a" / "salt").read_bytes() != (tmp_path / "b" / "salt").read_bytes()


def test_no_file_of_the_directory_holds_the_key(tmp_path: Path) -> None:
    """After a pacer used the budget (starts, a 429, accepted answers) no file there holds
    the key, in any encoding the tests of secrets look for, nor does the pacer's repr."""
    import base64

    path = budget_file(KEY, URL, tmp_path)
    pacer = SharedPacer(10, path)
    pacer.acquire()
    pacer.refused(0.0)
    pacer.acquire()
    pacer.accepted()
    forms = [KEY.encode(), KEY.encode("utf-16-le"), base64.b64encode(KEY.encode())]
    files = list(tmp_path.iterdir())
    assert path in files and len(files) == 2  # the budget and the salt
    for file in files:
        data = file.read_bytes()
        assert not any(form in data for form in forms), file
        assert KEY not in file.name
    assert KEY not in repr(pacer)


def test_the_default_directory_is_the_per_user_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_directory() == tmp_path / "edgereports" / "budgets"
    assert budget_file(KEY, URL).parent == tmp_path / "edgereports" / "budgets"


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_opening_a_budget_removes_the_files_nobody_used_for_a_day(tmp_path: Path) -> None:
    stale, fresh, other = (tmp_path / f"{PREFIX}{name}" for name in ("stale", "fresh", "other"))
    for path in (stale, fresh, other):
        path.write_bytes(b"\0" * 8)
    age(stale, STALE_AFTER + 60)
    age(fresh, STALE_AFTER - 60)
    unrelated = tmp_path / "notes.txt"
    unrelated.write_text("mine")
    age(unrelated, 10 * STALE_AFTER)
    in_use = tmp_path / f"{PREFIX}in-use"
    in_use.write_bytes(b"")
    age(in_use, STALE_AFTER + 60)
    fd = os.open(in_use, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a pacer of another process holds it right now
        budget_file(KEY, URL, tmp_path)
    finally:
        os.close(fd)
    assert not stale.exists()
    assert fresh.exists() and other.exists() and unrelated.exists() and in_use.exists()


def test_the_budget_being_opened_is_kept_even_when_old(tmp_path: Path) -> None:
    path = budget_file(KEY, URL, tmp_path)
    SharedPacer(10, path).acquire()
    age(path, 2 * STALE_AFTER)
    assert budget_file(KEY, URL, tmp_path) == path and path.exists()


def test_a_pacer_whose_file_was_removed_meanwhile_makes_it_again(tmp_path: Path) -> None:
    path = budget_file(KEY, URL, tmp_path)
    pacer = SharedPacer(10, path)
    pacer.acquire()
    path.unlink()
    pacer.refused(1.0)
    assert path.exists() and SharedPacer(10, path).per_second == 10 * 0.5


def test_a_file_written_by_an_earlier_version_starts_afresh(tmp_path: Path) -> None:
    path = tmp_path / "budget"
    path.write_bytes(b"\x00" * 8)  # the next start alone, as earlier versions wrote it
    pacer = SharedPacer(10, path)
    assert pacer.per_second == 10.0 and pacer.acquire() == 0.0
    assert path.stat().st_size > 8


def test_a_directory_that_cannot_be_made_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(er.ConfigError, match=r"budget directory .*file/budgets cannot be used"):
        budget_file(KEY, URL, blocker / "budgets")


def test_a_client_shares_the_budget_of_its_key_and_host(tmp_path: Path) -> None:
    one = ReportingClient(KEY, URL)
    two = ReportingClient(KEY, URL)
    one.share_budget("10/s", directory=tmp_path)
    two.share_budget(10, directory=tmp_path)
    paths = {c._http.pacer.path for c in (one, two)}  # type: ignore[union-attr]
    assert paths == {budget_file(KEY, URL, tmp_path)}
    assert one.rate_limit == two.rate_limit == 10.0
    with pytest.raises(er.ConfigError, match="rate_limit must be a positive number"):
        one.share_budget("fast", directory=tmp_path)
