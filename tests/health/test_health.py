"""``er.health`` against a sandbox with one incident of each kind injected (loopback HTTP)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import edgereports as er
from edgereports.health import flags_html, flags_table
from edgereports.sandbox import SandboxHandle, build_network, serve

CLOCK = "2024-03-15T12:00:00+05:30"
START, END = "2024-02-15T00:00:00+05:30", "2024-03-15T00:00:00+05:30"
NET = build_network(0, 64)
ACCOUNT = NET.primary_account_id
ACTIVE = {s.msisdn for s in NET.sims if s.active_on(datetime(2024, 1, 1).date())}
DEVICES = [d for d in NET.devices if d.account_id == ACCOUNT and d.msisdn in ACTIVE]
NUMBERS = [s.msisdn for s in NET.sims_of(ACCOUNT)]
DARK_SITE = DEVICES[0].customer_site_id
OTHERS = [d for d in DEVICES if d.customer_site_id != DARK_SITE]


def _of(profile: str, skip: int = 0) -> str:
    return [d.msisdn for d in OTHERS if d.profile == profile][skip]


CASES = [  # kind, subject, start (UTC), hours
    ("site_dark", DARK_SITE, datetime(2024, 2, 20, 3, tzinfo=UTC), 8),
    ("device_offline", _of("camera"), datetime(2024, 2, 24, 10, tzinfo=UTC), 20),
    ("device_offline", _of("handset"), datetime(2024, 3, 4, 2, tzinfo=UTC), 60),
    ("usage_drop", _of("gateway"), datetime(2024, 2, 27, 6, tzinfo=UTC), 48),
    ("usage_spike", _of("camera", 1), datetime(2024, 3, 2, 0, tzinfo=UTC), 30),
    ("sim_idle", _of("sensor"), datetime(2024, 3, 6, 12, tzinfo=UTC), 72),
]
INCIDENTS = [{"kind": k, "subject": s, "start": t.isoformat(), "hours": h} for k, s, t, h in CASES]


@pytest.fixture(scope="module")
def sb() -> Iterator[SandboxHandle]:
    with serve(seed=0, clock=CLOCK, incidents=INCIDENTS) as handle:
        yield handle


def _health(sb: SandboxHandle, **options: Any) -> pd.DataFrame:
    args: dict[str, Any] = {"account_id": ACCOUNT, "msisdn": NUMBERS, "start": START, "end": END}
    with er.ReportingClient(sb.api_key, sb.reporting_url) as client:
        return er.health(client, **{**args, **options})


@pytest.fixture(scope="module")
def flags(sb: SandboxHandle) -> pd.DataFrame:
    return _health(sb)


@pytest.mark.parametrize(("kind", "subject", "start", "hours"), CASES, ids=[c[0] for c in CASES])
def test_each_incident_is_flagged_with_its_kind_subject_and_start(
    flags: pd.DataFrame, kind: str, subject: str, start: datetime, hours: int
) -> None:
    end = start + timedelta(hours=hours)
    mine = flags[(flags.subject == subject) & (flags.start < end) & (flags.end > start)]
    assert mine.kind.tolist() == [kind], flags_table(flags)
    flag = mine.iloc[0]
    # a flag starts at its first evidence: the incident's start, or the subject's own normal
    # quiet hours just before it (a handset asleep, a sensor between sessions)
    assert timedelta(0) <= abs(flag.start - start) <= timedelta(hours=12)
    assert flag.end >= start + timedelta(hours=1)
    assert flag.severity in ("high", "medium", "low")


def test_exact_starts_where_the_device_is_always_on(flags: pd.DataFrame) -> None:
    for kind, subject, start, hours in CASES:
        if kind in ("site_dark", "usage_drop") or subject == _of("camera"):
            row = flags[(flags.kind == kind) & (flags.subject == subject)].iloc[0]
            assert row.start == start, (kind, subject)
            if kind == "site_dark":
                assert row.end == start + timedelta(hours=hours)


def test_no_flag_beyond_the_incidents(flags: pd.DataFrame) -> None:
    subjects = {c[1] for c in CASES}
    dark = {d.msisdn for d in DEVICES if d.customer_site_id == DARK_SITE}
    stray = flags[~flags.subject.isin(subjects) & ~flags.subject.isin(dark)]
    assert len(stray) <= 1, flags_table(stray)


def test_the_frame_its_columns_types_and_provenance(sb: SandboxHandle, flags: pd.DataFrame) -> None:
    assert list(flags.columns) == ["kind", "subject", "start", "end", "severity", "evidence"]
    assert str(flags.start.dtype) == "datetime64[us, UTC]" and str(flags.kind.dtype) == "string"
    assert flags.start.is_monotonic_increasing
    assert all("\n" not in e and any(ch.isdigit() for ch in e) for e in flags.evidence)
    attrs = flags.attrs
    assert attrs["range"] == [START, END]
    assert attrs["history_start"] == "2024-01-17T00:00:00+00:00"  # a whole UTC day
    assert attrs["subjects"] == len(NUMBERS)
    hourly, sims = attrs["reports"]
    assert hourly["requests"] == len(NUMBERS) and sims["requests"] == 1
    assert hourly["request"]["granularity"] == "HOUR"
    assert [m["name"] for m in hourly["request"]["metrics"]] == [
        "time_usage_seconds",
        "uplink_bytes",
        "downlink_bytes",
    ]
    assert sims["request"]["metrics"] == [{"name": "sim", "aggregation_type": "COUNT"}]


def test_one_request_per_subscriber_and_one_for_sim_counts(sb: SandboxHandle) -> None:
    sb.reset_counters()
    _health(sb)
    assert sb.request_count() == len(NUMBERS) + 1


def test_two_runs_give_the_same_flags(sb: SandboxHandle, flags: pd.DataFrame) -> None:
    again = _health(sb)
    pd.testing.assert_frame_equal(again, flags)
    assert again.attrs["reports"][0]["request"] == flags.attrs["reports"][0]["request"]


@pytest.mark.parametrize("seed", [0, 3])
def test_without_incidents_few_or_no_flags(
    make_sandbox: Callable[..., SandboxHandle], seed: int
) -> None:
    calm = make_sandbox(seed=seed, clock=CLOCK)
    numbers = [s.msisdn for s in calm.network.sims_of(calm.account_id)]
    with er.ReportingClient(calm.api_key, calm.reporting_url) as client:
        quiet = er.health(client, account_id=calm.account_id, msisdn=numbers, start=START, end=END)
    assert len(quiet) <= 1, flags_table(quiet)


def test_relative_dates_resolve_against_the_service_clock(sb: SandboxHandle) -> None:
    got = _health(sb, start="7d", end="today", tz="+05:30")
    assert got.attrs["range"] == ["2024-03-08T00:00:00+05:30", "2024-03-15T00:00:00+05:30"]
    assert set(got.subject) >= {_of("sensor")}  # the idle SIM lies in those days


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"msisdn": []}, "msisdn must name the subscribers to check"),
        ({"account_id": ""}, "account_id must be the account's id"),
        ({"history": timedelta(days=2)}, "history must be a timedelta of at least 7 days"),
        ({"start": END, "end": START}, "end .* must be after start"),
        ({"start": "yesterday-ish"}, "start 'yesterday-ish'"),
        ({"start": "NOW"}, "start must be a date, a timestamp or a relative date"),
    ],
)
def test_bad_input_is_refused_before_any_request(
    sb: SandboxHandle, options: dict[str, Any], message: str
) -> None:
    args: dict[str, Any] = {"account_id": ACCOUNT, "msisdn": NUMBERS, "start": START, "end": END}
    args.update(options)
    sb.reset_counters()
    with (
        er.ReportingClient(sb.api_key, sb.reporting_url) as client,
        pytest.raises(er.InputError, match=message),
    ):
        er.health(client, **args)
    assert sb.request_count() == 0


def test_flags_as_html_and_text(flags: pd.DataFrame) -> None:
    page = flags_html(flags)
    assert page.startswith('<section class="health">') and page.count("<tr>") == len(flags) + 1
    assert f"{len(flags)} flags from {START} to {END}." in page
    odd = flags.head(1).assign(evidence=["<script>alert(1)</script>"])
    assert "<script>" not in flags_html(odd) and "&lt;script&gt;" in flags_html(odd)
    assert "no flags" in flags_html(flags.head(0))
    text = flags_table(flags)
    assert text.splitlines()[0].split()[:4] == ["kind", "subject", "start", "end"]
    assert flags_table(flags.head(0)) == f"no flags from {START} to {END}"


def test_a_second_look_is_served_from_the_clients_cache(sb: SandboxHandle, tmp_path: Path) -> None:
    args: dict[str, Any] = {"account_id": ACCOUNT, "msisdn": NUMBERS, "start": START, "end": END}
    runs = []
    for _ in range(2):
        sb.reset_counters()
        with er.ReportingClient(sb.api_key, sb.reporting_url, cache=tmp_path) as client:
            runs.append((er.health(client, **args), sb.request_count()))
    (first, sent_first), (second, sent_second) = runs
    pd.testing.assert_frame_equal(first, second)
    assert sent_first == len(NUMBERS) + 1
    assert sent_second <= 1  # the final chunks come from disk
    assert second.attrs["reports"][0]["cache"]["misses"] == 0


def test_a_deactivated_sim_is_listed_not_flagged(
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    gone = next(s for s in NET.sims_of(ACCOUNT) if s.deactivation_date == date(2025, 12, 19))
    calm = make_sandbox(seed=0, clock="2025-12-31T12:00:00+00:00")
    with er.ReportingClient(calm.api_key, calm.reporting_url) as client:
        flags = er.health(client, account_id=ACCOUNT, msisdn=NUMBERS,
                          start="2025-12-01", end="2025-12-31")  # fmt: skip
    assert gone.msisdn not in set(flags.subject), flags_table(flags)
    listed = flags.attrs["deactivated"]
    assert [d["msisdn"] for d in listed] == [gone.msisdn]
    assert listed[0]["silent_from"].startswith("2025-12-1")  # the day before, or of
