"""Several periods, cohorts, and honest change: today so far is not compared with a whole day."""

from __future__ import annotations

import re

import pandas as pd
import pytest

import edgereports as er
from edgereports.sandbox import SandboxHandle
from edgereports.schema import COMPARE_COLUMNS

RULES = ["previous_period", "previous_week", "previous_year", "previous_year_dow"]


def client_of(sb: SandboxHandle) -> er.ReportingClient:
    return er.ReportingClient(sb.api_key, sb.reporting_url, progress=False)


def usage(sb: SandboxHandle, start: str, end: str) -> er.Report:
    msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:2]
    return er.presets.time_usage_subscriber(
        account_id=sb.account_id, msisdn=msisdns, start=start, end=end
    )


def test_four_periods_in_one_frame_are_the_single_comparisons_in_blocks(
    sandbox: SandboxHandle,
) -> None:
    report = usage(sandbox, "2022-06-27", "2022-07-04")
    with client_of(sandbox) as client:
        df = client.fetch(report, compare=RULES)
        singles = {rule: client.fetch(report, compare=rule) for rule in RULES}
    assert list(df["period"].drop_duplicates()) == RULES
    assert len(df) == 4 * len(singles["previous_week"])
    for rule, block in df.groupby("period", sort=False):
        single = singles[str(rule)]
        assert list(block.columns) == [*single.columns[: -len(COMPARE_COLUMNS)], "period",
                                       *COMPARE_COLUMNS]  # fmt: skip
        pd.testing.assert_frame_equal(
            block.drop(columns="period").reset_index(drop=True), single, check_like=False
        )
    facts = df.attrs["compare"]
    assert facts["column"] == "period"
    assert [o["name"] for o in facts["others"]] == RULES
    assert [o["start"][:10] for o in facts["others"]] == [
        "2022-06-20",
        "2022-06-20",
        "2021-06-27",
        "2021-06-28",
    ]
    assert facts["range"]["start"].startswith("2022-06-27")


@pytest.mark.parametrize(
    ("compare", "message"),
    [
        ([*RULES, "previous_week"], "compare takes 1 to 4 periods, got 5"),
        ([], "compare takes 1 to 4 periods, got 0"),
        (["previous_week", "previous_week"], "compare names a period twice"),
        (["previous_week", "last_month"], "compare must be 'previous_period', 'previous_week'"),
        (("previous_week", "previous_year"), "several periods are a list"),
        ("last_week", "compare must be 'previous_period', 'previous_week', 'previous_year'"),
        (7, "or a list of up to 4 of them, got 7"),
        (("2022-06-03", "2022-06-01"), "compare: "),
        (("LAST DAY", "NOW"), "compare takes dates, not time keywords"),
    ],
)
def test_a_bad_compare_is_refused_before_any_request(compare: object, message: str) -> None:
    report = er.Report(account_id="A").between("2022-07-01", "2022-07-08").granularity("DAY")
    report = report.metric("time_usage_seconds", "COUNT")
    client = er.ReportingClient("k" * 12, "http://127.0.0.1:9", progress=False, retries=0)
    with client, pytest.raises(er.QueryError, match=re.escape(message)) as info:
        client.fetch(report, compare=compare)  # nothing listens there: no request was sent
    assert info.value.field == "compare"


@pytest.mark.parametrize(
    ("compare_by", "message"),
    [
        ({"msisdn": ["91"]}, "compare_by must be {dimension: [base, other, ...]}"),
        ({"msisdn": ["91", "91"]}, "2 to 5 distinct values"),
        ({"msisdn": [str(i) for i in range(6)]}, "2 to 5 distinct values"),
        ({"msisdn": ["91", "92"], "imsi": ["1", "2"]}, "with one dimension"),
        ("msisdn", "compare_by must be"),
    ],
)
def test_a_bad_compare_by_is_refused_before_any_request(compare_by: object, message: str) -> None:
    report = er.Report(account_id="A").between("2022-07-01", "2022-07-08").granularity("DAY")
    report = report.metric("time_usage_seconds", "COUNT")
    with er.ReportingClient("k" * 12, "http://127.0.0.1:9", progress=False, retries=0) as client:
        with pytest.raises(er.QueryError, match=re.escape(message)) as info:
            client.fetch(report, compare_by=compare_by)
        assert info.value.field == "compare_by"
        with pytest.raises(er.QueryError, match="cannot be combined"):
            client.fetch(report, compare="previous_week", compare_by={"msisdn": ["1", "2"]})
        with pytest.raises(er.InputError, match="partial='prorate' scales the other period"):
            client.fetch(report, partial="prorate")
        with pytest.raises(er.InputError, match="partial must be 'keep', 'drop' or 'prorate'"):
            client.fetch(report, partial="scale", compare="previous_week")


def test_keyword_ranges_and_sim_counts_are_refused() -> None:
    with er.ReportingClient("k" * 12, "http://127.0.0.1:9", progress=False, retries=0) as client:
        last = er.Report(account_id="A").last("DAY").metric("time_usage_seconds", "COUNT")
        with pytest.raises(er.QueryError, match="not one written with time keywords"):
            client.fetch(last, compare="previous_period")
        sims = er.presets.active_sim_count(account_id="A", start="2022-07-01", end="2022-07-08")
        with pytest.raises(er.QueryError, match="not on SIM counts"):
            client.fetch(sims, compare=["previous_week"])


def test_a_cohort_meets_the_other_cohort_over_the_same_range(sandbox: SandboxHandle) -> None:
    a, b, c = (s.msisdn for s in sandbox.network.sims_of(sandbox.account_id)[:3])
    report = usage(sandbox, "2022-07-01", "2022-07-05")
    with client_of(sandbox) as client:
        df = client.fetch(report, compare_by={"msisdn": [a, b, c]})
        apart = {m: client.fetch(report.where(msisdn=[m])) for m in (a, b, c)}
    assert set(df["msisdn"]) == {a} and list(df["cohort"].drop_duplicates()) == [b, c]
    for cohort, block in df.groupby("cohort", sort=False):
        block = block.reset_index(drop=True)
        pd.testing.assert_frame_equal(block[list(apart[a].columns)], apart[a])
        other = apart[str(cohort)]
        assert (block["compare_time_stamp"] == block["time_stamp"]).all()
        assert block["compare_value"].tolist() == other["value"].tolist()
    facts = df.attrs["compare"]
    assert (facts["by"], facts["base"], facts["column"]) == ("msisdn", a, "cohort")
    assert [o["rule"] for o in facts["others"]] == [f"the same range, {b}", f"the same range, {c}"]


def test_today_so_far_is_marked_and_not_compared_with_a_whole_day(sandbox: SandboxHandle) -> None:
    # the sandbox's present is 2022-07-08 04:30Z: today's DAY bucket holds 4.5 hours so far
    report = er.presets.time_usage_enterprise(
        account_id=sandbox.account_id, start="2022-07-05", end="2022-07-09"
    )
    with client_of(sandbox) as client:
        df = client.fetch(report, compare="previous_week")
        prorated = client.fetch(report, compare="previous_week", partial="prorate")
    today = df["time_stamp"] == pd.Timestamp("2022-07-08", tz="UTC")
    assert df.loc[today, "compare_partial"].all() and not df.loc[~today, "compare_partial"].any()
    assert df.loc[today, ["change", "change_pct"]].isna().all().all()
    assert df.loc[~today, "change"].notna().all()
    assert df.loc[today, "compare_value"].notna().all()  # the other day's value, as it is
    assert df.attrs["compare"]["not_alike"] == 1
    # prorated: the whole day scaled to the 4.5 hours that today holds, and said so
    share = 4.5 / 24
    scaled = prorated.loc[today, "compare_value"].to_numpy()
    assert scaled == pytest.approx(df.loc[today, "compare_value"].to_numpy() * share)
    assert prorated.loc[today, "change"].to_numpy() == pytest.approx(
        (prorated.loc[today, "value"] - prorated.loc[today, "compare_value"]).to_numpy()
    )
    facts = prorated.attrs["compare"]
    assert (facts["partial"], facts["prorated"], facts["not_alike"]) == ("prorate", 1, 0)
    pd.testing.assert_frame_equal(prorated[~today], df[~today])


def test_prorate_leaves_a_peak_uncompared(sandbox: SandboxHandle) -> None:
    report = er.presets.ue_connections_avg_peak(
        account_id=sandbox.account_id, start="2022-07-06", end="2022-07-09", granularity="DAY"
    )
    with client_of(sandbox) as client:
        df = client.fetch(report, compare="previous_week", partial="prorate")
    today = df["time_stamp"] == pd.Timestamp("2022-07-08", tz="UTC")
    assert today.sum() == 2 and df.loc[today, "compare_partial"].all()
    assert df.loc[today, "change"].isna().all()  # a maximum or a mean is not scaled by time
    assert df.attrs["compare"]["prorated"] == 0
