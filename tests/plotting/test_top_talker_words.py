"""A top talker's row says what it is: a COUNT total, or one member's own MAX, MIN or AVG.

Against the sandbox over loopback: the warning, the chart labels and the demo's summary all
say ``total (top talker X)`` for COUNT and ``X only (the top talker; ...)`` for the others,
and the numbers agree (a maximum is one site's, not the account's).
"""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg", force=True)

import matplotlib.pyplot as plt
import pandas as pd
import pytest

import edgereports as er
from edgereports import plotting
from edgereports.demo import summary_table
from edgereports.sandbox import SandboxHandle

ONLY = "only (the top talker; other members not shown)"


def _fetch(sb: SandboxHandle, report: er.Report) -> tuple[pd.DataFrame, str]:
    client = er.ReportingClient(sb.api_key, sb.reporting_url, progress=False)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", er.TopTalkerWarning)
        frame = client.fetch(report)
    said = [str(w.message) for w in seen if issubclass(w.category, er.TopTalkerWarning)]
    assert len(said) == 1
    return frame, said[0]


def _sites(sb: SandboxHandle) -> list[str]:
    return [s.customer_site_id for s in sb.network.sites if s.account_id == sb.account_id]


def test_a_maximum_by_an_unpinned_site_is_the_top_talkers_own(sandbox: SandboxHandle) -> None:
    report = (
        er.Report(account_id=sandbox.account_id)
        .now()
        .by("customer_site_id")
        .metric("ue_connections", "MAX")
    )
    frame, said = _fetch(sandbox, report)
    assert "a MAX row is the value of one customer_site_id only" in said and "total of" not in said
    site = str(frame["customer_site_id"].iloc[0])
    per_site = _fetch_pinned(sandbox, report, _sites(sandbox))
    # the row is the top talker's own maximum: the value of its site, not the account's
    assert frame["value"].iloc[0] == per_site.loc[site]
    ax = plotting.plot_current(frame)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [f"{site} {ONLY}"]
    assert "total" not in ax.get_title() and "top talker's own value" in ax.get_title()
    plt.close(ax.figure)
    row = summary_table(frame).iloc[0]
    assert row["customer_site_id"] == f"{site} {ONLY}"


def _fetch_pinned(sb: SandboxHandle, report: er.Report, sites: list[str]) -> pd.Series:
    client = er.ReportingClient(sb.api_key, sb.reporting_url, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", er.TopTalkerWarning)
        frame = client.fetch(report.where(customer_site_id=sites))
    return frame.set_index("customer_site_id")["value"]


def test_a_count_by_an_unpinned_site_is_a_total(sandbox: SandboxHandle) -> None:
    report = (
        er.Report(account_id=sandbox.account_id)
        .now()
        .by("customer_site_id")
        .metric("ue_connections", "COUNT")
    )
    frame, said = _fetch(sandbox, report)
    assert "a COUNT row is the total of the whole scope" in said and "MAX" not in said
    per_site = _fetch_pinned(sandbox, report, _sites(sandbox))
    assert frame["value"].iloc[0] == per_site.sum()
    site = str(frame["customer_site_id"].iloc[0])
    ax = plotting.plot_current(frame)
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"total (top talker {site})"]
    plt.close(ax.figure)


@pytest.mark.parametrize("agg", ["MAX", "COUNT"])
def test_a_series_legend_names_a_top_talker_by_its_aggregation(
    sandbox: SandboxHandle, agg: str
) -> None:
    report = (
        er.Report(account_id=sandbox.account_id)
        .between("2022-07-01", "2022-07-05")
        .granularity("DAY")
        .by("msisdn")
        .metric("uplink_bytes", agg)
        .metric("downlink_bytes", agg)
    )
    frame, _ = _fetch(sandbox, report)
    who = str(frame["msisdn"].iloc[0])
    ax = plotting.plot_timeseries(frame)
    text = ax.get_title()
    want = f"total (top talker {who})" if agg == "COUNT" else f"{who} {ONLY}"
    assert want in text
    assert ("total" in text) == (agg == "COUNT")
    plt.close(ax.figure)
