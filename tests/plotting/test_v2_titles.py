"""v2 metric names read as words, with their acronyms kept (against the sandbox over loopback)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg", force=True)

import matplotlib.pyplot as plt

import edgereports as er
from edgereports import plotting, presets
from edgereports.sandbox import SandboxHandle


def test_a_v2_chart_says_ue_session_not_ue_session(sandbox: SandboxHandle) -> None:
    client = er.ReportingClient(
        sandbox.api_key, sandbox.reporting_url, api_version="v2", progress=False
    )
    frame = client.fetch(
        presets.ue_session_bytes(
            account_id=sandbox.account_id,
            start="2022-07-01T00:00:00Z",
            end="2022-07-03T00:00:00Z",
            granularity="DAY",
        )
    )
    ax = plotting.plot(frame)
    title = ax.get_title()
    assert title.startswith("UE session uplink and UE session downlink bytes"), title
    assert "Ue " not in title and " ue " not in title
    plt.close(ax.figure)


def test_a_v2_edge_points_chart_says_whose_value_it_is(sandbox: SandboxHandle) -> None:
    client = er.ReportingClient(
        sandbox.api_key, sandbox.reporting_url, api_version="v2", progress=False
    )
    site = next(s.customer_site_id for s in sandbox.network.sites)
    frame = client.fetch(
        presets.ue_session_bytes(
            account_id=sandbox.account_id,
            device=[site],
            start="2022-07-01T00:00:00Z",
            end="2022-07-03T00:00:00Z",
            granularity="DAY",
        )
    )
    ax = plotting.plot(frame)
    assert f"Edge Point {site}" in ax.get_title() and "account total" not in ax.get_title()
    plt.close(ax.figure)
