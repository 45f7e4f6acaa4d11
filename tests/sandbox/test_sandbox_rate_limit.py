"""The sandbox's rate-limit mode: a sliding one-second window per key, 429 with Retry-After."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import requests

from edgereports.sandbox import Limits, SandboxHandle
from edgereports.sandbox.__main__ import build_parser
from edgereports.sandbox.web.throttle import Throttle, retry_after_header

SandboxFactory = Callable[..., SandboxHandle]

BODY = {
    "start_date_time": "NOW", "end_date_time": "NOW",
    "metrics": [{"name": "ue_connections", "aggregation_type": "COUNT"}],
}  # fmt: skip


def post(sb: SandboxHandle, key: str | None = None) -> requests.Response:
    account = {"dimension_name": "account_id", "operator": "EXACT", "expressions": [sb.account_id]}
    body = {**BODY, "dimension_filter_clauses": [{"filters": [account]}]}
    return requests.post(
        sb.report_endpoint, params={"apikey": key or sb.api_key}, json=body, timeout=30
    )


def until_refused(sb: SandboxHandle, most: int = 20) -> list[requests.Response]:
    """Requests back to back until one is refused (or ``most`` were sent)."""
    answers = [post(sb)]
    while answers[-1].status_code != 429 and len(answers) < most:
        answers.append(post(sb))
    return answers


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_window_slides_and_refused_requests_take_no_place() -> None:
    clock = Clock()
    throttle = Throttle(2, clock=clock)
    assert throttle.admit("k") is None
    clock.now += 0.4
    assert throttle.admit("k") is None
    assert throttle.admit("k") == pytest.approx(0.6)  # until the first leaves the window
    assert throttle.admit("other") is None  # per key
    clock.now += 0.6
    assert throttle.admit("k") is None  # the first left; the refused one never counted
    assert throttle.admit("k") == pytest.approx(0.4)
    assert throttle.refused == 2
    throttle.set(None)
    assert throttle.admit("k") is None
    throttle.reset()
    assert throttle.refused == 0


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "5"])
def test_a_limit_that_is_not_a_whole_number_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="requests_per_second must be a whole number >= 1"):
        Throttle(bad)  # type: ignore[arg-type]


def test_retry_after_is_rounded_up_to_the_millisecond() -> None:
    assert retry_after_header(0.0123) == "0.013"
    assert retry_after_header(1.0) == "1"


def test_over_the_limit_the_sandbox_answers_429_with_retry_after(
    make_sandbox: SandboxFactory,
) -> None:
    sb = make_sandbox(limits=Limits(requests_per_second=3))
    answers = until_refused(sb)
    assert [a.status_code for a in answers[:3]] == [200, 200, 200]  # a fresh window admits 3
    refused = answers[-1]
    assert refused.status_code == 429
    assert 0 < float(refused.headers["Retry-After"]) <= 1.0
    assert "more than 3 requests per second" in refused.json()["message"]
    assert sb.rate_limited() == 1
    assert sb.request_count() == len(answers)  # every request counts, refused or not
    assert post(sb, key="another-key").status_code == 401  # its own window, then its auth
    info = requests.get(f"{sb.base_url}/sandbox/rate-limit", timeout=30).json()
    assert info == {"requests_per_second": 3, "rate_limited": 1}
    assert (
        requests.get(f"{sb.base_url}/sandbox/info", timeout=30).json()["limits"][
            "requests_per_second"
        ]
        == 3
    )
    sb.reset_counters()
    assert sb.rate_limited() == 0


def test_the_mode_is_changed_at_run_time(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox()
    url = f"{sb.base_url}/sandbox/rate-limit"
    assert requests.get(url, timeout=30).json()["requests_per_second"] is None
    assert [post(sb).status_code for _ in range(3)] == [200] * 3  # off by default
    on = requests.post(url, json={"requests_per_second": 1}, timeout=30)
    assert on.json()["requests_per_second"] == 1
    assert until_refused(sb)[-1].status_code == 429
    bad = requests.post(url, json={"requests_per_second": 0}, timeout=30)
    assert bad.status_code == 400 and bad.json()["field"] == "requests_per_second"
    sb.set_rate_limit(None)
    assert post(sb).status_code == 200
    with pytest.raises(ValueError):
        sb.set_rate_limit(-1)


def test_a_bad_limit_fails_when_the_sandbox_starts(make_sandbox: SandboxFactory) -> None:
    with pytest.raises(ValueError, match="requests_per_second"):
        make_sandbox(limits=Limits(requests_per_second=0))


def test_the_command_line_takes_the_limit() -> None:
    assert build_parser().parse_args(["--requests-per-second", "50"]).requests_per_second == 50
    assert build_parser().parse_args([]).requests_per_second is None
