"""Charts and summaries of a frame compared with several periods; charts of Arrow and polars
frames."""

from __future__ import annotations

from collections.abc import Iterator

import matplotlib

matplotlib.use("Agg", force=True)

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection

import edgereports as er
from edgereports import presets
from edgereports.page import comparison_table, summary_table
from edgereports.plotting import chart_png, plot_timeseries
from edgereports.sandbox import SandboxHandle

PERIODS = ["previous_week", "previous_year_dow"]


@pytest.fixture(scope="module")
def client(sandbox: SandboxHandle) -> Iterator[er.ReportingClient]:
    with er.ReportingClient(sandbox.api_key, sandbox.reporting_url, progress=False) as c:
        yield c
    plt.close("all")


def hours(sandbox: SandboxHandle, client: er.ReportingClient, output: str = "pandas") -> object:
    report = presets.time_usage_enterprise(
        account_id=sandbox.account_id, start="2022-07-04", end="2022-07-06"
    ).granularity("HOUR")
    return client.fetch(report, compare=PERIODS, output=output)  # type: ignore[call-overload]


def test_each_period_is_a_faint_line_of_its_own_dash_named_in_the_legend(
    sandbox: SandboxHandle, client: er.ReportingClient
) -> None:
    df = hours(sandbox, client)
    assert isinstance(df, pd.DataFrame)
    ax = er.plot(df)
    faint = [line for line in ax.get_lines() if (line.get_alpha() or 1) < 1]
    assert [line.get_linestyle() for line in faint] == [":", "--"]
    for line, period in zip(faint, PERIODS, strict=True):
        block = df[df["period"] == period].sort_values("time_stamp")
        assert list(line.get_ydata()) == pytest.approx(list(block["compare_value"] / 3600.0))
    solid = [
        line for line in ax.get_lines() if line.get_alpha() is None and line.get_label()[0] != "_"
    ]
    assert len(solid) == 1 and len(solid[0].get_ydata()) == 48  # this period's hours, once
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"previous week", "previous year, same weekday"} <= set(labels)
    title = ax.get_title()
    assert "previous week 27–28 Jun 2022 (UTC)" in title
    assert "previous year, same weekday 5–6 Jul 2021 (UTC)" in title


def test_several_periods_on_bars_are_dashed_ticks_across_each_bar(
    sandbox: SandboxHandle, client: er.ReportingClient
) -> None:
    msisdns = [s.msisdn for s in sandbox.network.sims_of(sandbox.account_id)][:2]
    report = presets.time_usage_subscriber(
        account_id=sandbox.account_id, msisdn=msisdns, start="2022-07-01", end="2022-07-04"
    )
    df = client.fetch(report, compare=PERIODS)
    ax = er.plot(df)
    ticks = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(ticks) == 2 * 2  # a set of ticks per subscriber and period
    heights = sorted(round(float(seg[0][1]), 6) for c in ticks for seg in c.get_segments())
    assert heights == sorted(round(v / 3600.0, 6) for v in df["compare_value"])
    bars = [p for p in ax.patches if p.get_alpha() is None]
    assert len(bars) == len(df) // 2  # this period's bars once, not once per period


def test_a_partial_bucket_on_either_side_is_an_x_on_the_chart(
    sandbox: SandboxHandle, client: er.ReportingClient
) -> None:
    report = presets.time_usage_enterprise(
        account_id=sandbox.account_id,
        start="2022-07-01T00:00+05:30",
        end="2022-07-08T00:00+05:30",
    )
    with pytest.warns(er.PartialBucketWarning):
        df = client.fetch(report, compare="previous_week")
    ax = plot_timeseries(df, kind="line")
    crosses = [line for line in ax.get_lines() if line.get_marker() == "x"]
    marked = df[df["compare_partial"]]
    assert len(marked) == 2 and len(crosses) == 1
    assert list(crosses[0].get_ydata()) == pytest.approx(list(marked["compare_value"] / 3600.0))
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "partial or provisional (either side)" in labels
    assert "x: a partial or provisional bucket on either side" in ax.get_title()


@pytest.mark.parametrize("output", ["arrow", "polars"])
def test_plot_takes_arrow_and_polars_frames(
    sandbox: SandboxHandle, client: er.ReportingClient, output: str
) -> None:
    frame = hours(sandbox, client)
    other = hours(sandbox, client, output)
    assert not isinstance(other, pd.DataFrame)
    drawn = [er.plot(x) for x in (frame, other)]
    lines = [[tuple(np.asarray(line.get_ydata(), dtype=float)) for line in ax.get_lines()]
             for ax in drawn]  # fmt: skip
    assert lines[0] == lines[1] and drawn[0].get_title() == drawn[1].get_title()
    assert chart_png(other)[:4] == b"\x89PNG"
    with pytest.raises(er.InputError, match=r"plot needs a pandas DataFrame, a pyarrow\.Table"):
        er.plot({"time_stamp": []})  # type: ignore[arg-type]


def test_the_summary_has_a_row_per_series_and_period_like_with_like(
    sandbox: SandboxHandle, client: er.ReportingClient
) -> None:
    df = hours(sandbox, client)
    assert isinstance(df, pd.DataFrame)
    table = comparison_table(df)
    assert list(table["vs"]) == ["previous week", "previous year, same weekday"]
    assert list(table.columns) == ["whose", "metric", "agg", "vs", "compared", "this", "other",
                                   "change"]  # fmt: skip
    assert (table["this"] == table["this"].iloc[0]).all()
    assert len(summary_table(df)) == 1  # this period's series, once
    peaks = presets.ue_connections_avg_peak(
        account_id=sandbox.account_id, start="2022-07-06", end="2022-07-09", granularity="DAY"
    )
    compared = client.fetch(peaks, compare="previous_week")  # today so far: not like for like
    rows = comparison_table(compared)
    assert set(rows["compared"]) == {"mean"}  # MAX and AVG: means, never totals
    for row, (_, part) in zip(rows.itertuples(), compared.groupby("aggregation", sort=False),
                              strict=True):  # fmt: skip
        alike = part[part["change"].notna()]
        assert len(alike) == len(part) - 1 and row.change.endswith(f"({len(alike)} of {len(part)})")
