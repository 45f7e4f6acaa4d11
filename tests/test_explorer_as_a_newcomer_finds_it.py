"""The explorer as a newcomer finds it: granularity per preset, the dates of a relative range,
times in the charts' zone, short error messages, a clear error for an unknown value."""

from __future__ import annotations

from datetime import date

import matplotlib

matplotlib.use("Agg", force=True)

import pytest

from edgereports.errors import InputError
from edgereports.sandbox import SandboxHandle
from edgereports.widgets import Explorer
from tests.conftest import SANDBOX_NOW
from tests.test_widgets import client, explorer, known_values  # noqa: F401  (fixtures)


def test_a_granularity_does_not_carry_over_to_the_next_preset(
    explorer: Explorer,  # noqa: F811
) -> None:
    explorer.preset.value = "byte_usage_subscriber"
    explorer.granularity.value = "DAY"
    assert explorer.report().to_request()["granularity"] == "DAY"
    explorer.preset.value = "ue_connections_avg_peak"
    assert explorer.granularity.value == "preset default"
    assert explorer.report().to_request()["granularity"] == "HOUR"  # the preset's own


def test_a_relative_range_shows_its_days_in_the_disabled_pickers(
    explorer: Explorer,  # noqa: F811
) -> None:
    # the sandbox's clock is SANDBOX_NOW (2022-07-08, +05:30): the range is on the service's clock
    assert SANDBOX_NOW.startswith("2022-07-08")
    explorer.preset.value = "time_usage_enterprise"
    explorer.range.value = "7d"
    assert explorer.start.disabled and explorer.end.disabled
    request = explorer.report().to_request()
    assert (explorer.start.value, explorer.end.value) == (date(2022, 7, 1), date(2022, 7, 8))
    assert request["start_date_time"].startswith(explorer.start.value.isoformat())
    assert request["end_date_time"].startswith(explorer.end.value.isoformat())
    explorer.range.value = "30d"
    assert explorer.start.value == date(2022, 6, 8)


def test_the_table_shows_times_in_the_zone_of_the_chart(explorer: Explorer) -> None:  # noqa: F811
    explorer.preset.value = "time_usage_enterprise"
    explorer.run_button.click()
    assert explorer.error is None, explorer.message
    assert "+05:30" in explorer.table.value and "+00:00" not in explorer.table.value


def test_a_service_error_is_one_short_line(
    explorer: Explorer,  # noqa: F811
    sandbox: SandboxHandle,
) -> None:
    explorer.preset.value = "time_usage_enterprise"
    explorer.account.value = "nope"
    explorer.run_button.click()
    assert explorer.message == (
        "NotFoundError: HTTP 404: unknown account_id 'nope' (field dimension_filter_clauses)"
    )
    assert "http" not in explorer.status.value and "{" not in explorer.message


def test_a_value_not_given_to_the_explorer_is_a_clear_error(
    explorer: Explorer,  # noqa: F811
) -> None:
    with pytest.raises(InputError, match=r"msisdn: '123' is not one of the values the explorer"):
        explorer.dimensions["msisdn"].value = ["123"]
    given = explorer.dimensions["msisdn"].allowed_tags[:2]
    explorer.dimensions["msisdn"].value = given
    assert explorer.dimensions["msisdn"].value == given


def test_a_top_talkers_row_says_total_in_the_header_and_the_table(
    explorer: Explorer,  # noqa: F811
) -> None:
    explorer.preset.value = "concurrent_online_ues"  # ue_connections COUNT
    explorer.dimensions["customer_site_id"].value = []  # no site: one row, the top talker
    explorer.run_button.click()
    assert explorer.error is None, explorer.message
    assert "a COUNT row is the total of the whole scope" in explorer.message
    site = str(explorer.frame["customer_site_id"].iloc[0])  # type: ignore[index]
    assert f"total (top talker {site})" in explorer.table.value
