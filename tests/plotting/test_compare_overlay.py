"""A compared frame's chart draws the other period lighter, and its summary shows the change."""

from __future__ import annotations

from collections.abc import Iterator

import matplotlib

matplotlib.use("Agg", force=True)

import matplotlib.pyplot as plt
import pandas as pd
import pytest

import edgereports as er
from edgereports import presets
from edgereports.page import comparison_table, summary_table
from edgereports.sandbox import SandboxHandle


@pytest.fixture(scope="module")
def frames(sandbox: SandboxHandle) -> Iterator[tuple[pd.DataFrame, pd.DataFrame]]:
    msisdns = [s.msisdn for s in sandbox.network.sims_of(sandbox.account_id)][:2]
    with er.ReportingClient(sandbox.api_key, sandbox.reporting_url, progress=False) as client:
        days = client.fetch(
            presets.time_usage_subscriber(
                account_id=sandbox.account_id, msisdn=msisdns, start="2022-07-01", end="2022-07-08"
            ),
            compare="previous_period",
        )
        hours = client.fetch(
            presets.time_usage_enterprise(
                account_id=sandbox.account_id, start="2022-07-05", end="2022-07-07"
            ).granularity("HOUR"),
            compare="previous_period",
        )
    yield days, hours
    plt.close("all")


def test_bars_of_the_other_period_are_lighter_and_hold_its_values(
    frames: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    days, _ = frames
    ax = er.plot(days)
    light = [p for p in ax.patches if p.get_alpha() is not None and p.get_alpha() < 1]
    solid = [p for p in ax.patches if p.get_alpha() is None]
    assert len(light) == len(solid) == len(days)  # one ghost bar behind each bar
    divisor = 3600.0  # seconds shown as hours
    heights = sorted(round(p.get_height(), 6) for p in light)
    assert heights == sorted(round(v / divisor, 6) for v in days["compare_value"])
    assert "vs 24–30 Jun 2022 (UTC), lighter" in ax.get_title()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "previous period (lighter)" in labels


def test_lines_of_the_other_period_are_dotted_and_faint(
    frames: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    _, hours = frames
    ax = er.plot(hours)
    faint = [line for line in ax.get_lines() if (line.get_alpha() or 1) < 1]
    assert len(faint) == 1 and faint[0].get_linestyle() == ":"
    assert list(faint[0].get_ydata()) == pytest.approx(list(hours["compare_value"] / 3600.0))


def test_the_summary_compares_totals_with_totals_over_the_same_days(
    frames: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    days, _ = frames
    table = comparison_table(days)
    assert list(table.columns) == ["msisdn", "metric", "agg", "compared", "this", "other", "change"]
    assert set(table["compared"]) == {"total"}  # COUNT series: sums, not means
    for row, (_, part) in zip(table.itertuples(), days.groupby("msisdn", sort=False), strict=True):
        now, then = part["value"].sum(), part["compare_value"].sum()
        assert row.this == summary_readable(now) and row.other == summary_readable(then)
        if then:
            assert row.change == f"{(now - then) / then * 100:+.1f}%"
        else:
            assert row.change == ("0.0%" if now == 0 else "new")
    plain = days.drop(columns=["compare_time_stamp", "compare_value", "change", "change_pct"])
    assert comparison_table(plain).empty  # a frame without a comparison: nothing to compare
    assert list(summary_table(days).columns) == list(summary_table(plain).columns)


def summary_readable(seconds: float) -> str:
    """Seconds as the summary prints them (each value in its own unit)."""
    from edgereports.plotting import unit_scale

    return unit_scale("time_usage_seconds", [seconds]).text(seconds)


def test_peak_and_average_draw_the_other_period_faint(sandbox: SandboxHandle) -> None:
    report = presets.ue_connections_avg_peak(
        account_id=sandbox.account_id, start="2022-07-05", end="2022-07-07"
    )
    with er.ReportingClient(sandbox.api_key, sandbox.reporting_url, progress=False) as client:
        df = client.fetch(report, compare="previous_period")
    ax = er.plot(df)
    faint = [line for line in ax.get_lines() if (line.get_alpha() or 1) < 1]
    assert len(faint) == 2 and {line.get_linestyle() for line in faint} == {":"}
    peak = df[df["aggregation"] == "MAX"].sort_values("time_stamp")
    assert list(faint[1].get_ydata()) == list(peak["compare_value"])
    assert ax.get_title().endswith("vs 3–4 Jul 2022 (UTC), lighter")
