"""Every number means what its label says, against the sandbox over loopback.

Observations 1 to 4 of the issue at the client: top talkers, the sandbox's clock, the range
rule and empty results. The CLI's side of them is in ``tests/cli/test_report.py``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from datetime import timedelta

import pandas as pd
import pytest

import edgereports as er
from edgereports import presets
from edgereports.normalize import to_frame
from edgereports.reporting import ReportingClient
from edgereports.sandbox import SandboxHandle


def client_of(sb: SandboxHandle) -> ReportingClient:
    return ReportingClient(sb.api_key, sb.reporting_url, progress=False)


def sites_of(sb: SandboxHandle) -> list[str]:
    return [s.customer_site_id for s in sb.network.sites if s.account_id == sb.account_id]


def test_a_report_without_its_sites_warns_and_is_marked_a_top_talker_total(
    sandbox: SandboxHandle,
) -> None:
    client = client_of(sandbox)
    with pytest.warns(er.TopTalkerWarning, match=r"grouped by customer_site_id.*customer_site_id"):
        total = client.fetch(presets.concurrent_online_ues(account_id=sandbox.account_id))
    assert total.attrs["top_talker"] == ["customer_site_id"]
    assert len(total) == 1  # one row: the whole enterprise, labelled with one site
    sites = sites_of(sandbox)
    with warnings.catch_warnings():
        warnings.simplefilter("error", er.EdgeReportsWarning)
        per_site = client.fetch(
            presets.concurrent_online_ues(account_id=sandbox.account_id, customer_site_id=sites)
        )
    assert per_site.attrs["top_talker"] == []
    assert list(per_site["customer_site_id"]) == sites  # one row per site, each its own count
    assert per_site["value"].sum() == total["value"].iloc[0]  # the sites sum to the total
    mine = total["customer_site_id"].iloc[0]
    assert per_site.set_index("customer_site_id").loc[mine, "value"] < total["value"].iloc[0]


def test_device_status_names_each_device(sandbox: SandboxHandle) -> None:
    client = client_of(sandbox)
    imsis = [s.imsi for s in sandbox.network.sims_of(sandbox.account_id)]
    with pytest.warns(er.TopTalkerWarning, match="pass imsi values"):
        one = client.fetch(presets.device_status(account_id=sandbox.account_id))
    assert len(one) == 1 and one.attrs["top_talker"] == ["enodeb_ip", "ue_ip", "lr_id", "imsi"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", er.TopTalkerWarning)
        warnings.simplefilter("ignore", er.EmptyResultWarning)  # the SIMs not active now
        every = client.fetch(presets.device_status(account_id=sandbox.account_id, imsi=imsis))
    # a device's status is measured against the SIMs active now: the others are not offline
    today = sandbox.clock.now().date()
    active = [s.imsi for s in sandbox.network.sims_of(sandbox.account_id) if s.active_on(today)]
    assert sorted(every["imsi"]) == sorted(active) and len(imsis) == 64 and len(active) == 54
    assert every.attrs["top_talker"] == []
    assert len(every.attrs["not_on_account"]) == 10


def test_an_unpinned_report_is_sent_whole(sandbox: SandboxHandle) -> None:
    report = (
        er.Report(account_id=sandbox.account_id)
        .between("2022-06-01", "2022-06-29")
        .granularity("DAY")
        .by("msisdn")
        .metric("uplink_bytes", "MAX")
    )
    before = sandbox.request_count()
    with pytest.warns(er.TopTalkerWarning):
        frame = client_of(sandbox).fetch(report, window=timedelta(days=7))
    assert sandbox.request_count() - before == 1  # not four windows with four top talkers
    assert frame["msisdn"].nunique() == 1 and len(frame) == 28


def test_nothing_comes_back_after_the_sandbox_clock(
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    sb = make_sandbox(clock="2024-03-15T06:30:00Z")
    client = client_of(sb)
    days = client.fetch(
        presets.time_usage_enterprise(
            account_id=sb.account_id, start="2024-03-14", end="2024-03-17"
        )
    )
    assert list(days["time_stamp"]) == [
        pd.Timestamp("2024-03-14", tz="UTC"),
        pd.Timestamp("2024-03-15", tz="UTC"),
    ]
    today = days["value"].iloc[1]
    assert 0 < today < days["value"].iloc[0] / 3  # 6.5 hours of the day, not a full day
    hours = client.fetch(
        presets.time_usage_enterprise(
            account_id=sb.account_id, start="2024-03-15", end="2024-03-16"
        ).granularity("HOUR")
    )
    assert len(hours) == 7 and hours["value"].sum() == today  # 00:00 to 06:30, HOUR sums to DAY
    with pytest.warns(er.EmptyResultWarning, match="no rows for account_id="):
        future = client.fetch(
            presets.time_usage_enterprise(
                account_id=sb.account_id, start="2030-01-01", end="2030-01-02"
            )
        )
    assert future.empty and future.attrs["empty"] == [{"account_id": sb.account_id}]


def test_a_month_holds_its_days_and_the_bucket_after_it_is_counted(
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    sb = make_sandbox(clock="2024-08-01T00:00:00Z")
    report = presets.time_usage_enterprise(
        account_id=sb.account_id, start="2024-06-01", end="2024-07-01"
    )
    client = client_of(sb)
    june = client.fetch(report)
    assert len(june) == 30 and june["time_stamp"].max() == pd.Timestamp("2024-06-30", tz="UTC")
    assert june.attrs["dropped_after_end"] == 1  # the service's 1 July bucket
    windowed = client.fetch(report, window=timedelta(days=7))
    pd.testing.assert_frame_equal(windowed, june)
    raw = to_frame(client.run(report), request=report.to_request())
    assert len(raw) == 31  # a bare payload keeps everything it holds
    one_day = client.fetch(report.between("2024-06-01", "2024-06-02"))
    assert len(one_day) == 1
    with pytest.raises(er.QueryError, match=r'between\("2024-06-01", "2024-06-02"\)'):
        report.between("2024-06-01", "2024-06-01").to_request()


def test_a_subscriber_not_on_the_account_is_named(sandbox: SandboxHandle) -> None:
    other = next(s for s in sandbox.network.sims if s.account_id != sandbox.account_id)
    mine = sandbox.network.sims_of(sandbox.account_id)[0].msisdn
    report = presets.time_usage_subscriber(
        account_id=sandbox.account_id, msisdn=[mine, other.msisdn], start="2022-06-01",
        end="2022-06-08",
    )  # fmt: skip
    with pytest.warns(er.EmptyResultWarning, match=f"msisdn={other.msisdn}"):
        frame = client_of(sandbox).fetch(report)
    assert set(frame["msisdn"]) == {mine} and len(frame) == 7
    assert frame.attrs["empty"] == [{"msisdn": other.msisdn}]
