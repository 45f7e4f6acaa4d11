"""``er.plot(df, ax=my_axes)`` keeps its legend inside the figure."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg", force=True)

import matplotlib.pyplot as plt
import pytest

import edgereports as er

SAMPLE = Path(__file__).parents[2] / "sample_data" / "06_ue_connections_avg_peak"


@pytest.mark.parametrize("layout", [None, "tight"])
def test_legend_stays_in_a_users_figure(layout: str | None) -> None:
    df = er.to_frame(
        (SAMPLE / "response.json").read_bytes(), json.loads((SAMPLE / "request.json").read_text())
    )
    fig, (_left, right) = plt.subplots(1, 2, figsize=(10, 4), layout=layout)
    try:
        ax = er.plot(df, ax=right)
        legend = ax.get_legend()
        assert legend is not None
        fig.canvas.draw()
        box = legend.get_window_extent().transformed(fig.transFigure.inverted())
        assert box.x0 >= 0 and box.x1 <= 1.0 and box.y0 >= 0 and box.y1 <= 1.0, box
    finally:
        plt.close(fig)


def test_own_figure_keeps_the_legend_beside_the_axes() -> None:
    df = er.to_frame(
        (SAMPLE / "response.json").read_bytes(), json.loads((SAMPLE / "request.json").read_text())
    )
    ax = er.plot(df)
    try:
        legend = ax.get_legend()
        ax.figure.canvas.draw()
        assert legend.get_window_extent().x0 >= ax.get_window_extent().x1
    finally:
        plt.close(ax.figure)
