"""Record the sandbox's answer to every query pattern the service documents into ``recorded/``.

For each pattern this writes ``recorded/<pattern>.request.json`` (the request, built by
``edgereports.presets``), ``recorded/<pattern>.json`` and ``recorded/<pattern>.csv`` (the
answers exactly as sent, for ``Accept: application/json`` and ``Accept: text/csv``). The
sandbox runs with seed 0 and its clock fixed at ``NOW``, so a re-run writes the same bytes.

Run from the project root::

    python sample_data/record.py
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests

from edgereports import presets
from edgereports.sandbox import SandboxHandle, serve

HERE = Path(__file__).resolve().parent
OUT = HERE / "recorded"
NOW = "2022-07-08T10:00:00+05:30"
START = "2022-07-07T09:50:00+05:30"
END = "2022-07-08T09:50:00+05:30"


def pattern_requests(sb: SandboxHandle) -> dict[str, dict[str, Any]]:
    """Return the request of every documented pattern, built by the presets, for the sandbox."""
    acct = sb.account_id
    sim = sb.network.sims_of(acct)[0]
    site = sb.network.sites[0].customer_site_id
    span = {"account_id": acct, "start": START, "end": END}
    built: dict[str, Callable[[], Any]] = {
        "time_usage_enterprise": lambda: presets.time_usage_enterprise(**span),
        "time_usage_subscriber": lambda: presets.time_usage_subscriber(msisdn=sim.msisdn, **span),
        "byte_usage_subscriber": lambda: presets.byte_usage_subscriber(msisdn=sim.msisdn, **span),
        "realtime_bandwidth": lambda: presets.realtime_bandwidth(account_id=acct),
        "bandwidth_percentile": lambda: presets.bandwidth_percentile(customer_site_id=site, **span),
        "ue_connections_avg_peak": lambda: presets.ue_connections_avg_peak(**span),
        "active_sim_count": lambda: presets.active_sim_count(**span),
        "ue_connections_subscriber": lambda: presets.ue_connections_subscriber(
            imsi=sim.imsi, **span
        ),
        "ue_connections_enterprise": lambda: presets.ue_connections_enterprise(**span),
        "concurrent_online_ues": lambda: presets.concurrent_online_ues(
            account_id=acct, customer_site_id=site
        ),
        "device_status": lambda: presets.device_status(account_id=acct, imsi=sim.imsi),
    }
    return {name: make().to_request() for name, make in built.items()}


def record(out: Path = OUT) -> list[Path]:
    """Run a sandbox and write every pattern's request and answers into ``out``.

    Args:
        out: the directory to (re)write.

    Returns:
        The files written.

    Raises:
        RuntimeError: the sandbox did not answer 200.
    """
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with serve(seed=0, clock=NOW) as sb, requests.Session() as session:
        for name, body in pattern_requests(sb).items():
            request_file = out / f"{name}.request.json"
            request_file.write_text(json.dumps(body, indent=2) + "\n")
            written.append(request_file)
            for accept, suffix in (("application/json", "json"), ("text/csv", "csv")):
                r = session.post(sb.report_endpoint, params={"apikey": sb.api_key}, json=body,
                                 headers={"Accept": accept}, timeout=60)  # fmt: skip
                if r.status_code != 200:
                    raise RuntimeError(f"{name} ({accept}): HTTP {r.status_code}: {r.text}")
                path = out / f"{name}.{suffix}"
                path.write_bytes(r.content)
                written.append(path)
    return written


def main() -> int:
    """Rewrite ``recorded/`` and list what was written."""
    for path in record():
        print(path.relative_to(HERE.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
