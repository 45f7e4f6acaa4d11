"""ReportingClient under injected faults, and the API key kept out of logs and tracebacks."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable, Iterator
from datetime import timedelta

import pandas.testing as pdt
import pytest

from edgereports import presets
from edgereports.errors import (
    ApiError,
    AuthError,
    NotFoundError,
    PartialFailure,
    RateLimitError,
    SchemaError,
    TransportError,
)
from edgereports.query import Report
from edgereports.reporting import ReportingClient
from edgereports.reporting.plan import window_plan
from edgereports.sandbox import FaultConfig, SandboxHandle
from tests.conftest import Step, closed_port_url, every_logger_at_debug, scripted

KEY = "er-live-5b2c9d7e1f3a4b6c"

NINETY_DAYS = {"start": "2022-03-01T09:50:00+05:30", "end": "2022-05-30T09:50:00+05:30"}


@pytest.mark.slow
def test_ninety_windows_under_faults_equal_a_fault_free_run(
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    faults = FaultConfig(
        error_rate=0.2,
        error_statuses=(500, 502, 503, 504),
        rate_limit_rate=0.05,
        retry_after=0.05,
        drop_rate=0.05,
        seed=11,
    )
    clean, faulty = make_sandbox(seed=0), make_sandbox(seed=0, faults=faults)
    report = presets.time_usage_enterprise(account_id=clean.account_id, **NINETY_DAYS)
    report = report.metric("downlink_bytes", "COUNT")
    windows = window_plan(report, timedelta(days=1))
    assert windows is not None and len(windows) == 91  # 90 days from 09:50 local: 91 windows

    def pull(sb: SandboxHandle, retries: int) -> object:
        client = ReportingClient(
            sb.api_key,
            sb.reporting_url,
            retries=retries,
            backoff=0.005,
            retry_after_cap=0.05,
            progress=False,
        )
        return client.fetch(report, window=timedelta(days=1))

    expected = pull(clean, retries=0)
    got = pull(faulty, retries=12)
    pdt.assert_frame_equal(got, expected)  # type: ignore[arg-type]
    counts = faulty.fault_counts()
    statuses = sum(counts.get(s, 0) for s in ("500", "502", "503", "504"))
    assert statuses >= 5 and counts.get("429", 0) >= 1 and counts.get("drop", 0) >= 1
    assert clean.request_count() == 91
    # every fault cost exactly one more request: nothing was fetched twice after success
    assert faulty.request_count() == 91 + statuses + counts["429"] + counts["drop"]


@pytest.fixture
def debug_everywhere(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every logger at DEBUG, every record captured."""
    with caplog.at_level(logging.DEBUG), every_logger_at_debug():
        yield caplog


def _formatted(records: list[logging.LogRecord]) -> list[str]:
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    return [formatter.format(r) for r in records]


def _no_key(exc: BaseException) -> str:
    text = "".join(traceback.format_exception(exc)) + repr(exc) + str(exc)
    assert KEY not in text
    return text


def _report(account_id: str) -> Report:
    return (
        Report(account_id=account_id)
        .between("2022-06-01T00:00:00Z", "2022-06-04T00:00:00Z")
        .granularity("DAY")
        .metric("uplink_bytes", "COUNT")
    )


@pytest.mark.slow
def test_key_never_in_logs_nor_tracebacks(
    make_sandbox: Callable[..., SandboxHandle], debug_everywhere: pytest.LogCaptureFixture
) -> None:
    sb = make_sandbox(seed=0, api_key=KEY)
    report = _report(sb.account_id)
    window = timedelta(days=1)

    def client(key: str = KEY, url: str = sb.reporting_url, retries: int = 1) -> ReportingClient:
        return ReportingClient(
            key,
            url,
            retries=retries,
            backoff=0.005,
            retry_after_cap=0.05,
            max_workers=1,
            progress=False,
        )

    # a pull with retried faults: urllib3 logs every retry with the request URL
    sb.enqueue_faults("503", "429;retry-after=0", "drop")
    frame = client(retries=3).fetch(report, window=window)
    assert len(frame) > 0
    errors: list[BaseException] = []
    # AuthError: a wrong key (which must not show either)
    wrong = f"{KEY}-wrong"
    with pytest.raises(AuthError) as auth:
        client(key=wrong).fetch(report, window=window)
    assert wrong not in "".join(traceback.format_exception(auth.value))
    errors.append(auth.value)
    # ApiError and RateLimitError: the retries run out
    sb.enqueue_faults("500", "500")
    with pytest.raises(ApiError) as api:
        client().run(report)
    sb.enqueue_faults("429;retry-after=0", "429;retry-after=0")
    with pytest.raises(RateLimitError) as limited:
        client().run(report)
    # NotFoundError: a wrong address
    with pytest.raises(NotFoundError) as missing:
        client(url=f"{sb.reporting_url}/nothing-here").run(report)
    # TransportError: nothing listens
    with pytest.raises(TransportError) as transport:
        client(url=closed_port_url()).run(report)
    # PartialFailure: one window fails for good
    sb.enqueue_faults("none", "503", "503")
    with pytest.raises(PartialFailure) as partial:
        client().fetch(report, window=window)
    # SchemaError: a body that is no report (the gateway echoes the URL, key included)
    page = f"<html>proxy error for /connectivity/v1/report?apikey={KEY}</html>".encode()
    html = Step(200, page, (("Content-Type", "text/html"),))
    with scripted([html]) as srv, pytest.raises(SchemaError) as schema:
        client(url=srv.url).fetch(report, window=window)
    errors += [
        api.value,
        limited.value,
        missing.value,
        transport.value,
        partial.value,
        schema.value,
    ]
    texts = [_no_key(e) for e in errors]
    assert [type(e).__name__ for e in errors] == [
        "AuthError",
        "ApiError",
        "RateLimitError",
        "NotFoundError",
        "TransportError",
        "PartialFailure",
        "SchemaError",
    ]
    assert all("apikey=***" in t for t in texts[:5])
    assert "apikey=***" in texts[5]  # the failed window's error names the redacted URL
    lines = _formatted(debug_everywhere.records)
    assert any(line.startswith("urllib3.connectionpool") and "apikey=***" in line for line in lines)
    assert [line for line in lines if KEY in line] == []
