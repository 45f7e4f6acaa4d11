"""The explorer: the Request tab on Run, the progress bar after an error,
the axis of a LAST ... chart in the explorer's zone, relative ranges."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import matplotlib

matplotlib.use("Agg", force=True)

import pytest

import edgereports.plotting
from edgereports.sandbox import SandboxHandle
from edgereports.widgets import Explorer
from tests.test_widgets import client, explorer, known_values  # noqa: F401  (fixtures)


def test_run_fills_the_request_tab(explorer: Explorer) -> None:  # noqa: F811
    explorer.preset.value = "time_usage_enterprise"
    explorer.run_button.click()
    assert explorer.error is None, explorer.message
    shown = explorer.request_text.value
    request = json.loads(shown.split("\n\n# the same report in Python")[0])
    assert request == explorer.frame.attrs["request"]  # type: ignore[union-attr]
    assert "er.presets.time_usage_enterprise(" in shown


def test_an_error_leaves_no_full_green_bar(explorer: Explorer) -> None:  # noqa: F811
    explorer.preset.value = "time_usage_subscriber"
    explorer.run_button.click()
    assert (explorer.progress.value, explorer.progress.bar_style) == (1, "success")
    explorer.dimensions["msisdn"].value = []
    explorer.run_button.click()
    assert "msisdn" in explorer.message
    assert explorer.progress.value == 0 and explorer.progress.bar_style != "success"
    assert explorer.progress.layout.visibility == "hidden"


def test_a_last_day_chart_is_in_the_explorer_zone(
    explorer: Explorer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    labels: list[str] = []
    real = edgereports.plotting.plot

    def spy(df: Any, **kwargs: Any) -> Any:
        ax = real(df, **kwargs)
        labels.append(ax.get_xlabel())
        return ax

    monkeypatch.setattr(edgereports.plotting, "plot", spy)
    explorer.preset.value = "ue_connections_avg_peak"
    explorer.range.value = "LAST DAY"
    explorer.run_button.click()
    assert explorer.error is None, explorer.message
    assert labels and "+05:30" in labels[0], labels


def test_a_relative_range(
    explorer: Explorer,  # noqa: F811
    sandbox: SandboxHandle,
) -> None:
    """7d counts back from the service's today (8 July 2022), not this machine's."""
    explorer.preset.value = "time_usage_enterprise"
    explorer.range.value = "7d"
    assert explorer.start.disabled
    request = explorer.report().to_request()
    assert request["start_date_time"] == "2022-07-01T00:00:00+05:30"
    assert request["end_date_time"] == "2022-07-08T00:00:00+05:30"
    explorer.run_button.click()
    assert explorer.error is None, explorer.message


def test_default_dates_are_the_service_week(client: Any) -> None:  # noqa: F811
    """Without dates, the pickers show the seven days before the service's today."""
    shown = Explorer(client, account_id="A", tz="+05:30")
    assert (shown.start.value, shown.end.value) == (date(2022, 7, 1), date(2022, 7, 8))
