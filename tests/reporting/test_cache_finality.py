"""Finality per bucket: a bucket the service had not finished is never stored as final, also
when it is the last bucket of its chunk (the last hour of a UTC day, the last day of a month)
and the service's clock is far past that chunk, as on a service whose data lags (the sandbox's
``data_lag``: its answers stop at the clock less the lag, their ``Date`` states the clock).

Each test pulls while the unfinished bucket is the last of its chunk, moves the sandbox's
clock on until that bucket is full, and pulls again through the cache: the frame must equal an
uncached pull of the same moment, and the chunk must have been asked again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import pandas as pd
import pandas.testing as pdt
import pytest

import edgereports as er
from edgereports.sandbox import SandboxHandle
from tests.reporting.test_cache import client, counted


@dataclass(frozen=True)
class Boundary:
    """A sandbox whose data stops inside the last bucket of a chunk, and pulls around it."""

    clock: str  # the service's clock (its Date)
    lag: timedelta  # how far its data trails the clock
    later: str  # a clock at which that bucket is full
    unfinished: str  # the start of the unfinished bucket (UTC)
    past_chunk: tuple[str, str]  # a range reaching past the chunk's end
    to_chunk_end: tuple[str, str]  # a range ending at the chunk's end
    preset: Callable[..., er.Report]
    chunks_past: int  # chunks of past_chunk per subscriber
    final_past: int  # of them, final (before the unfinished bucket's chunk)


BOUNDARIES = {
    # data up to 2022-07-07T23:30Z: the last hour of 7 July is half full, 5.5 hours before
    # the clock (past the 3-hour horizon)
    "HOUR, last hour of a UTC day": Boundary(
        clock="2022-07-08T05:00:00Z",
        lag=timedelta(hours=5, minutes=30),
        later="2022-07-09T12:00:00Z",
        unfinished="2022-07-07T23:00:00Z",
        past_chunk=("2022-07-05", "2022-07-09"),
        to_chunk_end=("2022-07-05", "2022-07-08"),
        preset=er.presets.byte_usage_subscriber,
        chunks_past=4,
        final_past=2,
    ),
    # data up to 2022-06-30T12:00Z: the last day of June is half full, 3 days before the
    # clock (past the 2-day horizon)
    "DAY, last day of a month": Boundary(
        clock="2022-07-03T12:00:00Z",
        lag=timedelta(days=3),
        later="2022-07-20T00:00:00Z",
        unfinished="2022-06-30T00:00:00Z",
        past_chunk=("2022-05-01", "2022-07-05"),
        to_chunk_end=("2022-05-01", "2022-07-01"),
        preset=er.presets.time_usage_subscriber,
        chunks_past=3,
        final_past=1,
    ),
}


def cameras(sb: SandboxHandle, when: date, n: int = 2) -> list[str]:
    """``n`` subscribers online nearly every hour (cameras), active on ``when``."""
    sims = {s.msisdn: s for s in sb.network.sims_of(sb.account_id)}
    found = [
        d.msisdn
        for d in sb.network.devices
        if d.profile == "camera" and d.msisdn in sims and sims[d.msisdn].active_on(when)
    ]
    return [str(m) for m in found[:n]]


def _pull_of(sb: SandboxHandle, case: Boundary, bounds: tuple[str, str]) -> er.Report:
    sims = cameras(sb, pd.Timestamp(case.unfinished).date())
    return case.preset(account_id=sb.account_id, msisdn=sims, start=bounds[0], end=bounds[1])


def _at(frame: pd.DataFrame, start: str) -> pd.DataFrame:
    stamps = pd.to_datetime(frame["time_stamp"], utc=True)
    return frame[stamps == pd.Timestamp(start)].reset_index(drop=True)


def _later_pull_sees_the_bucket_full(
    sb: SandboxHandle, cached: er.ReportingClient, report: er.Report, case: Boundary
) -> None:
    first = cached.fetch(report)
    sb.clock.set(case.later)
    truth = client(sb).fetch(report)
    # the bucket was unfinished at the first pull, and is full now
    before, after = _at(first, case.unfinished), _at(truth, case.unfinished)
    assert len(before) == len(after) > 0
    assert not before.equals(after)
    later, sent = counted(sb, lambda: cached.fetch(report))
    assert sent >= 2  # the unfinished bucket's chunk is asked again, for each subscriber
    pdt.assert_frame_equal(later, truth)


@pytest.mark.parametrize("name", list(BOUNDARIES))
def test_an_unfinished_last_bucket_of_a_chunk_shown_by_the_answer_is_not_final(
    make_sandbox: Callable[..., SandboxHandle], tmp_path: Path, name: str
) -> None:
    """A range reaching past the chunk: the answer stops inside the chunk's last bucket,
    which shows it holds the service's present (unfinished) with no setting at all."""
    case = BOUNDARIES[name]
    sb = make_sandbox(seed=6, clock=case.clock, data_lag=case.lag)
    report = _pull_of(sb, case, case.past_chunk)
    cached = client(sb, tmp_path)
    stats = cached.fetch(report).attrs["cache"]
    assert stats["misses"] == 2 * case.chunks_past
    assert stats["provisional"] == 2 * (case.chunks_past - case.final_past)
    _later_pull_sees_the_bucket_full(sb, cached, report, case)


@pytest.mark.parametrize("name", list(BOUNDARIES))
def test_the_data_lag_setting_keeps_a_full_looking_last_chunk_provisional(
    make_sandbox: Callable[..., SandboxHandle], tmp_path: Path, name: str
) -> None:
    """A range ending at the chunk's end: the answer cannot show its last bucket unfinished;
    a client told the service's data lag stores nothing its clock less the lag has not passed
    by the horizon."""
    case = BOUNDARIES[name]
    sb = make_sandbox(seed=6, clock=case.clock, data_lag=case.lag)
    report = _pull_of(sb, case, case.to_chunk_end)
    cached = client(sb, tmp_path, data_lag=case.lag)
    stats = cached.fetch(report).attrs["cache"]
    assert stats["provisional"] == 2  # the last chunk, of each subscriber
    assert stats["misses"] - stats["provisional"] == 2 * case.final_past
    _later_pull_sees_the_bucket_full(sb, cached, report, case)


def test_a_data_lag_that_is_not_a_duration_is_refused_when_the_client_is_built(
    sandbox: SandboxHandle,
) -> None:
    for bad in (timedelta(hours=-1), 3600, "1h"):
        with pytest.raises(er.ConfigError, match="data_lag"):
            client(sandbox, data_lag=bad)
