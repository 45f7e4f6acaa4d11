"""Device status is measured against the SIMs on the account at that time.

A SIM not yet active (or an IMSI or MSISDN the account never had) is not an offline device: its
current value comes back without the device's attributes, and the client drops that row and
names the device in a warning. Against the sandbox over loopback.
"""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg", force=True)

import matplotlib.pyplot as plt
import pytest

import edgereports as er
from edgereports import plotting, presets
from edgereports.sandbox import SandboxHandle

UNKNOWN = "404459999999999"


def test_an_unknown_imsi_and_an_inactive_sim_get_no_row_and_are_named(
    sandbox: SandboxHandle,
) -> None:
    today = sandbox.clock.now().date()
    sims = sandbox.network.sims_of(sandbox.account_id)
    waiting = next(s for s in sims if s.activation_date > today)  # activated after the clock
    active = next(s for s in sims if s.active_on(today))
    client = er.ReportingClient(sandbox.api_key, sandbox.reporting_url, progress=False)
    report = presets.device_status(
        account_id=sandbox.account_id, imsi=[waiting.imsi, active.imsi, UNKNOWN]
    )
    with pytest.warns(er.EmptyResultWarning) as seen:
        frame = client.fetch(report)
    said = " ".join(str(w.message) for w in seen)
    assert f"imsi={waiting.imsi}" in said and f"imsi={UNKNOWN}" in said
    assert "not a device of the account" in said and active.imsi not in said
    assert list(frame["imsi"]) == [active.imsi]
    assert frame.attrs["not_on_account"] == [f"imsi={waiting.imsi}", f"imsi={UNKNOWN}"]


def test_an_unknown_msisdn_alone_gives_an_empty_frame_and_one_warning(
    sandbox: SandboxHandle,
) -> None:
    client = er.ReportingClient(sandbox.api_key, sandbox.reporting_url, progress=False)
    report = presets.device_status(account_id=sandbox.account_id).where(msisdn=["919999999999"])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        frame = client.fetch(report)
    empties = [str(w.message) for w in seen if issubclass(w.category, er.EmptyResultWarning)]
    assert empties == [
        "msisdn=919999999999: not a device of the account at that time (unknown, or its SIM "
        "not active then): no row"
    ]
    assert frame.empty and list(frame.columns)[:3] == ["start_time", "end_time", "account_id"]


def test_the_status_chart_counts_the_active_devices(sandbox: SandboxHandle) -> None:
    today = sandbox.clock.now().date()
    sims = sandbox.network.sims_of(sandbox.account_id)
    active = [s for s in sims if s.active_on(today)]
    client = er.ReportingClient(sandbox.api_key, sandbox.reporting_url, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", er.EmptyResultWarning)
        frame = client.fetch(
            presets.device_status(account_id=sandbox.account_id, imsi=[s.imsi for s in sims])
        )
    online = int((frame["value"] == 1.0).sum())
    ax = plotting.plot_device_status(frame)
    assert ax.get_title().startswith(f"Device status now: {online} of {len(active)} online")
    assert len(active) < len(sims)
    plt.close(ax.figure)
