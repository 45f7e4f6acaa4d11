"""Large answers are sent from recycled buffers: every answer is still its own bytes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import requests

from edgereports.sandbox import SandboxHandle
from edgereports.sandbox.engine.answer import answer
from edgereports.sandbox.engine.render import SMALL_ANSWER, render_json
from edgereports.sandbox.engine.request import parse_report
from edgereports.sandbox.web.buffers import BufferPool


def body(sb: SandboxHandle, end: str, names: tuple[str, ...], aggregation: str) -> dict[str, Any]:
    return {
        "start_date_time": "2022-01-01T00:00:00+05:30",
        "end_date_time": end,
        "granularity": "HOUR",
        "dimension_filter_clauses": [{"filters": [
            {"dimension_name": "account_id", "operator": "EXACT",
             "expressions": [sb.account_id]}]}],
        "metrics": [{"name": n, "aggregation_type": aggregation} for n in names],
    }  # fmt: skip


def test_recycled_buffers_never_mix_answers(
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    sb = make_sandbox(seed=5)
    big = body(sb, "2022-04-01T00:00:00+05:30", ("uplink_bytes", "downlink_bytes"), "COUNT")
    other = body(sb, "2022-02-10T00:00:00+05:30", ("jitter", "packet_loss", "packet_latency"),
                 "AVG")  # fmt: skip
    small = body(sb, "2022-01-05T00:00:00+05:30", ("packet_loss",), "MAX")
    with requests.Session() as s:
        for b, large in ((big, True), (other, True), (big, True), (small, False), (other, True),
                         (big, True)):  # fmt: skip
            want = render_json(answer(parse_report(b), sb.network, sb.clock.timestamp(), 5))
            r = s.post(sb.report_endpoint, params={"apikey": sb.api_key}, json=b, timeout=60)
            assert r.status_code == 200
            assert r.headers["Content-Length"] == str(len(want))
            assert r.content == want
            assert (sum(map(len, r.json()["result"])) > SMALL_ANSWER) is large
        # a buffer goes back once the server has iterated the answer to its end, which may be
        # after the client has its last byte; the server handles the next request on this
        # keep-alive connection only after that, so a small answer after it orders the two
        r = s.post(sb.report_endpoint, params={"apikey": sb.api_key}, json=small, timeout=60)
        assert r.status_code == 200
    # the large answers' buffers came back (a loaded machine may hand the last one over late:
    # wait for it, with a deadline that only guards against a hang)
    assert _eventually(lambda: sb.state.buffers.idle() >= 1)


def _eventually(check: Callable[[], bool], deadline: float = 30.0) -> bool:
    """True once ``check()`` is true, polled until ``deadline`` seconds have passed."""
    give_up = time.monotonic() + deadline
    while not check():
        if time.monotonic() > give_up:
            return False
        time.sleep(0.01)
    return True


def test_a_dropped_large_answer_is_cut_in_half(make_sandbox: Callable[..., SandboxHandle]) -> None:
    sb = make_sandbox(seed=5)
    b = body(sb, "2022-03-01T00:00:00+05:30", ("uplink_bytes",), "COUNT")
    want = render_json(answer(parse_report(b), sb.network, sb.clock.timestamp(), 5))
    sb.enqueue_faults("drop")
    with requests.Session() as s:
        r = s.post(sb.report_endpoint, params={"apikey": sb.api_key}, json=b, timeout=60,
                   stream=True)  # fmt: skip
        got = r.raw.read(len(want), decode_content=False)
        assert r.headers["X-Sandbox-Fault-Injected"] == "drop"
        assert got == want[: len(want) // 2]
        r.close()
        again = s.post(sb.report_endpoint, params={"apikey": sb.api_key}, json=b, timeout=60)
        assert again.content == want


def test_pool_hands_out_a_buffer_at_a_time_and_keeps_a_few() -> None:
    pool = BufferPool(keep=2, keep_bytes=1000)
    a = pool.take(100)
    b = pool.take(100)
    assert len(a) >= 100 and a is not b
    pool.give(a)
    assert pool.take(50) is a  # reused once given back
    assert pool.idle() == 0
    pool.give(a)
    pool.give(b)
    pool.give(np.empty(10, dtype=np.uint8))
    assert pool.idle() == 2  # the smallest was dropped
    assert len(pool.take(10_000)) >= 10_000  # the largest idle one, too small, was dropped
    assert pool.idle() == 1
    pool.give(np.empty(2000, dtype=np.uint8))  # past keep_bytes: the smallest go, then it
    assert pool.idle() == 0
