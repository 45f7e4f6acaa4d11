"""Windows sized by a points budget: one request per subscriber by default; an answer saying a
request is too large splits that part, and the client keeps the smaller budget."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pandas.testing as pdt
import pytest

from edgereports import presets
from edgereports.errors import ApiError, ConfigError
from edgereports.query import Report
from edgereports.reporting import ReportingClient
from edgereports.reporting.plan import Window, plan_windows, split_window, window_plan
from edgereports.reporting.points import PointsBudget, says_too_large
from edgereports.sandbox import Limits, SandboxHandle

Factory = Callable[..., SandboxHandle]


def _bytes(account: str, msisdns: list[str]) -> Report:
    return presets.byte_usage_subscriber(
        account_id=account, msisdn=msisdns, start="2022-06-01", end="2022-07-01"
    )


def test_the_budget_sizes_the_windows() -> None:
    report = _bytes("A", ["91"])  # 30 days of HOUR x 2 metrics = 1,440 points
    assert len(window_plan(report) or []) == 1
    windows = window_plan(report, points=200) or []  # 100 buckets a window
    assert [w.end - w.start for w in windows[:-1]] == [timedelta(hours=100)] * 7
    assert len(windows) == 8 and windows[-1].end == windows[0].start + timedelta(days=30)
    # a forced window still wins over the budget
    assert len(window_plan(report, timedelta(days=1), points=10) or []) == 30
    # a year caps the default window, whatever the budget
    long = presets.time_usage_enterprise(account_id="A", start="2020-01-01", end="2023-01-01")
    assert len(window_plan(long) or []) == 3


def test_pieces_of_a_window_keep_the_pull_s_first_and_last() -> None:
    from datetime import UTC, datetime

    day = timedelta(days=1)
    start = datetime(2024, 1, 1, 5, 30, tzinfo=UTC)
    windows = plan_windows(start, start + 6 * day, bucket=day, size=2 * day)
    assert len(windows) == 4
    first = split_window(windows[0], day, day)
    middle = split_window(windows[1], day, day)
    last = split_window(windows[-1], day, day)
    assert first[0].index == 0 and all(p.index > 0 for p in first[1:])
    assert all(0 < p.index < p.count - 1 for p in middle)
    assert last[-1].index == last[-1].count - 1
    assert all(p.index < p.count - 1 for p in last[:-1])
    assert first[0].start == start and last[-1].end == windows[-1].end
    assert isinstance(first[0], Window)


def test_budget_arguments_and_what_counts_as_too_large() -> None:
    with pytest.raises(ConfigError, match="points_per_request"):
        ReportingClient("k3y-secret", "http://127.0.0.1:9", points_per_request=0)
    assert PointsBudget(10).shrink(4) == 2 and PointsBudget(10).shrink(1) == 1
    too_big = ApiError("x answered HTTP 400", status_code=400, body_excerpt="would hold 9 points")
    assert says_too_large(too_big)
    assert says_too_large(ApiError("x", status_code=413))
    assert not says_too_large(ApiError("bad granularity", status_code=400))


def test_a_pull_against_a_small_range_limit_splits_and_equals_the_whole_range(
    make_sandbox: Factory, sandbox: SandboxHandle
) -> None:
    small = make_sandbox(limits=Limits(report_points=500))
    msisdns = [s.msisdn for s in small.network.sims_of(small.account_id)][:2]
    report = _bytes(small.account_id, msisdns)
    with ReportingClient(sandbox.api_key, sandbox.reporting_url, progress=False) as whole:
        before = sandbox.request_count()
        expected = whole.fetch(report)
        assert sandbox.request_count() - before == 2  # one request per subscriber
    assert len(expected) == 2 * 2 * 30 * 24
    with ReportingClient(small.api_key, small.reporting_url, progress=False) as client:
        got = client.fetch(report)
        first = small.request_count()
        pdt.assert_frame_equal(got, expected)
        assert first > 8  # refused requests, then pieces
        again = client.fetch(report)  # the client kept the smaller budget: no refusal now
        pdt.assert_frame_equal(again, expected)
        assert small.request_count() - first == 8  # 2 subscribers x 4 pieces of 180 hours
