"""The lanes that run a pull's parts: every part once, more lanes while they wait, none after a
failure."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from edgereports.reporting.lanes import Lanes, next_start, run_here


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(8) as workers:
        yield workers


def test_every_item_is_worked_once(pool: ThreadPoolExecutor) -> None:
    taken: list[int] = []
    ticks: list[int] = []
    calls: list[str] = []
    lanes = Lanes(pool, range(200), taken.append, 8, 1)
    lanes.join(ticks.append, 0.01, lambda: calls.append("meanwhile"))
    assert sorted(taken) == list(range(200))
    assert sum(ticks) == 200
    assert calls == ["meanwhile"]


def test_lanes_grow_to_the_most_while_their_items_wait(pool: ThreadPoolExecutor) -> None:
    """Eight items that each wait for the seven others can only be done on eight lanes."""
    together = threading.Barrier(8, timeout=10)
    lanes = Lanes(pool, range(8), lambda _: together.wait(), 8, 1)
    lanes.join(lambda _: None, 0.01)  # a broken barrier would raise here
    assert lanes.count == 8


def test_never_more_lanes_than_the_most(pool: ThreadPoolExecutor) -> None:
    """Items done three at a time need three lanes; a fourth would show in ``running``."""
    lock = threading.Lock()
    running = [0, 0]  # now, most seen
    together = threading.Barrier(3, timeout=10)

    def work(_: int) -> None:
        with lock:
            running[0] += 1
            running[1] = max(running)
        together.wait()
        with lock:
            running[0] -= 1

    Lanes(pool, range(39), work, 3, 1).join(lambda _: None, 0.01)
    assert running == [0, 3]


def test_a_failure_ends_the_run_and_nothing_runs_after_it(pool: ThreadPoolExecutor) -> None:
    started: list[int] = []

    def work(item: int) -> None:
        started.append(item)
        if item == 5:
            raise KeyError("part 5")
        time.sleep(0.001)

    with pytest.raises(KeyError, match="part 5"):
        Lanes(pool, range(1000), work, 4, 2).join(lambda _: None, 0.01)
    count = len(started)
    assert 6 <= count < 1000
    time.sleep(0.05)
    assert len(started) == count  # the other lanes stopped taking items


def test_a_pull_starts_on_the_lanes_it_is_given_and_the_next_on_half(
    pool: ThreadPoolExecutor,
) -> None:
    lanes = Lanes(pool, range(100), lambda _: time.sleep(0.001), 8, 8)
    assert lanes.count == 8  # all started at once, before any stall
    lanes.join(lambda _: None, 0.01)
    assert lanes.count == 8
    assert [next_start(n) for n in (16, 8, 3, 2, 1)] == [8, 4, 1, 1, 1]
    few = Lanes(pool, range(3), lambda _: None, 8, 8)
    assert few.count == 3  # no more lanes than items
    few.join(lambda _: None, 0.01)


def test_parts_that_do_not_wait_are_all_worked_here() -> None:
    items = deque(range(50))
    done: list[int] = []
    assert not run_here(items, done.append, lambda n: None)
    assert done == list(range(50)) and not items


def test_two_parts_in_a_row_that_wait_hand_the_rest_to_lanes() -> None:
    items = deque(range(10))
    done: list[int] = []

    def work(item: int) -> None:
        done.append(item)
        if item in (3, 5, 6):
            time.sleep(0.01)  # waits as on the network: wall time without this thread's CPU

    assert run_here(items, work, lambda n: None)
    assert done == [0, 1, 2, 3, 4, 5, 6]  # 3 alone did not stop it; 5 and 6 did
    assert list(items) == [7, 8, 9]
