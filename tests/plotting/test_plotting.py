"""Charts over the frames of the hand-written samples: units, zones, labels, layout, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg", force=True)

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes

from edgereports import plotting
from edgereports.errors import InputError
from edgereports.normalize import to_frame
from edgereports.schema import CURRENT, TIMESERIES

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"

# sample → the chart that suits it (decided by hand from each sample's request)
CHARTS = {
    "01_time_usage_enterprise": "plot_timeseries",
    "02_time_usage_subscriber": "plot_timeseries",
    "03_byte_usage_subscriber": "plot_timeseries",
    "04_realtime_bandwidth": "plot_current",
    "05_bandwidth_percentile": "plot_percentiles",
    "06_ue_connections_avg_peak": "plot_ue_connections",
    "07_active_sim_count": "plot_sim_count",
    "08_ue_connections_subscriber": "plot_timeseries",
    "09_ue_connections_enterprise": "plot_timeseries",
    "10_concurrent_online_ues": "plot_current",
    "11_device_status": "plot_device_status",
    "11b_device_status_numeric": "plot_device_status",
    "12_empty_time_usage_subscriber": "plot_timeseries",
}


def sample(name: str) -> pd.DataFrame:
    """The frame of one sample, through the real normalizer."""
    case = SAMPLES / name
    request = json.loads((case / "request.json").read_text())
    return to_frame(json.loads((case / "response.json").read_text()), request=request)


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


def assert_readable(ax: Axes) -> None:
    """Title set, tick labels of each axis disjoint, legend outside the plotting area."""
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    assert ax.get_title().strip()
    for axis in (ax.xaxis, ax.yaxis):
        boxes = [
            t.get_window_extent(renderer)
            for t in axis.get_ticklabels()
            if t.get_visible() and t.get_text().strip()
        ]
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                assert not a.overlaps(b), f"tick labels overlap on {axis.axis_name}: {a} {b}"
    legend = ax.get_legend()
    if legend is not None:
        assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_every_sample_gets_its_chart_and_renders_readably(name: str, tmp_path: Path) -> None:
    df = sample(name)
    assert plotting.chart_for(df).__name__ == CHARTS[name]
    ax = plotting.plot(df)
    assert isinstance(ax, Axes)
    assert_readable(ax)
    empty = [t.get_text() for t in ax.texts] == ["No data for this report"]
    if ax.axison and not empty:  # the tile panel has no axes to label
        assert ax.get_xlabel() and ax.get_ylabel()
    out = tmp_path / f"{name}.png"
    ax.figure.savefig(out)
    assert out.stat().st_size > 5_000


@pytest.mark.parametrize(
    ("metric", "top", "unit", "divisor"),
    [
        ("downlink_bytes", 999.0, "bytes", 1.0),
        ("downlink_bytes", 22_196.5, "KB", 1e3),
        ("uplink_bytes", 2_500_000.0, "MB", 1e6),
        ("uplink_bytes", 3.2e9, "GB", 1e9),
        ("uplink_bytes", 4e12, "TB", 1e12),
        ("time_usage_seconds", 119.0, "seconds", 1.0),
        ("time_usage_seconds", 120.0, "minutes", 60.0),
        ("time_usage_seconds", 7_200.0, "hours", 3600.0),
        ("time_usage_seconds", 9_000_000.0, "hours", 3600.0),
        ("downlink_bandwidth", 512.0, "bps", 1.0),
        ("downlink_bandwidth", 1_520.0, "kbps", 1e3),
        ("uplink_bandwidth", 12_000_000.0, "Mbps", 1e6),
        ("uplink_bandwidth", 2e9, "Gbps", 1e9),
        ("ue_connections", 1e6, "", 1.0),
        ("jitter", 5.0, "", 1.0),
    ],
)
def test_unit_scale_picks_a_readable_unit(
    metric: str, top: float, unit: str, divisor: float
) -> None:
    scale = plotting.unit_scale(metric, [0.0, top, float("nan")])
    assert (scale.unit, scale.divisor) == (unit, divisor)


def test_byte_usage_is_drawn_in_kilobytes_in_the_reports_offset() -> None:
    df = sample("03_byte_usage_subscriber")
    ax = plotting.plot(df)
    assert ax.get_ylabel() == "Bytes (KB)"
    assert ax.get_xlabel() == "Time (UTC+05:30)"
    lines = {line.get_label(): line for line in ax.get_lines()}
    down = lines["Downlink bytes"]
    # expected.csv of the sample: 22196.5, 40960, 1536, 8192 bytes from 04:00Z hourly
    np.testing.assert_allclose(down.get_ydata(), [22.1965, 40.96, 1.536, 8.192])
    first = mdates.num2date(float(down.get_xdata()[0]), tz=UTC)
    assert first.isoformat() == "2022-07-07T04:00:00+00:00"
    assert "for MSISDN 919876543210" in ax.get_title()


@pytest.mark.parametrize("tz", ["UTC", "+05:30", "-04:00", "Asia/Kolkata"])
def test_time_ticks_are_labelled_in_the_chosen_zone(tz: str) -> None:
    df = sample("06_ue_connections_avg_peak")
    ax = plotting.plot(df, tz=tz)
    ax.figure.canvas.draw()
    zone = plotting._common.resolve_tz(tz, df)
    checked = 0
    for loc, label in zip(ax.get_xticks(), ax.get_xticklabels(), strict=True):
        text = label.get_text()
        if len(text) == 5 and text[2] == ":":
            assert mdates.num2date(loc, tz=zone).strftime("%H:%M") == text
            checked += 1
    assert checked >= 2
    assert (
        ax.get_xlabel()
        == {
            "UTC": "Time (UTC)",
            "+05:30": "Time (UTC+05:30)",
            "-04:00": "Time (UTC-04:00)",
            "Asia/Kolkata": "Time (Asia/Kolkata)",
        }[tz]
    )


def test_daily_bars_are_labelled_with_their_days() -> None:
    ax = plotting.plot(sample("01_time_usage_enterprise"))
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["7 Jul", "8 Jul", "9 Jul", "10 Jul"]
    # buckets are UTC days: in +05:30 each straddles two local days, and the axis says so
    assert ax.get_xlabel() == "UTC day (times in UTC+05:30), 2022"
    assert ax.get_ylabel() == "Time usage (hours)"


def test_sim_counts_are_stacked_physical_under_esim() -> None:
    df = sample("07_active_sim_count")
    ax = plotting.plot(df)
    physical, esim = ax.containers
    heights = [p.get_height() for p in physical]
    bottoms = [p.get_y() for p in esim]
    assert heights == bottoms == [float(v) for v in df["physical"]]
    assert [p.get_height() for p in esim] == [float(v) for v in df["esim"]]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["7 Jul", "8 Jul", "9 Jul"]


def test_percentiles_one_point_per_site_become_bars_with_units() -> None:
    rows = [
        ("BLR-1001", "uplink_bandwidth", 2_400_000.0),
        ("BLR-1001", "downlink_bandwidth", 9_100_000.0),
        ("MUM-1002", "uplink_bandwidth", 800_000.0),
        ("MUM-1002", "downlink_bandwidth", 3_000_000.0),
    ]
    df = TIMESERIES.validate(
        pd.DataFrame(
            {
                "time_stamp": pd.Timestamp("2022-07-06T18:30:00Z"),
                "account_id": "A",
                "customer_site_id": [r[0] for r in rows],
                "metric": [r[1] for r in rows],
                "aggregation": None,
                "percentile": 95.0,
                "value": [r[2] for r in rows],
            }
        )
    )
    df.attrs["request"] = {
        "start_date_time": "2022-07-07T00:00:00+05:30",
        "end_date_time": "2022-07-08T00:00:00+05:30",
        "dimensions": ["customer_site_id"],
        "metrics": [],
    }
    assert plotting.chart_for(df) is plotting.plot_percentiles
    ax = plotting.plot(df)
    assert_readable(ax)
    assert ax.get_xlabel() == "Bandwidth (Mbps)"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["BLR-1001", "MUM-1002"]
    up, down = ax.containers
    assert [round(b.get_width(), 6) for b in up] == [2.4, 0.8]
    assert [round(b.get_width(), 6) for b in down] == [9.1, 3.0]
    texts = {t.get_text() for t in ax.texts}
    assert {"2.40 Mbps", "9.10 Mbps", "800 kbps"} <= texts or {"2.40 Mbps", "9.10 Mbps"} <= texts
    assert "95th percentile per customer site" in ax.get_title()


def _devices(statuses: list[tuple[str, str, Any]]) -> pd.DataFrame:
    df = CURRENT.validate(
        pd.DataFrame(
            {
                "start_time": pd.Timestamp("2022-07-08T04:15:00Z"),
                "end_time": pd.Timestamp("2022-07-08T04:20:00Z"),
                "account_id": "A",
                "enodeb_ip": [s[0] for s in statuses],
                "ue_ip": [s[1] for s in statuses],
                "metric": "ue_online_status",
                "aggregation": "EXISTS",
                "value": [s[2] for s in statuses],
                "value_text": None,
            }
        )
    )
    df.attrs["shape"] = "current"
    return df


def test_device_status_counts_online_devices_per_enodeb() -> None:
    df = _devices(
        [
            ("10.0.0.2", "100.64.0.9", 0.0),
            ("10.0.0.10", "100.64.0.3", 1.0),
            ("10.0.0.2", "100.64.0.10", 1.0),
            ("10.0.0.2", "100.64.0.1", 1.0),
        ]
    )
    ax = plotting.plot(df)
    assert_readable(ax)
    assert ax.get_title().startswith("Device status now: 3 of 4 online")
    # rows sorted numerically by eNodeB IP, cells by UE IP: .1 online, .9 offline, .10 online
    assert [t.get_text() for t in ax.get_yticklabels()] == ["10.0.0.2", "10.0.0.10"]
    grid = ax.get_images()[0].get_array()
    assert grid[0].tolist() == [2.0, 1.0, 2.0]
    assert grid[1].tolist()[0] == 2.0 and bool(grid.mask[1, 1])


def test_realtime_values_become_tiles_with_units() -> None:
    ax = plotting.plot(sample("04_realtime_bandwidth"))
    texts = [t.get_text() for t in ax.texts]
    # response.json: uplink 1520, downlink 8840 bits per second
    assert "1.52 kbps" in texts and "8.84 kbps" in texts
    # whose value (the account's total over its devices) and over what (a time average)
    assert "Uplink bandwidth\naccount total (all devices), time average" in texts


def test_an_empty_frame_says_so() -> None:
    ax = plotting.plot(sample("12_empty_time_usage_subscriber"))
    assert [t.get_text() for t in ax.texts] == ["No data for this report"]
    assert ax.get_title().startswith("Time usage per day by MSISDN")


def test_many_series_keep_the_largest_and_say_so() -> None:
    stamps = pd.date_range("2022-07-07T00:00Z", periods=3, freq="D")
    frames = [
        pd.DataFrame(
            {
                "time_stamp": stamps,
                "account_id": "A",
                "msisdn": f"9190000000{i:02d}",
                "metric": "ue_connections",
                "aggregation": "COUNT",
                "percentile": None,
                "value": float(i + 1),
            }
        )
        for i in range(12)
    ]
    df = TIMESERIES.validate(pd.concat(frames, ignore_index=True))
    ax = plotting.plot_timeseries(df, max_series=10)
    assert len(ax.get_lines()) == 10
    assert "(largest 10 of 12)" in ax.get_title()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "919000000000" not in labels and "919000000011" in labels  # the two smallest dropped
    assert_readable(ax)


def test_draws_into_a_given_axes() -> None:
    _fig, (left, right) = plt.subplots(1, 2, figsize=(14, 4), layout="constrained")
    ax = plotting.plot(sample("07_active_sim_count"), ax=right, title="SIMs")
    assert ax is right and ax.get_title() == "SIMs"
    assert not left.has_data()


def _mixed() -> pd.DataFrame:
    a = sample("01_time_usage_enterprise")
    b = sample("09_ue_connections_enterprise")
    df = pd.concat([a, b], ignore_index=True)
    df.attrs = dict(a.attrs)
    return df


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: plotting.plot([1, 2]),
            "plot needs a pandas DataFrame, a pyarrow.Table or a polars DataFrame, got list",
        ),
        (
            lambda: plotting.plot_sim_count(sample("01_time_usage_enterprise")),
            "plot_sim_count plots sim_count frames, got a timeseries frame",
        ),
        (
            lambda: plotting.plot(sample("01_time_usage_enterprise"), tz="Mars/Olympus"),
            "unknown time zone 'Mars/Olympus'",
        ),
        (
            lambda: plotting.plot(sample("01_time_usage_enterprise"), tz="+5:3x"),
            "tz '+5:3x' is not an offset such as '+05:30'",
        ),
        (
            lambda: plotting.plot_timeseries(sample("01_time_usage_enterprise"), kind="pie"),
            "kind must be 'auto', 'line' or 'bar', got 'pie'",
        ),
        (
            lambda: plotting.plot_timeseries(sample("01_time_usage_enterprise"), metrics=["x"]),
            "metric(s) x not in the frame; it has time_usage_seconds",
        ),
        (
            lambda: plotting.plot_timeseries(_mixed()),
            "the frame mixes units (count, seconds); plot one kind at a time with metrics=[...]",
        ),
        (
            lambda: plotting.plot_ue_connections(sample("09_ue_connections_enterprise")),
            "plot_ue_connections needs ue_connections with MAX and AVG; MAX and AVG missing",
        ),
        (
            lambda: plotting.plot(pd.DataFrame({"a": [1]})),
            "cannot tell the shape of a frame with columns ['a']",
        ),
    ],
)
def test_bad_input_is_a_clear_input_error(call: Any, message: str) -> None:
    with pytest.raises(InputError) as info:
        call()
    assert message in str(info.value)


def test_a_mixed_frame_plots_one_metric_at_a_time() -> None:
    ax = plotting.plot_timeseries(_mixed(), metrics=["ue_connections"])
    assert ax.get_ylabel() == "UE connections (5-minute samples)"  # COUNT: samples


def test_importing_plotting_does_not_import_matplotlib() -> None:
    code = "import sys, edgereports.plotting; print('matplotlib' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"


def test_a_frame_without_its_request_gets_its_buckets_from_the_stamps() -> None:
    df = sample("02_time_usage_subscriber")
    df.attrs = {"shape": "timeseries"}  # e.g. read back from an export
    ax = plotting.plot(df)
    assert ax.get_title().startswith("Time usage per day for MSISDN")
    assert ax.get_xlabel() == "Day (UTC), 2022"
    assert len(ax.patches) == len(df)  # one bar per daily bucket
