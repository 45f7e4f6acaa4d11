"""``er.plot(df, flags=...)``: health flags drawn on the charts they concern."""

from __future__ import annotations

from collections.abc import Iterator

import matplotlib

matplotlib.use("Agg", force=True)

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.colors import to_hex

import edgereports as er
from edgereports.plotting._flags import FLAG_COLOURS
from edgereports.sandbox import SandboxHandle, serve

DROPPED, SITE = "917225457202", "CHE-1005"
INCIDENTS = [
    {"kind": "usage_drop", "subject": DROPPED, "start": "2024-03-10T00:00:00+00:00", "hours": 48},
    {"kind": "site_dark", "subject": SITE, "start": "2024-03-12T04:00:00+00:00", "hours": 6},
]
WEEK = ("2024-03-08T00:00:00+00:00", "2024-03-15T00:00:00+00:00")


@pytest.fixture(scope="module")
def sb() -> Iterator[SandboxHandle]:
    with serve(seed=0, clock="2024-03-15T12:00:00+05:30", incidents=INCIDENTS) as handle:
        yield handle


@pytest.fixture(scope="module")
def flags(sb: SandboxHandle) -> pd.DataFrame:
    numbers = [s.msisdn for s in sb.network.sims_of(sb.account_id)]
    with er.ReportingClient(sb.api_key, sb.reporting_url) as client:
        return er.health(
            client, account_id=sb.account_id, msisdn=numbers, start=WEEK[0], end=WEEK[1]
        )


def _fetch(sb: SandboxHandle, report: er.Report) -> pd.DataFrame:
    with er.ReportingClient(sb.api_key, sb.reporting_url) as client:
        return client.fetch(report)


@pytest.fixture(autouse=True)
def _close() -> Iterator[None]:
    yield
    plt.close("all")


def _spans(ax: object) -> list[str]:
    return [t.get_text() for t in ax.texts]  # type: ignore[attr-defined]


def test_a_subscribers_chart_shows_its_own_flag_only(
    sb: SandboxHandle, flags: pd.DataFrame
) -> None:
    assert sorted(flags.kind) == ["site_dark", "usage_drop"]
    mine = er.presets.byte_usage_subscriber(
        account_id=sb.account_id, msisdn=[DROPPED], start=WEEK[0], end=WEEK[1]
    )
    ax = er.plot(_fetch(sb, mine), flags=flags)
    assert _spans(ax) == ["usage_drop"]
    shaded = [p for p in ax.patches if to_hex(p.get_facecolor()) == FLAG_COLOURS["usage_drop"]]
    assert len(shaded) == 1
    left, right = ax.get_xlim()
    span = shaded[0].get_extents()  # drawn inside the axis, which kept its limits
    assert span.width > 0 and (left, right) == ax.get_xlim()
    other = next(s.msisdn for s in sb.network.sims_of(sb.account_id) if s.msisdn != DROPPED)
    theirs = er.presets.byte_usage_subscriber(
        account_id=sb.account_id, msisdn=[other], start=WEEK[0], end=WEEK[1]
    )
    assert _spans(er.plot(_fetch(sb, theirs), flags=flags)) == []


def test_a_sites_chart_and_the_accounts_chart(sb: SandboxHandle, flags: pd.DataFrame) -> None:
    site = (
        er.Report(account_id=sb.account_id)
        .between("2024-03-11", "2024-03-14")
        .granularity("HOUR")
        .by("customer_site_id")
        .where(customer_site_id=[SITE])
        .metric("time_usage_seconds", "COUNT")
    )
    assert _spans(er.plot(_fetch(sb, site), flags=flags)) == ["site_dark"]
    account = er.presets.time_usage_enterprise(account_id=sb.account_id, start=WEEK[0], end=WEEK[1])
    shown = _spans(er.plot(_fetch(sb, account), flags=flags))
    assert shown == [f"usage_drop {DROPPED}", f"site_dark {SITE}"]


def test_flags_need_a_flags_frame_and_a_time_axis(sb: SandboxHandle, flags: pd.DataFrame) -> None:
    account = er.presets.time_usage_enterprise(account_id=sb.account_id, start=WEEK[0], end=WEEK[1])
    with pytest.raises(er.InputError, match=r"flags= takes the frame er\.health returns"):
        er.plot(_fetch(sb, account), flags=pd.DataFrame({"kind": ["x"]}))
    now = _fetch(sb, er.presets.realtime_bandwidth(account_id=sb.account_id))
    with pytest.raises(er.InputError, match="flags= needs a chart with a time axis"):
        er.plot(now, flags=flags)
