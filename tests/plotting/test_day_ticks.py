"""Daily charts with several series (lines) name their days as the one-series bars do."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg", force=True)

import matplotlib.pyplot as plt
import pytest

import edgereports as er
from edgereports import plotting, presets
from edgereports.sandbox import SandboxHandle

S, E = "2022-07-01T00:00:00+05:30", "2022-07-06T00:00:00+05:30"
DAYS = ["30 Jun", "1 Jul", "2 Jul", "3 Jul", "4 Jul", "5 Jul"]  # UTC days, shown in +05:30


@pytest.mark.parametrize("subscribers", [1, 3])
def test_daily_ticks_are_dates_for_bars_and_lines(sandbox: SandboxHandle, subscribers: int) -> None:
    sims = sandbox.network.sims_of(sandbox.account_id)[:subscribers]
    client = er.ReportingClient(sandbox.api_key, sandbox.reporting_url, progress=False)
    frame = client.fetch(
        presets.byte_usage_subscriber(
            account_id=sandbox.account_id,
            msisdn=[s.msisdn for s in sims],
            start=S,
            end=E,
            granularity="DAY",
        )
    )
    ax = plotting.plot(frame)
    ax.figure.canvas.draw()
    assert (len(ax.lines) > 0) == (subscribers == 3)  # several series: lines, one: bars
    assert [t.get_text() for t in ax.get_xticklabels()] == DAYS
    assert ax.get_xlabel() == "UTC day (times in UTC+05:30), 2022"
    plt.close(ax.figure)


def test_daily_peak_and_average_ticks_are_dates(sandbox: SandboxHandle) -> None:
    client = er.ReportingClient(sandbox.api_key, sandbox.reporting_url, progress=False)
    frame = client.fetch(
        presets.ue_connections_avg_peak(
            account_id=sandbox.account_id, start=S, end=E, granularity="DAY"
        )
    )
    ax = plotting.plot(frame)
    ax.figure.canvas.draw()
    assert [t.get_text() for t in ax.get_xticklabels()] == DAYS
    plt.close(ax.figure)
