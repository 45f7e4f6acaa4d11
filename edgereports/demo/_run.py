"""Run the demo: fetch every planned preset, write Parquet, PNG charts and an HTML page."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..errors import AuthError, ConfigError, EdgeReportsError, EdgeReportsWarning, redact
from ..export import save_parquet
from ..health import flags_table, health
from ..normalize import concat_frames
from ..page.summary import summary_table
from ..plotting import figure_png, plot
from ..reporting import ReportingClient
from ..sandbox import build_network, serve
from ._html import write_index
from ._plan import (
    DAILY_RANGE,
    DEMO_CLOCK,
    PlannedReport,
    Subjects,
    demo_incidents,
    plan_reports,
    range_end,
)
from ._result import DemoResult, ReportOutcome, incident_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DemoResult", "ReportOutcome", "run_demo"]

Echo = Callable[[str], object]


def run_demo(
    out: str | Path = "demo-output",
    *,
    settings: Settings | None = None,
    subjects: Subjects | None = None,
    sandbox: bool | None = None,
    seed: int = 0,
    devices: int = 64,
    incidents: bool = True,
    echo: Echo = print,
) -> DemoResult:
    """Fetch the eleven presets and write their frames, charts and an HTML page.

    Args:
        out: the output directory (created; files in it are replaced).
        settings: the settings; by default :meth:`Settings.from_env`.
        subjects: the account and ids; by default the sandbox's (required for the live service).
        sandbox: True: always the sandbox; False: always the live service; None: the live
            service when the settings have an API key and a reporting URL.
        seed: the sandbox's seed.
        devices: the sandbox's devices on the primary account.
        incidents: inject the demo's incidents into the sandbox (:func:`demo_incidents`), so
            that the health section has something to find; the page lists them as the ground
            truth to hold its flags against.
        echo: where progress and the summary tables go (``print`` by default).

    Returns:
        The :class:`DemoResult`.

    Raises:
        ConfigError: the live service was chosen without a key, a URL or an account.
        AuthError: the service refused the key (the demo stops at the first refusal).
        OSError: the output directory cannot be written.
    """
    started = time.monotonic()
    settings = Settings.from_env() if settings is None else settings
    live = bool(settings.api_key and settings.reporting_url) if sandbox is None else not sandbox
    target = Path(out)
    if live:
        settings.require("api_key", "reporting_url")
        if subjects is None:
            raise ConfigError(
                "the live service needs an account: pass --account-id (and --msisdn, --imsi, "
                "--customer-site-id for the subscriber and site presets), or use --sandbox"
            )
        source = f"the live service at {redact(settings.reporting_url, [settings.api_key])}"
        with ReportingClient.from_settings(settings, progress=False) as client:
            end = range_end(client.service_now())  # the service's clock, not this machine's
            result = _run(client, subjects, end, target, source, echo)
    else:
        network = build_network(seed, devices)
        today = datetime.fromisoformat(DEMO_CLOCK).date()
        subjects = subjects or Subjects.from_network(network, today)
        injected = demo_incidents(network, subjects) if incidents else []
        with serve(seed=seed, devices=devices, clock=DEMO_CLOCK, incidents=injected) as sb:
            source = (
                f"the local sandbox (seed {seed}, {devices} devices, clock {DEMO_CLOCK}, "
                f"{len(injected)} injected incident(s))"
            )
            with ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
                end = range_end(client.service_now())
                result = _run(client, subjects, end, target, source, echo, sb.incidents)
    result.seconds = time.monotonic() - started
    echo(
        f"\n{sum(o.frame is not None for o in result.outcomes)} reports in "
        f"{result.seconds:.1f} s from {result.source}\n"
        f"  frames (Parquet): {target / 'frames'}\n"
        f"  charts (PNG):     {target / 'charts'}\n"
        f"  page:             {result.index}"
    )
    return result


def _run(
    client: ReportingClient,
    subjects: Subjects,
    end: datetime,
    out: Path,
    source: str,
    echo: Echo,
    incidents: list[dict[str, Any]] | None = None,
) -> DemoResult:
    frames_dir, charts_dir = out / "frames", out / "charts"
    frames_dir.mkdir(parents=True, exist_ok=True)
    charts_dir.mkdir(parents=True, exist_ok=True)
    echo(f"edgereports demo: every preset from {source}")
    result = DemoResult(
        out=out, index=out / "index.html", source=source, incidents=list(incidents or [])
    )
    for plan in plan_reports(subjects, end):
        outcome = ReportOutcome(plan)
        result.outcomes.append(outcome)
        title = f"\n== {plan.slug} · {plan.purpose.rstrip('.')}"
        if plan.skipped:
            echo(f"{title}\n   skipped: {plan.skipped}")
            continue
        began = time.monotonic()
        with warnings.catch_warnings(record=True) as seen:  # shown with the report, once
            warnings.simplefilter("always", EdgeReportsWarning)
            outcome.frame, outcome.error = _fetch(client, plan)
        outcome.seconds = time.monotonic() - began
        frame = outcome.frame
        rows = "no frame" if frame is None else f"{len(frame)} rows"
        echo(f"{title} · {rows} · {outcome.seconds:.2f} s")
        for note in dict.fromkeys(str(w.message) for w in seen):
            echo(f"   note: {note}")
        if outcome.error:
            echo(f"   error: {outcome.error}")
        if frame is None:
            continue
        outcome.parquet = save_parquet(frame, frames_dir / f"{plan.slug}.parquet")
        outcome.chart = _chart(frame, charts_dir / f"{plan.slug}.png", plan.note)
        echo(_indent(summary_table(frame).to_string(index=False)))
    result.health, result.health_error = _health(client, subjects, end)
    count = 0 if result.health is None else len(result.health)
    flagged = result.health_error or f"{count} flag(s)"
    echo(f"\n== health · {len(subjects.devices)} devices over the last 7 days · {flagged}")
    if result.health is not None and len(result.health):
        echo(_indent(flags_table(result.health)))
    for incident in result.incidents:
        echo(f"   injected into the sandbox: {incident_text(incident)}")
    result.clock = client.last_answer_date
    write_index(result)
    return result


def _health(
    client: ReportingClient, subjects: Subjects, end: datetime
) -> tuple[pd.DataFrame | None, str | None]:
    """The health flags of the account's devices over the daily presets' range, or why not."""
    if not subjects.devices:
        return None, "no devices listed (pass --msisdn for the live service)"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EdgeReportsWarning)  # the presets said them
            flags = health(
                client,
                account_id=subjects.account_id,
                msisdn=list(subjects.devices),
                start=end - DAILY_RANGE,
                end=end,
            )
    except AuthError:
        raise
    except EdgeReportsError as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return flags, None


def _fetch(client: ReportingClient, plan: PlannedReport) -> tuple[pd.DataFrame | None, str | None]:
    """Fetch a plan's reports into one frame; failures become text (a refused key raises)."""
    try:
        if len(plan.reports) == 1:
            return client.fetch(plan.reports[0], on_error="collect"), None
        got = client.fetch_many(plan.reports)
    except AuthError:
        raise  # every other preset would be refused too
    except EdgeReportsError as exc:
        return None, f"{type(exc).__name__}: {exc}"
    frames = [f for f in got.frames if f is not None]
    error = None
    if got.failures:
        error = (
            f"{len(got.failures)} of {len(plan.reports)} requests failed; first: {got.failures[0]}"
        )
    if not frames:
        return None, error
    frame = concat_frames(frames)
    frame.attrs["requests"] = len(plan.reports)
    return frame, error


def _chart(frame: pd.DataFrame, path: Path, note: str = "") -> Path:
    """Draw the frame's chart, save it as PNG and close it (the backend is the caller's).

    ``note`` (e.g. ``handsets``) is added to the title's first line.
    """
    ax = plot(frame)
    if note:
        first, sep, rest = ax.get_title().partition("\n")
        ax.set_title(f"{first} ({note}){sep}{rest}")
    path.write_bytes(figure_png(ax, dpi=110))
    return path


def _indent(text: str) -> str:
    return "\n".join(f"   {line}" for line in text.splitlines())
