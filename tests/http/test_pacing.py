"""The request budget (``Pacer``): even spacing, pauses for every thread, bad rates.

The spacing is checked on a clock of the test's own (its sleep moves it), so nothing here
depends on how busy the machine is; the pause of a whole pool is checked over loopback against
a scripted server that answers one 429.
"""

from __future__ import annotations

import threading

import pytest

import edgereports as er
from edgereports.http import HttpClient, Pacer
from tests.conftest import Step, scripted


class FakeTime:
    """A clock that only the test's sleeps move."""

    def __init__(self) -> None:
        self.now = 0.0
        self.on_sleep: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.on_sleep.append(seconds)
        self.now += seconds


def starts(pacer: Pacer, t: FakeTime, count: int) -> list[float]:
    out = []
    for _ in range(count):
        pacer.acquire()
        out.append(round(t.now, 6))
    return out


def test_starts_are_evenly_spaced_without_a_burst() -> None:
    t = FakeTime()
    pacer = Pacer(10, clock=t.clock, sleep=t.sleep)
    assert starts(pacer, t, 5) == [0.0, 0.1, 0.2, 0.3, 0.4]  # the first goes at once


def test_idle_time_is_not_saved_up_for_a_burst() -> None:
    t = FakeTime()
    pacer = Pacer("600/min", clock=t.clock, sleep=t.sleep)
    pacer.acquire()
    t.now += 5.0  # nothing asked for five seconds
    assert starts(pacer, t, 3) == [5.0, 5.1, 5.2]


def test_a_little_late_keeps_the_schedule_a_hold_up_starts_a_new_one() -> None:
    t = FakeTime()
    pacer = Pacer(10, clock=t.clock, sleep=t.sleep)
    pacer.acquire()  # 0.0
    t.now = 0.13  # its slot was 0.1: 0.03 late, within half an interval
    pacer.acquire()
    assert starts(pacer, t, 1) == [0.2]  # on schedule, not 0.23
    t.now = 0.6  # the slot was 0.3: held up 0.3 s
    pacer.acquire()
    assert starts(pacer, t, 2) == [0.7, 0.8]  # no clump of the starts it missed


def test_a_pause_holds_the_next_start() -> None:
    t = FakeTime()
    pacer = Pacer(10, clock=t.clock, sleep=t.sleep)
    pacer.acquire()
    pacer.pause(2.0)
    assert starts(pacer, t, 2) == [2.0, 2.1]
    pacer.pause(0)  # nothing to wait
    pacer.pause(-1)
    assert starts(pacer, t, 1) == [2.2]


def test_a_pause_that_begins_while_a_thread_waits_holds_it_too() -> None:
    t = FakeTime()
    pacer = Pacer(10, clock=t.clock, sleep=t.sleep)
    pacer.acquire()

    def sleep_then_429(seconds: float) -> None:
        t.sleep(seconds)
        if len(t.on_sleep) == 1:
            pacer.pause(1.0)  # another thread's 429 arrives while this one sleeps

    pacer._sleep = sleep_then_429
    pacer.acquire()
    assert round(t.now, 6) == 1.1  # 0.1 (its slot) + 1.0 (the pause)


def test_threads_share_one_budget() -> None:
    t = FakeTime()
    lock = threading.Lock()

    def sleep(seconds: float) -> None:
        with lock:
            t.sleep(seconds)

    pacer = Pacer(20, clock=t.clock, sleep=sleep)

    def work() -> None:
        for _ in range(5):
            pacer.acquire()

    threads = [threading.Thread(target=work) for _ in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(30)
    # 15 starts from three threads at 20/s: the last one 14 intervals after the first
    assert round(t.now, 6) == round(14 / 20, 6)


@pytest.mark.parametrize(
    "bad", [0, -1, 0.0, float("inf"), float("nan"), True, "", "fast", "10/h", "0/min", "-5/s"]
)
def test_a_rate_that_is_not_positive_is_refused(bad: object) -> None:
    with pytest.raises(er.ConfigError, match=r"rate_limit must be a positive number .*600/min"):
        Pacer(bad)  # type: ignore[arg-type]


def test_one_429_pauses_every_thread_of_the_pool() -> None:
    """Four threads share a budget of 5/s; the first request is answered 429 with
    ``Retry-After: 1``. Without a pause for all, the other threads' requests would arrive
    0.2, 0.4 and 0.6 s after it; with it, none arrives before the second has passed."""
    throttled = Step(status=429, headers=(("Retry-After", "1"),), body=b"{}")
    with scripted([throttled, Step()]) as server:
        http = HttpClient(server.url, retries=2, pacer=Pacer(5))
        threads = [
            threading.Thread(target=lambda: [http.request("GET", "/x") for _ in range(2)])
            for _ in range(4)
        ]
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
        http.close()
    seen = server.seen
    assert len(seen) == 9  # 8 requests and the retry of the throttled one
    first, rest = seen[0], seen[1:]
    assert all(s.at - first.at >= 1.0 for s in rest), [round(s.at - first.at, 3) for s in rest]


def test_a_caller_session_still_pauses_on_a_final_429() -> None:
    """With a session of the caller's (no retries of ours in it), a 429 that ends the
    retries still pauses the budget."""
    import requests

    throttled = Step(status=429, headers=(("Retry-After", "1"),), body=b"{}")
    with scripted([throttled, Step()]) as server:
        pacer = Pacer(100)
        http = HttpClient(server.url, retries=0, session=requests.Session(), pacer=pacer)
        with pytest.raises(er.RateLimitError):
            http.request("GET", "/x")
        http.request("GET", "/x")
        http.close()
    assert server.seen[1].at - server.seen[0].at >= 1.0
