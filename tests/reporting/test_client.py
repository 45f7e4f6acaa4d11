"""ReportingClient against the sandbox over loopback: JSON vs CSV, windows, fan-out, errors."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pandas as pd
import pandas.testing as pdt
import pytest
import requests

from edgereports import presets
from edgereports.errors import (
    ApiError,
    AuthError,
    ConfigError,
    InputError,
    PartialFailure,
    QueryError,
    SchemaError,
)
from edgereports.normalize import stitch, to_frame
from edgereports.query import Report
from edgereports.reporting import CSV, Failure, ReportingClient
from edgereports.reporting.plan import window_plan
from edgereports.sandbox import SandboxHandle
from tests.conftest import Step, scripted

WHOLE = timedelta(days=100_000)  # one window: the range fetched whole


def make_client(sb: SandboxHandle, **options: Any) -> ReportingClient:
    options.setdefault("progress", False)
    options.setdefault("backoff", 0.01)
    options.setdefault("retry_after_cap", 0.1)
    return ReportingClient(sb.api_key, sb.reporting_url, **options)


def preset_params(sb: SandboxHandle) -> dict[str, Any]:
    sims = sb.network.sims_of(sb.account_id)
    sites = [s.customer_site_id for s in sb.network.sites if s.account_id == sb.account_id]
    return {
        "account_id": sb.account_id,
        "start": "2022-07-01T09:50:00+05:30",
        "end": "2022-07-06T09:50:00+05:30",
        "msisdn": [sims[0].msisdn, sims[1].msisdn, sims[2].msisdn],
        "imsi": [sims[3].imsi, sims[4].imsi],
        "customer_site_id": sites[:2],
        "percentile": 90,
    }


# Five days from 09:50+05:30 in two-day windows make three windows; subscriber presets fan out
# over 3 MSISDNs or 2 IMSIs (device_status too), site presets over 2 sites; NOW and PERCENTILE
# are sent whole.
REQUESTS = {
    "time_usage_enterprise": 3,
    "time_usage_subscriber": 3 * 3,
    "byte_usage_subscriber": 3 * 3,
    "realtime_bandwidth": 1,
    "bandwidth_percentile": 2,
    "ue_connections_avg_peak": 3,
    "active_sim_count": 3,
    "ue_connections_subscriber": 2 * 3,
    "ue_connections_enterprise": 3,
    "concurrent_online_ues": 2,
    "device_status": 2,
}


@pytest.mark.parametrize("name", presets.names("v1"))  # v2: tests/reporting/test_v2.py
def test_every_preset_json_equals_csv(sandbox: SandboxHandle, name: str) -> None:
    info = presets.get(name)
    params = {k: v for k, v in preset_params(sandbox).items() if k in {p.name for p in info.params}}
    report = presets.build(name, **params)
    client = make_client(sandbox)
    before = sandbox.request_count()
    from_json = client.fetch(report, window=timedelta(days=2))
    made = sandbox.request_count() - before
    from_csv = client.fetch(report, window=timedelta(days=2), accept=CSV)
    assert made == REQUESTS[name]
    assert len(from_json) > 0
    assert from_json.attrs["source"] == "json" and from_csv.attrs["source"] == "csv"
    assert from_json.attrs["request"] == report.to_request() == from_csv.attrs["request"]
    pdt.assert_frame_equal(from_json, from_csv)


RANGES = [
    ("DAY", "2022-06-03T09:50:00+05:30", "2022-06-20T09:50:00+05:30", timedelta(days=4)),
    ("DAY", "2022-06-03T20:00:00-04:00", "2022-06-20T13:10:00-04:00", timedelta(days=3)),
    ("DAY", "2022-06-03T00:00:00Z", "2022-06-20T00:00:00Z", timedelta(days=5)),
    ("HOUR", "2022-06-03T09:50:00+05:30", "2022-06-05T09:50:00+05:30", timedelta(hours=7)),
    ("HOUR", "2022-06-03T20:15:00-04:00", "2022-06-05T13:10:00-04:00", timedelta(hours=5)),
    ("HOUR", "2022-06-03T00:00:00Z", "2022-06-04T12:00:00Z", timedelta(hours=6)),
    # America/New_York left daylight saving on 2021-11-07: -04:00 before, -05:00 after (a year
    # before the shared sandbox's clock, which answers nothing after it).
    ("DAY", "2021-10-29T09:50:00-04:00", "2021-11-13T07:15:00-05:00", timedelta(days=2)),
    ("HOUR", "2021-11-06T18:30:00-04:00", "2021-11-08T06:45:00-05:00", timedelta(hours=4)),
]


@pytest.mark.parametrize(("grain", "start", "end", "window"), RANGES)
def test_windowed_equals_whole(
    sandbox: SandboxHandle, grain: str, start: str, end: str, window: timedelta
) -> None:
    metric = ("time_usage_seconds", "COUNT") if grain == "DAY" else ("ue_connections", "MAX")
    report = (
        Report(account_id=sandbox.account_id)
        .between(start, end)
        .granularity(grain)
        .metric(*metric)
        .metric("downlink_bytes", "COUNT")
    )
    client = make_client(sandbox)
    before = sandbox.request_count()
    whole = client.fetch(report, window=WHOLE)
    assert sandbox.request_count() - before == 1
    windows = window_plan(report, window)
    assert windows is not None and len(windows) >= 3
    before = sandbox.request_count()
    sent_before = len(sandbox.report_requests())
    windowed = client.fetch(report, window=window)
    assert sandbox.request_count() - before == len(windows)
    assert len(whole) > 0
    pdt.assert_frame_equal(whole, windowed)
    # The first window starts at the user's start, the last ends at the user's end, and each
    # inner boundary is a UTC bucket boundary written in the start's offset.
    bodies = sorted(sandbox.report_requests()[sent_before:], key=lambda b: b["start_date_time"])
    bounds = sorted(
        pd.Timestamp(b[k]) for b in bodies for k in ("start_date_time", "end_date_time")
    )
    assert min(bounds) == pd.Timestamp(start) and max(bounds) == pd.Timestamp(end)
    inner = {b["end_date_time"] for b in bodies} - {end}
    assert all(text.endswith(start[-6:] if start[-1] != "Z" else "+00:00") for text in inner)
    step = pd.Timedelta(hours=1) if grain == "HOUR" else pd.Timedelta(days=1)
    assert all(
        (pd.Timestamp(t) - pd.Timestamp(0, tz="UTC")) % step == pd.Timedelta(0) for t in inner
    )


def test_fan_out_over_50_subscribers_sums_to_enterprise_total(
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    sb = make_sandbox(seed=7, devices=50)
    msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)]
    assert len(msisdns) == 50
    span = {"account_id": sb.account_id, "start": "2022-06-01", "end": "2022-06-21"}
    client = make_client(sb, max_workers=8)
    per_subscriber = client.fetch(
        presets.time_usage_subscriber(msisdn=msisdns, **span), window=timedelta(days=7)
    )
    assert sb.request_count() == 50 * 3  # 50 subscribers x 3 windows
    assert set(per_subscriber["msisdn"]) <= set(msisdns)
    assert per_subscriber["msisdn"].nunique() > 40  # most subscribers have traffic
    enterprise = client.fetch(presets.time_usage_enterprise(**span))
    summed = per_subscriber.groupby("time_stamp")["value"].sum()
    total = enterprise.set_index("time_stamp")["value"]
    assert total.sum() > 0
    pdt.assert_series_equal(summed.reindex(total.index, fill_value=0.0), total, check_names=False)


def test_run_returns_the_payload_untouched(sandbox: SandboxHandle) -> None:
    report = presets.time_usage_enterprise(
        account_id=sandbox.account_id,
        start="2022-07-01T00:00:00+05:30",
        end="2022-07-03T00:00:00+05:30",
    )
    url, key = sandbox.report_endpoint, {"apikey": sandbox.api_key}
    direct = requests.post(url, params=key, json=report.to_request(), timeout=10)
    direct_csv = requests.post(
        url, params=key, json=report.to_request(), headers={"Accept": CSV}, timeout=10
    )
    client = make_client(sandbox)
    assert client.run(report) == direct.json()
    assert client.run(report, accept=CSV) == direct_csv.text
    assert direct_csv.text.startswith("time_stamp,name,aggregation_type,value")


def test_metric_split_reports(sandbox: SandboxHandle) -> None:
    client = make_client(sandbox)
    site = preset_params(sandbox)["customer_site_id"][0]
    base = (
        Report(account_id=sandbox.account_id)
        .between("2022-07-01T00:00:00Z", "2022-07-04T00:00:00Z")
        .by("customer_site_id")
        .where(customer_site_id=site)
    )
    both = base.metric("uplink_bandwidth", percentile=95).metric("uplink_bandwidth", percentile=50)
    before = sandbox.request_count()
    frame = client.fetch(both)
    assert sandbox.request_count() - before == 2
    alone = [
        client.fetch(base.metric("uplink_bandwidth", percentile=p)).drop(columns=[])
        for p in (95, 50)
    ]
    assert frame["percentile"].tolist() == [95.0, 50.0]
    assert frame["value"].tolist() == [a["value"].iloc[0] for a in alone]
    now = Report(account_id=sandbox.account_id).now().metric("ue_connections", "MAX")
    now = now.metric("ue_connections", "AVG")
    current = client.fetch(now)
    assert current["aggregation"].tolist() == ["MAX", "AVG"]
    assert current.attrs["request"] == now.to_request()


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda c, r: c.fetch(Report(account_id="A")), QueryError, "metrics is empty"),
        (lambda c, r: c.run(Report(account_id="A")), QueryError, "metrics is empty"),
        (lambda c, r: c.fetch(r, accept="text/xml"), InputError, "accept must be"),
        (lambda c, r: c.fetch(r, window=timedelta(hours=3)), InputError, "whole number"),
        (lambda c, r: c.fetch(r, window=3), InputError, "window must be a datetime.timedelta"),
        (lambda c, r: c.fetch(r, on_error="ignore"), InputError, "on_error must be"),
        (lambda c, r: c.fetch_many([r, Report()]), QueryError, "metrics is empty"),
    ],
)
def test_bad_input_fails_before_any_request(
    sandbox: SandboxHandle, call: Any, error: type[Exception], message: str
) -> None:
    report = presets.time_usage_enterprise(
        account_id=sandbox.account_id, start="2022-07-01", end="2022-07-03"
    )
    before = sandbox.request_count()
    with pytest.raises(error, match=message):
        call(make_client(sandbox), report)
    assert sandbox.request_count() == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("", "http://127.0.0.1:1"), "api_key is empty"),
        (("k", "ftp://host"), "reporting_url must be an http"),
        (("k", "http://127.0.0.1:1", {"max_workers": 0}), "max_workers must be"),
        (("k", "http://127.0.0.1:1", {"retries": -1}), "retries must be"),
        # every number is checked when the client is built
        (("k", "http://127.0.0.1:1", {"timeout": 0}), "timeout must be a positive number"),
        (("k", "http://127.0.0.1:1", {"timeout": (-1, 5)}), r"timeout \(connect\) must be"),
        (("k", "http://127.0.0.1:1", {"timeout": (5, float("inf"))}), r"timeout \(read\)"),
        (("k", "http://127.0.0.1:1", {"timeout": (1, 2, 3)}), "connect, read"),
        (("k", "http://127.0.0.1:1", {"timeout": "5"}), "timeout must be"),
        (("k", "http://127.0.0.1:1", {"backoff": -1}), "backoff must be 0 or more"),
        (("k", "http://127.0.0.1:1", {"backoff": float("nan")}), "backoff must be"),
        (("k", "http://127.0.0.1:1", {"retry_after_cap": -0.5}), "retry_after_cap must be"),
        (("k", "http://127.0.0.1:1", {"retries": True}), "retries must be"),
        (("k", "http://127.0.0.1:1", {"max_workers": 2.0}), "max_workers must be"),
    ],
)
def test_bad_client_options(args: tuple[Any, ...], message: str) -> None:
    options = args[2] if len(args) > 2 else {}
    with pytest.raises(ConfigError, match=message):
        ReportingClient(args[0], args[1], **options)


def test_wrong_key_is_an_auth_error_at_once(sandbox: SandboxHandle) -> None:
    report = presets.time_usage_enterprise(
        account_id=sandbox.account_id, start="2022-06-01", end="2022-06-21"
    )
    client = ReportingClient("not-the-key-123", sandbox.reporting_url, max_workers=1)
    before = sandbox.request_count()
    with pytest.raises(AuthError) as info:
        client.fetch(report, window=timedelta(days=2))  # ten windows planned
    assert sandbox.request_count() - before == 1  # no retry, the rest cancelled
    assert info.value.status_code in (401, 403)
    assert "not-the-key-123" not in str(info.value)


def _five_windows(sb: SandboxHandle) -> Report:
    return (
        Report(account_id=sb.account_id)
        .between("2022-06-01T09:50:00+05:30", "2022-06-06T09:50:00+05:30")
        .granularity("HOUR")
        .metric("uplink_bytes", "COUNT")
    )


def test_partial_failure_names_every_failed_part(
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    sb = make_sandbox(seed=0)
    report = _five_windows(sb)
    client = make_client(sb, retries=0, max_workers=1)
    whole = client.fetch(report, window=WHOLE)
    windows = window_plan(report, timedelta(days=1))
    assert windows is not None and len(windows) == 6
    sb.enqueue_faults("none", "503", "none", "none", "none", "500")
    with pytest.raises(PartialFailure) as info:
        client.fetch(report, window=timedelta(days=1))
    failures = info.value.failures
    assert [f.window.index for f in failures] == [1, 5]  # type: ignore[union-attr]
    assert [type(f.error) for f in failures] == [ApiError, ApiError]
    assert str(info.value).startswith("2 of 6 requests failed:")
    assert "report 0, window 2/6 2022-06-02T09:30:00+05:30..2022-06-03T09:30:00+05:30" in str(
        info.value
    )
    assert "HTTP 500" in str(failures[1])
    # The frame of the rest holds exactly the points the other windows own.
    lost = pd.Series(False, index=whole.index)
    for f in failures:
        assert f.window is not None
        w = f.window
        stamps = whole["time_stamp"]
        owned = stamps >= pd.Timestamp(w.start) if w.index else stamps == stamps
        if w.index < w.count - 1:
            owned &= stamps < pd.Timestamp(w.end)
        lost |= owned
    expected = whole[~lost].reset_index(drop=True)
    pdt.assert_frame_equal(info.value.frame, expected, check_like=False)
    # on_error="collect" returns that frame, with the failures in attrs
    sb.enqueue_faults("none", "503", "none", "none", "none", "500")
    collected = client.fetch(report, window=timedelta(days=1), on_error="collect")
    summary = collected.attrs["failures"]
    assert [f["part"] for f in summary] == [f.part for f in failures]
    assert [(f["error"], f.get("status_code")) for f in summary] == [
        ("ApiError", 503),
        ("ApiError", 500),
    ]
    assert summary[0]["window"] == ["2022-06-02T09:30:00+05:30", "2022-06-03T09:30:00+05:30"]
    pdt.assert_frame_equal(collected, expected)


def test_every_part_failed_raises_the_first_error(
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    sb = make_sandbox(seed=0)
    client = make_client(sb, retries=0, max_workers=1)
    sb.enqueue_faults(*["502"] * 6)
    with pytest.raises(ApiError) as info:
        client.fetch(_five_windows(sb), window=timedelta(days=1), on_error="collect")
    assert info.value.status_code == 502
    message = str(info.value)
    assert message.startswith("6 of 6 requests failed: POST ")
    assert message.count("answered HTTP 502") == 1  # the shared cause, told once
    assert len(message.splitlines()) == 1


def test_fetch_many_collects_failures_per_report(
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    sb = make_sandbox(seed=0)
    client = make_client(sb, retries=0, max_workers=1)
    good = presets.time_usage_enterprise(
        account_id=sb.account_id, start="2022-06-01", end="2022-06-03"
    )
    bad = _five_windows(sb)
    sb.enqueue_faults("none", "none", *["503"] * 6)  # good has two windows
    result = client.fetch_many([good, bad], window=timedelta(days=1))
    assert not result.ok
    assert result.frames[0] is not None and len(result.frames[0]) > 0
    pdt.assert_frame_equal(result.frames[0], client.fetch(good))
    assert result.frames[1] is None
    assert len(result.failures_of(1)) == 6 and not result.failures_of(0)
    assert all(isinstance(f, Failure) and f.report == 1 for f in result.failures)


def test_broken_body_is_a_schema_error_naming_the_window() -> None:
    report = (
        Report(account_id="A")
        .between("2022-06-01T00:00:00Z", "2022-06-04T00:00:00Z")
        .granularity("DAY")
        .metric("uplink_bytes", "COUNT")
    )
    with scripted(
        [Step(200, b"<html>gateway says hello</html>", (("Content-Type", "text/html"),))]
    ) as srv:
        client = ReportingClient("secret-key-4242", srv.url, progress=False, max_workers=1)
        with pytest.raises(SchemaError) as info:
            client.fetch(report, window=timedelta(days=1))
        with pytest.raises(SchemaError, match="report: the answer is not valid JSON"):
            client.run(report)
    # every window failed alike: one line, the count and the cause
    assert str(info.value) == (
        "3 of 3 requests failed: the answer is not JSON: '<html>gateway says hello</html>'"
    )
    assert len(srv.seen) == 3 + 1


def test_a_deeply_nested_body_fails_its_part_only() -> None:
    """a RecursionError aborted the whole fetch (and export)."""
    report = (
        Report(account_id="A")
        .between("2022-06-01T00:00:00Z", "2022-06-04T00:00:00Z")
        .granularity("DAY")
        .metric("uplink_bytes", "COUNT")
    )
    good = (
        b'{"result": [[{"time_stamp": "%s", "name": "uplink_bytes", "value": 1, '
        b'"aggregation_type": "COUNT"}]], "account_id": "A"}'
    )
    with scripted(
        [
            Step(200, good % b"2022-06-01T00:00:00Z"),
            Step(200, b"[" * 1000 + b"]" * 1000),
            Step(200, good % b"2022-06-03T00:00:00Z"),
        ]
    ) as srv:
        client = ReportingClient("secret-key-4242", srv.url, progress=False, max_workers=1)
        with pytest.raises(PartialFailure) as info:
            client.fetch(report, window=timedelta(days=1))
    assert [type(f.error) for f in info.value.failures] == [SchemaError]
    assert "window 2/3" in str(info.value.failures[0].error)
    assert info.value.frame["time_stamp"].dt.day.tolist() == [1, 3]


def test_one_client_from_several_threads(sandbox: SandboxHandle) -> None:
    client = make_client(sandbox, max_workers=4)
    params = preset_params(sandbox)
    reports = [
        presets.byte_usage_subscriber(
            account_id=sandbox.account_id, msisdn=m, start="2022-06-01", end="2022-06-05"
        )
        for m in params["msisdn"]
    ]
    expected = [client.fetch(r, window=timedelta(days=1)) for r in reports]
    got: dict[int, pd.DataFrame] = {}

    def work(i: int) -> None:
        got[i] = client.fetch(reports[i % 3], window=timedelta(days=1))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(6):
        pdt.assert_frame_equal(got[i], expected[i % 3])


def test_progress_bar(sandbox: SandboxHandle, capsys: pytest.CaptureFixture[str]) -> None:
    report = presets.time_usage_enterprise(
        account_id=sandbox.account_id, start="2022-06-01", end="2022-06-05"
    )
    make_client(sandbox, progress=None).fetch(report, window=timedelta(days=1))
    assert capsys.readouterr().err == ""  # stderr is not a terminal here: no bar
    make_client(sandbox, progress=True).fetch(report, window=timedelta(days=1))
    err = capsys.readouterr().err
    assert "edgereports" in err and "4/4" in err


def test_reprs_and_attrs_hold_no_key(sandbox: SandboxHandle) -> None:
    client = make_client(sandbox)
    assert sandbox.api_key not in repr(client)
    frame = client.fetch(
        presets.time_usage_enterprise(
            account_id=sandbox.account_id, start="2022-06-01", end="2022-06-03"
        )
    )
    assert sandbox.api_key not in repr(frame.attrs)


def test_assembly_equals_the_normalizers_stitch(sandbox: SandboxHandle) -> None:
    """The client trims each window as it arrives; the result equals normalize.stitch."""
    msisdn = preset_params(sandbox)["msisdn"][0]
    report = (
        Report(account_id=sandbox.account_id)
        .between("2022-06-03T09:50:00+05:30", "2022-06-05T09:50:00+05:30")
        .granularity("HOUR")
        .by("msisdn")
        .where(msisdn=msisdn)
        .metric("uplink_bytes", "COUNT")
        .metric("downlink_bytes", "COUNT")
    )
    window = timedelta(hours=7)
    windows = window_plan(report, window)
    assert windows is not None and len(windows) == 7
    client = make_client(sandbox)
    parts = []
    for w in windows:
        assert report.start is not None and report.end is not None
        start = report.start if w.index == 0 else w.start
        end = report.end if w.index == w.count - 1 else w.end
        sub = report.between(start, end)
        parts.append((to_frame(client.run(sub), sub.to_request()), w.start, w.end))
    reference = stitch(parts)
    reference.attrs["request"] = report.to_request()
    got = client.fetch(report, window=window)
    assert got["metric"].nunique() == 2 and len(got) > 90
    pdt.assert_frame_equal(got, reference)


def _worker_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("edgereports_")}


def _three_subscribers(sb: SandboxHandle) -> Report:
    """3 subscribers x 5 one-day windows: 15 parts."""
    params = preset_params(sb)
    return presets.byte_usage_subscriber(
        account_id=sb.account_id, msisdn=params["msisdn"], start=params["start"], end=params["end"]
    )


def test_a_client_keeps_its_worker_threads_across_pulls_until_closed(
    sandbox: SandboxHandle,
) -> None:
    report = _three_subscribers(sandbox)
    before = _worker_threads()
    with make_client(sandbox, max_workers=3) as client:
        first = client.fetch(report, window=timedelta(days=1))
        mine = _worker_threads() - before
        assert 1 <= len(mine) <= 3
        second = client.fetch(report, window=timedelta(days=1))
        assert _worker_threads() - before == mine  # the same threads, none started again
        pdt.assert_frame_equal(first, second)
    assert not (mine & _worker_threads())  # closed: they ended


class _InFlight(requests.adapters.HTTPAdapter):
    """Counts the requests sent and not yet answered, and the most at once."""

    def __init__(self) -> None:
        super().__init__(pool_maxsize=16)
        self._lock = threading.Lock()
        self.now = self.peak = 0

    def send(self, *args: Any, **kwargs: Any) -> requests.Response:
        with self._lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            return super().send(*args, **kwargs)
        finally:
            with self._lock:
                self.now -= 1


def test_every_pull_runs_max_workers_requests_at_once_and_no_more(
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    """The same bound on every pull, whatever the pull before it did."""
    sb = make_sandbox(seed=2, faults={"latency": 0.05})  # requests overlap while they wait
    counting = _InFlight()
    session = requests.Session()
    session.mount("http://", counting)
    report = _three_subscribers(sb)
    peaks = []
    with ReportingClient(
        sb.api_key, sb.reporting_url, session=session, max_workers=3, progress=False
    ) as client:
        for _ in range(3):
            counting.peak = 0
            client.fetch(report, window=timedelta(days=1))  # 15 parts
            peaks.append(counting.peak)
    assert peaks == [3, 3, 3]


def test_a_pull_that_stops_on_an_auth_error_leaves_none_of_its_parts_running(
    sandbox: SandboxHandle,
) -> None:
    report = _three_subscribers(sandbox)
    with ReportingClient("wrong-key-123", sandbox.reporting_url, max_workers=2) as client:
        before = sandbox.request_count()
        with pytest.raises(AuthError):
            client.fetch(report, window=timedelta(days=1))
        sent = sandbox.request_count() - before
        assert 1 <= sent < 15  # 3 subscribers x 5 windows: the rest were cancelled
        time.sleep(0.2)
        assert sandbox.request_count() - before == sent  # nothing ran after fetch raised


def test_the_value_column_of_a_pull_can_be_written(sandbox: SandboxHandle) -> None:
    """A pull of one series in one part once left ``value`` a read-only view of the answer's
    parsed memory."""
    sim = sandbox.network.sims_of(sandbox.account_id)[0]
    report = (
        Report(account_id=sandbox.account_id)
        .between("2022-07-01T00:00:00Z", "2022-07-03T00:00:00Z")
        .granularity("HOUR")
        .by("msisdn")
        .where(msisdn=sim.msisdn)
        .metric("uplink_bytes", "COUNT")
    )
    with make_client(sandbox) as client:
        df = client.fetch(report)
    assert len(df) == 48
    df.loc[0, "value"] = -1.0
    assert df.loc[0, "value"] == -1.0


@pytest.mark.parametrize("start", ["2000w", "9999d", "2000-01-01"])
def test_a_range_longer_than_max_range_sends_nothing(sandbox: Any, start: str) -> None:
    import edgereports as er
    from edgereports.errors import InputError

    client = er.ReportingClient(sandbox.api_key, sandbox.reporting_url, progress=False)
    report = er.presets.time_usage_enterprise(
        account_id=sandbox.account_id, start=start, end="today"
    )
    before = sandbox.request_count()
    with pytest.raises(InputError, match=r"more than max_range \(1,827 days\)"):
        client.fetch(report)
    with pytest.raises(InputError, match=r"reports\[1\]: the range"):
        client.fetch_many([report.between("2022-06-01", "2022-06-02"), report])
    assert sandbox.request_count() == before
    short = er.ReportingClient(
        sandbox.api_key, sandbox.reporting_url, progress=False, max_range=timedelta(days=10)
    )
    with pytest.raises(InputError, match="max_range"):
        short.fetch(report.between("2022-06-01", "2022-06-30"))
    assert sandbox.request_count() == before
    with pytest.raises(er.ConfigError, match="max_range must be"):
        er.ReportingClient("k3y-secret", "https://r.example", max_range=timedelta(0))
