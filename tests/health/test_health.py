"""``er.health`` against a sandbox with one incident of each kind injected (loopback HTTP)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import edgereports as er
from edgereports.health import KINDS, flags_html, flags_table
from edgereports.sandbox import SandboxHandle, build_network, serve

CLOCK = "2024-03-15T12:00:00+05:30"
START, END = "2024-02-15T00:00:00+05:30", "2024-03-15T00:00:00+05:30"
NET = build_network(0, 64)
ACCOUNT = NET.primary_account_id
SIMS = {s.msisdn: s for s in NET.sims_of(ACCOUNT)}
DEVICES = [d for d in NET.devices if d.account_id == ACCOUNT]
NUMBERS = [s.msisdn for s in NET.sims_of(ACCOUNT)]
DARK_SITE, DARK_CELL = "CHE-1005", "10.10.3.2"  # a site; an eNodeB of HYD-1004 (it has three)
CAMERA, HANDSET, GATEWAY = "917226234734", "919028828598", "917225457202"
SPIKED, IDLE, GONE = "919841739130", "917224036185", "917775035851"
CASES = [  # kind, subject, start (UTC), hours
    ("site_dark", DARK_SITE, datetime(2024, 2, 20, 3, tzinfo=UTC), 8),
    ("enodeb_dark", DARK_CELL, datetime(2024, 3, 8, 6, tzinfo=UTC), 10),
    ("device_offline", CAMERA, datetime(2024, 2, 24, 10, tzinfo=UTC), 20),
    ("device_offline", HANDSET, datetime(2024, 3, 4, 2, tzinfo=UTC), 60),
    ("usage_drop", GATEWAY, datetime(2024, 2, 27, 6, tzinfo=UTC), 48),
    ("usage_spike", SPIKED, datetime(2024, 3, 2, 0, tzinfo=UTC), 48),
    ("sim_idle", IDLE, datetime(2024, 3, 6, 12, tzinfo=UTC), 72),
]
DEACTIVATED = {"kind": "sim_deactivated", "subject": GONE, "start": "2024-03-05T00:00:00+00:00"}
INCIDENTS = [
    *({"kind": k, "subject": s, "start": t.isoformat(), "hours": h} for k, s, t, h in CASES),
    DEACTIVATED,
]


def members(site: str | None = None, cell: str | None = None) -> list[str]:
    return [d.msisdn for d in DEVICES if d.customer_site_id == site or d.enodeb_ip == cell]


@pytest.fixture(scope="module")
def sb() -> Iterator[SandboxHandle]:
    with serve(seed=0, clock=CLOCK, incidents=INCIDENTS) as handle:
        yield handle


def _health(sb: SandboxHandle, **options: Any) -> pd.DataFrame:
    args: dict[str, Any] = {"start": START, "end": END}
    if "msisdn" not in options:
        args["inventory"] = er.Inventory.from_sandbox(sb)
    else:
        args["account_id"] = ACCOUNT
    with er.ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
        return er.health(client, **{**args, **options})


@pytest.fixture(scope="module")
def flags(sb: SandboxHandle) -> pd.DataFrame:
    return _health(sb)


@pytest.fixture(scope="module")
def partial(sb: SandboxHandle) -> pd.DataFrame:
    """The same account judged from its MSISDNs only."""
    return _health(sb, msisdn=NUMBERS)


@pytest.mark.parametrize(("kind", "subject", "start", "hours"), CASES, ids=[c[0] for c in CASES])
def test_each_incident_is_flagged_with_its_kind_subject_and_start(
    flags: pd.DataFrame, partial: pd.DataFrame, kind: str, subject: str, start: datetime, hours: int
) -> None:
    end = start + timedelta(hours=hours)
    for got in (flags, partial):
        mine = got[(got.subject == subject) & (got.start < end) & (got.end > start)]
        assert mine.kind.tolist() == [kind], flags_table(got)
        flag = mine.iloc[0]
        # a flag starts at its first evidence: the incident's start, or the subject's own
        # normal quiet hours just before it (a handset asleep, a sensor between sessions)
        assert abs(flag.start - start) <= timedelta(hours=12)
        assert flag.end >= start + timedelta(hours=1)


def test_groups_and_always_on_devices_are_flagged_to_the_hour(flags: pd.DataFrame) -> None:
    for kind, subject, start, hours in CASES:
        if kind in ("site_dark", "enodeb_dark") or subject == CAMERA:
            row = flags[(flags.kind == kind) & (flags.subject == subject)].iloc[0]
            assert (row.start, row.end) == (start, start + timedelta(hours=hours)), kind


def test_nothing_else_is_flagged(flags: pd.DataFrame, partial: pd.DataFrame) -> None:
    concerned = {c[1] for c in CASES} | set(members(DARK_SITE, DARK_CELL))
    for got in (flags, partial):
        assert got[~got.subject.isin(concerned)].empty, flags_table(got)
        assert set(got.kind) <= set(KINDS)


def test_the_frame_its_columns_types_and_provenance(flags: pd.DataFrame) -> None:
    assert list(flags.columns) == [
        "kind", "subject", "start", "end", "severity", "evidence", "episode",
    ]  # fmt: skip
    assert str(flags.start.dtype) == "datetime64[us, UTC]" and str(flags.kind.dtype) == "string"
    assert flags.start.is_monotonic_increasing
    assert all("\n" not in e and any(ch.isdigit() for ch in e) for e in flags.evidence)
    attrs = flags.attrs
    assert attrs["range"] == [START, END] and attrs["zone"] == "+05:30"
    assert attrs["history_start"] == "2024-01-17T00:00:00+00:00"  # a whole UTC day
    assert attrs["history"] == "29 days, 2024-01-17 to 2024-02-14"
    assert attrs["inventory"] == {
        "source": "the sandbox",
        "complete": True,
        "subscribers": len(NUMBERS),
        "lives": "the inventory",
    }
    hourly, sims = attrs["reports"]
    assert hourly["requests"] == len(NUMBERS) and sims["requests"] == 1
    assert hourly["request"]["granularity"] == "HOUR"
    assert hourly["request"]["dimensions"] == ["msisdn", "customer_site_id", "enodeb_ip"]
    assert [m["name"] for m in hourly["request"]["metrics"]] == [
        "time_usage_seconds", "uplink_bytes", "downlink_bytes",
    ]  # fmt: skip
    assert sims["request"]["metrics"] == [{"name": "sim", "aggregation_type": "COUNT"}]
    # every piece of evidence says which days it learnt from
    assert all(" days, 2024-01-" in e for e in flags.evidence), flags.evidence.tolist()


def test_one_request_per_subscriber_and_for_sim_counts_and_a_partial_lists_sites(
    sb: SandboxHandle, partial: pd.DataFrame
) -> None:
    sb.reset_counters()
    _health(sb)
    assert sb.request_count() == len(NUMBERS) + 1
    sites = partial.attrs["reports"][2]
    assert sites["report"] == "sites" and sites["requests"] == len(partial.attrs["sites"]) == 6
    assert sites["request"]["dimensions"] == ["customer_site_id"]


def test_two_runs_give_the_same_flags_and_episodes(sb: SandboxHandle, flags: pd.DataFrame) -> None:
    again = _health(sb)
    pd.testing.assert_frame_equal(again, flags)
    for key in ("episodes", "deactivated", "unjudged", "bases"):
        assert again.attrs[key] == flags.attrs[key]


def test_a_dark_enodeb_is_one_episode_that_names_its_devices(flags: pd.DataFrame) -> None:
    cell = members(cell=DARK_CELL)
    start = CASES[1][2]
    near = flags[(flags.start < start + timedelta(hours=10)) & (flags.end > start)
                 & flags.subject.isin([DARK_CELL, "HYD-1004", *cell])]  # fmt: skip
    assert near.episode.nunique() == 1 and near.episode.notna().all(), flags_table(near)
    (episode,) = [e for e in flags.attrs["episodes"] if e["episode"] == near.episode.iloc[0]]
    assert (episode["scope"], episode["subject"], episode["site"]) == (
        "enodeb", DARK_CELL, "HYD-1004",
    )  # fmt: skip
    assert (episode["devices"], episode["of"], episode["subscribers"]) == (len(cell),) * 3
    assert episode["summary"].startswith(f"eNodeB {DARK_CELL} at site HYD-1004: 4 of 4 active")
    assert episode["start"] == start.isoformat()


def test_a_dark_site_counts_its_active_devices_only(
    flags: pd.DataFrame, partial: pd.DataFrame
) -> None:
    start = CASES[0][2]
    active = [m for m in members(site=DARK_SITE) if SIMS[m].active_on(start.date())]
    assert len(active) < len(members(site=DARK_SITE))  # some SIMs there are not active yet
    row = flags[flags.kind == "site_dark"].iloc[0]
    assert row.evidence.startswith(f"all {len(active)} active devices offline for 8 h")
    assert row.severity == "high"
    (episode,) = [e for e in flags.attrs["episodes"] if e["episode"] == row.episode]
    assert (episode["devices"], episode["of"]) == (len(active), len(active))
    told = partial[partial.kind == "site_dark"].iloc[0]
    said = f"site's own report; {len(active)} known active devices"
    assert told.evidence.startswith(f"no time online at any device of the site for 8 h (the {said}")
    assert partial.attrs["bases"][DARK_SITE] == "its own report"


def test_a_deactivated_sim_is_never_flagged(flags: pd.DataFrame, partial: pd.DataFrame) -> None:
    for got, basis in ((flags, "the inventory's deactivation date"), (partial, "SIM count fell")):
        assert GONE not in set(got.subject), flags_table(got)
        listed = [d for d in got.attrs["deactivated"] if d["msisdn"] == GONE]
        assert len(listed) == 1 and basis in listed[0]["basis"]
        assert listed[0]["from"] <= "2024-03-05T00:00:00+00:00"


def test_a_sim_activated_mid_range_is_not_judged_and_says_why(
    flags: pd.DataFrame, partial: pd.DataFrame
) -> None:
    new = "919544480408"  # a camera at the dark site, activated on 11 March
    assert str(SIMS[new].activation_date) == "2024-03-11"
    for got, since in ((flags, "(inventory)"), (partial, "(its first hour online")):
        assert new not in set(got.subject)
        (why,) = [u["why"] for u in got.attrs["unjudged"] if u["msisdn"] == new]
        assert why.startswith(f"active since 2024-03-11 {since}") and "0 days of history" in why


def test_a_second_look_is_served_from_the_clients_cache(sb: SandboxHandle, tmp_path: Path) -> None:
    runs = []
    inventory = er.Inventory.from_sandbox(sb)
    for _ in range(2):
        sb.reset_counters()
        with er.ReportingClient(sb.api_key, sb.reporting_url, cache=tmp_path, progress=False) as c:
            runs.append((er.health(c, inventory=inventory, start=START, end=END),
                         sb.request_count()))  # fmt: skip
    (first, sent_first), (second, sent_second) = runs
    pd.testing.assert_frame_equal(first, second)
    assert sent_first == len(NUMBERS) + 1
    assert sent_second <= 1  # the final chunks come from disk
    assert second.attrs["reports"][0]["cache"]["misses"] == 0


def test_relative_dates_resolve_against_the_service_clock(sb: SandboxHandle) -> None:
    got = _health(sb, start="7d", end="today", tz="+05:30")
    assert got.attrs["range"] == ["2024-03-08T00:00:00+05:30", "2024-03-15T00:00:00+05:30"]
    assert set(got.subject) >= {IDLE, DARK_CELL}  # the idle SIM and the dark eNodeB lie in them


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"msisdn": []}, "msisdn must name the subscribers to check"),
        ({"msisdn": NUMBERS, "account_id": ""}, "account_id must be the account's id"),
        ({"msisdn": NUMBERS, "inventory": "x"}, "not both or neither"),
        ({"inventory": "inventory.csv"}, "inventory must be an er.Inventory"),
        ({"account_id": "62c40843c7a1909709100000"}, "is not the inventory's account"),
        ({"history": timedelta(days=2)}, "history must be a timedelta of at least 7 days"),
        ({"start": END, "end": START}, "end .* must be after start"),
        ({"start": "yesterday-ish"}, "start 'yesterday-ish'"),
        ({"start": "NOW"}, "start must be a date, a timestamp or a relative date"),
        ({"shard": "3/2"}, "shard must be i/n with 1 <= i <= n"),
        ({"shard": "half"}, "shard must look like i/n"),
        ({"msisdn": NUMBERS, "shard": "1/2"}, "shards split the account by customer site"),
        ({"site_reports": "yes"}, "site_reports must be True, False or None"),
    ],
)
def test_bad_input_is_refused_before_any_request(
    sb: SandboxHandle, options: dict[str, Any], message: str
) -> None:
    args: dict[str, Any] = {"start": START, "end": END}
    if "msisdn" in options:
        args["account_id"] = ACCOUNT
    else:
        args["inventory"] = er.Inventory.from_sandbox(sb)
    args.update(options)
    if args.get("inventory") is not None and args.get("msisdn") is not None:
        args["inventory"] = er.Inventory.from_sandbox(sb)
    sb.reset_counters()
    with (
        er.ReportingClient(sb.api_key, sb.reporting_url) as client,
        pytest.raises(er.InputError, match=message),
    ):
        er.health(client, **args)
    assert sb.request_count() == 0


def test_flags_as_html_and_text_episodes_first_times_with_their_zone(flags: pd.DataFrame) -> None:
    page = flags_html(flags)
    assert page.startswith('<section class="health">') and page.count("<tr>") == len(flags) + 1
    assert page.index("health-episodes") < page.index("health-flags")  # episodes first
    assert "<th>start (+05:30)</th>" in page and "2024-02-20 08:30+05:30" in page
    assert f"{len(flags)} flags from {START} to {END}." in page
    assert "Judged from an inventory of 64 subscribers (the sandbox)." in page
    assert f"Deactivated SIMs (not flagged): {GONE} from 2024-03-0" in page
    odd = flags.head(1).assign(evidence=["<script>alert(1)</script>"])
    assert "<script>" not in flags_html(odd) and "&lt;script&gt;" in flags_html(odd)
    text = flags_table(flags, tz="UTC")
    lines = text.splitlines()
    assert lines[0].startswith("episode high: site CHE-1005: ")
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["kind", "subject"])
    assert lines[header + 1].split()[:4] == ["site_dark", DARK_SITE, "2024-02-20", "03:00+00:00"]
    assert flags_table(flags.head(0)).startswith("episode")  # the episodes are in attrs


def test_without_incidents_nothing_is_flagged(make_sandbox: Callable[..., SandboxHandle]) -> None:
    calm = make_sandbox(seed=3, clock=CLOCK)
    with er.ReportingClient(calm.api_key, calm.reporting_url, progress=False) as client:
        quiet = er.health(client, inventory=er.Inventory.from_sandbox(calm), start=START, end=END)
    assert quiet.empty, flags_table(quiet)
    assert quiet.attrs["episodes"] == []
