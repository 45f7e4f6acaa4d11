"""Two knobs of the sandbox for the cache's tests: a service whose data trails its clock
(``data_lag``), and report keys that work for some accounts only (``account_keys``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from email.utils import parsedate_to_datetime
from typing import Any

import pytest
import requests

from edgereports.sandbox import SandboxHandle
from tests.sandbox.test_sandbox_laws import body

HOURS = [{"name": "uplink_bytes", "aggregation_type": "COUNT"}]


def _post(sb: SandboxHandle, key: str, payload: dict[str, Any]) -> requests.Response:
    return requests.post(sb.report_endpoint, params={"apikey": key}, json=payload, timeout=60)


def test_a_lagging_sandbox_answers_as_of_its_clock_less_the_lag_and_states_its_clock(
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    lagging = make_sandbox(seed=2, clock="2022-07-08T05:00:00Z", data_lag=timedelta(hours=5.5))
    behind = make_sandbox(seed=2, clock="2022-07-07T23:30:00Z")
    payload = body(lagging, "2022-07-07T00:00:00Z", "2022-07-09T00:00:00Z", HOURS, "HOUR")
    got, want = _post(lagging, lagging.api_key, payload), _post(behind, behind.api_key, payload)
    assert got.status_code == want.status_code == 200
    assert got.json() == want.json()  # the data stops in the hour of 23:30, partly filled
    stamps = [p["time_stamp"] for arr in got.json()["result"] for p in arr]
    assert max(stamps).startswith("2022-07-07T23:00")
    assert parsedate_to_datetime(got.headers["Date"]).isoformat() == "2022-07-08T05:00:00+00:00"
    with pytest.raises(ValueError, match="data_lag"):
        make_sandbox(data_lag=-1)


def test_a_key_for_some_accounts_is_refused_for_the_others(
    make_sandbox: Callable[..., SandboxHandle],
) -> None:
    sb = make_sandbox(seed=0, account_keys={"ONE-ACCOUNT-KEY": ["62c40843c7a1909709112345"]})
    other = next(a.account_id for a in sb.network.accounts if a.account_id != sb.account_id)
    mine = body(sb, "2022-07-01T00:00:00Z", "2022-07-02T00:00:00Z", HOURS, "DAY")
    account = {"dimension_name": "account_id", "operator": "EXACT", "expressions": [other]}
    theirs = {**mine, "dimension_filter_clauses": [{"filters": [account]}]}
    assert _post(sb, "ONE-ACCOUNT-KEY", mine).status_code == 200
    refused = _post(sb, "ONE-ACCOUNT-KEY", theirs)
    assert refused.status_code == 403
    assert f"may not read account {other}" in refused.text
    assert "ONE-ACCOUNT-KEY" not in refused.text
    assert _post(sb, sb.api_key, theirs).status_code == 200  # the sandbox's key reads every one
    assert _post(sb, "ANOTHER-KEY", mine).status_code == 401
