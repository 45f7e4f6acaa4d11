"""The explorer's Health tab: flags of the known subscribers, and drawn on later charts."""

from __future__ import annotations

from datetime import date

import matplotlib

matplotlib.use("Agg", force=True)

from edgereports.inventory import Inventory
from edgereports.reporting import ReportingClient
from edgereports.sandbox import serve
from edgereports.widgets import Explorer

DROPPED = "917225457202"
INCIDENT = {"kind": "usage_drop", "subject": DROPPED, "start": "2024-03-10T00:00:00+00:00",
            "hours": 48}  # fmt: skip


def test_check_health_shows_the_flags_and_charts_draw_them() -> None:
    with (
        serve(seed=0, clock="2024-03-15T12:00:00+05:30", incidents=[INCIDENT]) as sb,
        ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client,
    ):
        numbers = [s.msisdn for s in sb.network.sims_of(sb.account_id)]
        explorer = Explorer(client, account_id=sb.account_id, values={"msisdn": numbers},
                            start=date(2024, 3, 8), end=date(2024, 3, 15), tz="+05:30")  # fmt: skip
        assert explorer.outputs.titles[3] == "Health"
        explorer.health_button.click()
        assert explorer.error is None, explorer.message
        assert explorer.flags is not None
        assert explorer.flags.kind.tolist() == ["usage_drop"]
        assert explorer.message == f"0 episode(s) and 1 flag(s) over {len(numbers)} subscriber(s)"
        assert "Judged from a partial list" in explorer.health.value
        assert "usage_drop" in explorer.health.value and DROPPED in explorer.health.value
        assert explorer.outputs.selected_index == 3
        explorer.preset.value = "byte_usage_subscriber"
        explorer.dimensions["msisdn"].value = [DROPPED]
        explorer.run_button.click()
        assert explorer.error is None, explorer.message
        assert bytes(explorer.chart.value).startswith(b"\x89PNG")
        explorer.range.value = "LAST DAY"  # a service keyword: no range to judge
        explorer.health_button.click()
        assert explorer.message.startswith("InputError: start must be a date")


def test_an_explorer_with_the_inventory_lists_the_episodes_first() -> None:
    dark = {"kind": "enodeb_dark", "subject": "10.10.3.2", "start": "2024-03-10T02:00:00+00:00",
            "hours": 10}  # fmt: skip
    with (
        serve(seed=0, clock="2024-03-15T12:00:00+05:30", incidents=[dark]) as sb,
        ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client,
    ):
        explorer = Explorer(client, account_id=sb.account_id, start=date(2024, 3, 8),
                            end=date(2024, 3, 15), tz="+05:30",
                            inventory=Inventory.from_sandbox(sb))  # fmt: skip
        explorer.health_button.click()
        assert explorer.error is None, explorer.message
        assert explorer.message == "1 episode(s) and 1 flag(s) over 64 subscriber(s)"
        shown = explorer.health.value
        assert shown.index("health-episodes") < shown.index("health-flags")
        assert "eNodeB 10.10.3.2 at site HYD-1004: 4 of 4 active devices offline" in shown
        assert "2024-03-10 07:30+05:30" in shown  # times in the explorer's zone
