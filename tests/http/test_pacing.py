"""The request budget (``Pacer``): even spacing, pauses for every thread, a pace that follows
the service's 429s and comes back after them, bad rates.

The spacing and the pace are checked on a clock of the test's own (its sleep moves it), so
nothing here depends on how busy the machine is; the pause of a whole pool and the Retry-After
a pacer is told are checked over loopback against a scripted server.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path

import pytest

import edgereports as er
from edgereports.http import HttpClient, Pacer, SharedPacer
from edgereports.http.pace import CALM, LEAST_KEPT, MARGIN, STEP, WINDOW
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


def answer(pacer: Pacer, t: FakeTime, *, refused: bool = False, retry_after: float = 1.0) -> None:
    """One request: its start, then its answer a millisecond later."""
    pacer.acquire()
    t.now += 0.001
    if refused:
        pacer.refused(retry_after)
    else:
        pacer.accepted()


def test_a_burst_of_429s_cuts_the_pace_once_and_accepted_answers_bring_it_back() -> None:
    """Ten requests in flight, all refused (the service refusing the key for a second): the
    first 429 cuts a 10/s budget by the share of 429s among the latest answers (one of six),
    the nine others started before that cut and say nothing new, and once most answers are
    429s every start waits for the Retry-After. Each accepted answer then gives back a tenth of
    the pace: the budget is at 10/s again, its starts 0.1 s apart, as on a fresh client."""
    t = FakeTime()
    pacer = Pacer(10, clock=t.clock, sleep=t.sleep)
    for _ in range(5):
        answer(pacer, t)
    for _ in range(10):
        pacer.acquire()
    pacer.refused(1.0)
    cut = pacer.per_second
    assert cut == pytest.approx(10 * (1 - 1 / 6))
    for _ in range(9):
        pacer.refused(1.0)
    assert pacer.per_second == cut  # one cut, not ten
    burst_at = t.now
    pacer.acquire()
    assert t.now >= burst_at + 1.0  # the Retry-After held the next start
    answers = 0
    while pacer.per_second != 10.0:
        t.now += 0.001
        pacer.accepted()
        pacer.acquire()
        answers += 1
        assert answers <= 100, pacer.per_second  # a pace that never comes back
    assert answers == math.ceil((10 - cut) / (STEP * 10))
    t.now += 1.0  # idle: a fresh schedule
    fresh = [round(t.now + d, 6) for d in (0.0, 0.1, 0.2)]
    assert starts(pacer, t, 3) == fresh


def test_a_client_without_a_rate_goes_back_to_no_pace_after_a_burst() -> None:
    """No ``rate_limit``: no pace until half of the latest eight answers are 429s, then the
    pace the service accepted (twenty requests in the last second, less a tenth); once the
    service has not refused the key for twice CALM seconds the pacer drops it: starts go at
    once again, as on a fresh client."""
    t = FakeTime()
    pacer = Pacer(None, clock=t.clock, sleep=t.sleep)
    for _ in range(20):
        answer(pacer, t)
        t.now += 0.05 - 0.001  # twenty requests a second
    assert pacer.per_second is None and t.on_sleep == []
    for _ in range(3):
        answer(pacer, t, refused=True, retry_after=0.5)
        assert pacer.per_second is None  # fewer than four 429s among eight answers: no pace
    answer(pacer, t, refused=True, retry_after=0.5)
    last_429 = t.now
    learnt = pacer.per_second
    assert learnt is not None and learnt == pytest.approx(20 * MARGIN, rel=0.05)
    answers = 0
    while pacer.per_second is not None:
        answer(pacer, t)
        t.now += 0.05 - 0.001
        answers += 1
        assert answers <= 2 * CALM / 0.05 + 1, pacer.per_second
    assert t.now - last_429 >= 2 * CALM  # not before the 429s have stopped for a while
    pacer.acquire()  # the slot booked at the old pace
    t.on_sleep.clear()
    for _ in range(5):
        pacer.acquire()
    assert t.on_sleep == []  # no pace: no start waits


def test_random_429s_after_a_burst_do_not_keep_a_client_without_a_rate_paced() -> None:
    """A burst paces a client with no ``rate_limit``; 429s now and then afterwards (one in
    twenty answers: the service refusing a request, not the key) neither keep it paced nor
    slow it further: twice CALM seconds after the burst it has no pace."""
    t = FakeTime()
    pacer = Pacer(None, clock=t.clock, sleep=t.sleep)
    for _ in range(20):
        answer(pacer, t)
        t.now += 0.05 - 0.001
    for _ in range(WINDOW // 2):
        answer(pacer, t, refused=True, retry_after=0.5)
    burst_end = t.now
    learnt = pacer.per_second
    assert learnt is not None
    lowest, i = learnt, 0
    while t.now - burst_end < 2 * CALM:
        answer(pacer, t, refused=i % 20 == 19, retry_after=0.5)
        t.now += 0.05 - 0.001
        i += 1
        if pacer.per_second is not None:
            lowest = min(lowest, pacer.per_second)
    answer(pacer, t)
    assert pacer.per_second is None
    assert lowest >= learnt * (1 - 1 / WINDOW) ** 2  # a sparse 429 cuts an eighth at most


def test_sparse_429s_cost_little_pace_and_do_not_ratchet_it_down() -> None:
    """One 429 in every twenty answers (random refusals under load) over two thousand
    answers: each cuts the pace by the share of 429s among the latest answers, each accepted
    answer gives a tenth back, so the pace never falls below seven eighths of the budget and
    ends at it; a pacer without a rate never takes a pace."""
    for rate in (10.0, None):
        t = FakeTime()
        pacer = Pacer(rate, clock=t.clock, sleep=t.sleep)
        for _ in range(20):
            answer(pacer, t)
        paces = set()
        for i in range(2000):
            answer(pacer, t, refused=i % 20 == 0, retry_after=0.0)
            paces.add(pacer.per_second)
        if rate is not None:
            assert min(p for p in paces if p is not None) >= rate * (1 - 1 / WINDOW)
            assert pacer.per_second == rate
        else:
            assert paces == {None}  # one 429 in twenty answers never paces it


def test_a_429_among_accepted_answers_holds_only_its_own_request() -> None:
    """Seven accepted answers, then one 429 asking for two seconds: the service refused a
    request, not the key. The pace is cut by an eighth, the other threads go on at it; the
    refused request's retry waits for its Retry-After (urllib3 sleeps it, see test_client)."""
    t = FakeTime()
    pacer = Pacer(10, clock=t.clock, sleep=t.sleep)
    for _ in range(WINDOW - 1):
        answer(pacer, t)
    answer(pacer, t, refused=True, retry_after=2.0)
    assert pacer.per_second == pytest.approx(10 * (1 - 1 / WINDOW))
    before = t.now
    pacer.acquire()
    assert t.now - before < 0.2  # the next start is a slot away, not two seconds


def test_when_most_answers_are_429s_every_start_waits_for_the_retry_after() -> None:
    t = FakeTime()
    pacer = Pacer(10, clock=t.clock, sleep=t.sleep)
    for _ in range(4):
        answer(pacer, t)
    for _ in range(4):
        answer(pacer, t, refused=True, retry_after=3.0)  # four of the latest eight: half
    refused_at = t.now
    pacer.acquire()
    assert t.now >= refused_at + 3.0 - 0.004  # held from the last 429 (each 1 ms apart)


def test_a_429_to_a_request_started_after_the_retry_after_cuts_again() -> None:
    """A 429 to a request that started after the previous cut's Retry-After had passed is
    news (the cut was not enough): the pace is cut again."""
    t = FakeTime()
    pacer = Pacer(10, clock=t.clock, sleep=t.sleep)
    for _ in range(WINDOW - 1):
        answer(pacer, t)
    answer(pacer, t, refused=True, retry_after=0.5)
    once = pacer.per_second
    assert once is not None and once < 10
    answer(pacer, t, refused=True, retry_after=0.5)  # started before the 0.5 s passed
    assert pacer.per_second == once
    t.now += 0.5
    answer(pacer, t, refused=True, retry_after=0.5)
    now = pacer.per_second
    assert now is not None and now < once


def test_the_pacer_is_told_the_services_retry_after() -> None:
    """Over loopback: a 429 with ``Retry-After: 1.5`` reaches the pacer as 1.5 s, the retry
    waits for it, and the accepted answer that follows is reported too."""

    class Recording(Pacer):
        def __init__(self) -> None:
            super().__init__(100)
            self.told: list[object] = []

        def refused(self, retry_after: float) -> None:
            self.told.append(retry_after)
            super().refused(retry_after)

        def accepted(self) -> None:
            self.told.append("accepted")
            super().accepted()

    throttled = Step(status=429, headers=(("Retry-After", "1.5"),), body=b"{}")
    pacer = Recording()
    with scripted([throttled, Step()]) as server:
        http = HttpClient(server.url, retries=2, pacer=pacer)
        http.request("GET", "/x")
        http.close()
    assert pacer.told == [1.5, "accepted"]
    assert server.seen[1].at - server.seen[0].at >= 1.5


def test_processes_of_one_budget_file_share_its_cuts(tmp_path: Path) -> None:
    """Two pacers of one file (two processes of one key): a burst of 429s that one of them
    meets slows the other, and the accepted answers of either bring the pace back."""
    t = FakeTime()
    one, two = (
        SharedPacer(10, tmp_path / "budget", clock=t.clock, sleep=t.sleep) for _ in range(2)
    )
    answer(one, t, refused=True, retry_after=1.0)
    assert two.per_second == 10 * LEAST_KEPT
    before = t.now
    two.acquire()
    assert t.now >= before + 1.0 - 0.001  # held by the other's 429
    for _ in range(round((1 - LEAST_KEPT) / STEP)):
        answer(two, t)
    assert one.per_second == 10.0
