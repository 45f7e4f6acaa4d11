"""Presets over the range and buckets the service allows, against the sandbox over loopback.

"Which site peaked each day last week" is ``concurrent_online_ues`` over a range by DAY, and
daily bytes per subscriber is ``byte_usage_subscriber(granularity="DAY")``; the daily buckets
add up to the hourly ones (COUNT is additive).
"""

from __future__ import annotations

import warnings

import edgereports as er
from edgereports import presets
from edgereports.sandbox import SandboxHandle

START, END = "2022-07-01T00:00:00+00:00", "2022-07-04T00:00:00+00:00"


def _client(sb: SandboxHandle) -> er.ReportingClient:
    return er.ReportingClient(sb.api_key, sb.reporting_url, progress=False)


def test_daily_bytes_per_subscriber_add_up_to_the_hours(sandbox: SandboxHandle) -> None:
    msisdn = [s.msisdn for s in sandbox.network.sims_of(sandbox.account_id)[:2]]
    client = _client(sandbox)
    args = {"account_id": sandbox.account_id, "msisdn": msisdn, "start": START, "end": END}
    daily = client.fetch(presets.byte_usage_subscriber(**args, granularity="DAY"))
    hourly = client.fetch(presets.byte_usage_subscriber(**args))
    assert daily.attrs["request"]["granularity"] == "DAY" and len(daily) == 2 * 2 * 3
    assert hourly.attrs["request"]["granularity"] == "HOUR" and len(hourly) == 2 * 2 * 72
    day = daily.assign(day=daily["time_stamp"].dt.floor("D"))
    hours = hourly.assign(day=hourly["time_stamp"].dt.floor("D"))
    keys = ["msisdn", "metric", "day"]
    summed = hours.groupby(keys)["value"].sum()
    assert (day.set_index(keys)["value"].sort_index() == summed.sort_index()).all()


def test_which_site_peaked_each_day(sandbox: SandboxHandle) -> None:
    sites = [
        s.customer_site_id for s in sandbox.network.sites if s.account_id == sandbox.account_id
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error", er.TopTalkerWarning)
        frame = _client(sandbox).fetch(
            presets.concurrent_online_ues(
                account_id=sandbox.account_id,
                customer_site_id=sites,
                start=START,
                end=END,
                granularity="DAY",
            )
        )
    assert er.schema.shape_of(frame) == "timeseries"
    assert sorted(frame["customer_site_id"].unique()) == sorted(sites)
    peaks = frame.loc[frame.groupby("time_stamp")["value"].idxmax(), "customer_site_id"]
    assert len(peaks) == 3 and set(peaks) <= set(sites)


def test_device_status_over_a_range_is_a_series(sandbox: SandboxHandle) -> None:
    imsi = sandbox.network.sims_of(sandbox.account_id)[0].imsi
    frame = _client(sandbox).fetch(
        presets.device_status(
            account_id=sandbox.account_id, imsi=[imsi], start=START, end=END, granularity="DAY"
        )
    )
    assert list(frame["imsi"].unique()) == [imsi] and len(frame) == 3
    assert set(frame["value"]) <= {0.0, 1.0}
