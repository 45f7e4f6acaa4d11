"""The ipywidgets explorer of the report presets.

ipywidgets, matplotlib and pyarrow are imported only when an explorer is built or a file is
written. Every output of the explorer is a widget value (an HTML table, a PNG image, a text
area), so it works the same in JupyterLab, Notebook and VS Code, and tests can drive it
in-process: set the widgets' values, call ``button.click()`` and read :attr:`Explorer.frame`
and :attr:`Explorer.message`.

Example:
    >>> from edgereports.widgets import Explorer
    >>> explorer = Explorer(client, account_id=acct)
    >>> explorer.report().to_request()["metrics"]  # the first preset, time usage
    [{'name': 'time_usage_seconds', 'aggregation_type': 'COUNT'}]
"""

from __future__ import annotations

import html
import json
import time
import warnings
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import presets
from .errors import EdgeReportsError, EdgeReportsWarning, InputError
from .explorer_parts import (
    error_text,
    preset_options,
    relative_days,
    short,
    table_html,
    tags_input,
)
from .plotting import chart_png
from .query import Report
from .query.timegrid import relative_end, resolve_relative
from .query.times import parse_tz

if TYPE_CHECKING:
    import pandas as pd

    from .inventory.model import Inventory
    from .reporting import ReportingClient

__all__ = ["COMPARE_OPTIONS", "DIMENSION_PARAMS", "RANGES", "Explorer"]

#: The range choices: dates from the pickers, a relative range ending today (``7d``, ``30d``)
#: or at the current hour (``24h``), or a service keyword ending at NOW.
RANGES = ("dates", "7d", "30d", "24h", "LAST HOUR", "LAST DAY", "LAST WEEK", "LAST MONTH")
#: Preset parameters that take dimension values.
DIMENSION_PARAMS = ("msisdn", "imsi", "customer_site_id", "device", "customer_name")
#: The comparison choices (``compare=`` of ``client.fetch``): none, or another period.
COMPARE_OPTIONS = [("none", None), ("previous period", "previous_period"),
                   ("previous week", "previous_week"), ("previous year", "previous_year"),
                   ("previous year, same weekday", "previous_year_dow")]  # fmt: skip
_DEFAULT_GRAIN = "preset default"


class Explorer:
    """An ipywidgets explorer: pick a preset, a range and values, run it, see the frame and chart.

    Controls: the API version (v1 or v2: which presets are offered; a v2 preset is fetched with
    ``client.for_version("v2")``); the preset; the account; the range (two date pickers, or a
    ``LAST ...`` keyword ending at ``NOW``; ``NOW`` presets have none) and the zone the dates
    are midnight in; the granularity (the preset's, or DAY/HOUR); the dimension values the
    preset needs (MSISDNs, IMSIs, sites) and the percentile. Buttons: **Run** (a progress bar,
    then the frame's first rows and size, and its chart), **Show request** (the JSON request and
    the equivalent Python code), **Export** (the current frame to a Parquet file) and, in the
    Health tab, **Check health** (``er.health`` over the range; later charts draw the flags
    that concern them). **Compare** also fetches the previous period (or year) and draws it
    lighter behind the chart. Errors appear as a message in the widget, never as a traceback.

    Args:
        client: the reporting client (sandbox or live service).
        account_id: the account to report on.
        values: known dimension values per preset parameter, e.g.
            ``{"msisdn": [...], "customer_site_id": [...]}``; the first of each is preselected.
        start: the first day of the date range (default: 7 days before ``end``).
        end: the day after the range (default: today in ``tz`` on the service's clock).
        tz: the zone the dates are midnight in: an offset such as ``"+05:30"``, ``"UTC"`` or an
            IANA name.
        export_dir: the directory of the default export file name.
        inventory: the account's :class:`~edgereports.Inventory`, which **Check health**
            judges (default: the known MSISDNs, a partial list).

    Example:
        >>> explorer = Explorer(client, account_id=acct)
        >>> print(explorer.python_code().splitlines()[0])
        import edgereports as er
    """

    def __init__(
        self,
        client: ReportingClient,
        account_id: str,
        *,
        values: Mapping[str, Sequence[str]] | None = None,
        start: date | None = None,
        end: date | None = None,
        tz: str = "UTC",
        export_dir: str | Path = ".",
        inventory: Inventory | None = None,
    ) -> None:
        import ipywidgets as w

        self.client = client
        self.inventory = inventory
        self.export_dir = Path(export_dir)
        self.frame: pd.DataFrame | None = None
        self.message = ""
        self.error: BaseException | None = None
        known = {k: [str(v) for v in vs] for k, vs in (values or {}).items()}
        end = end or _service_today(client, tz)
        start = start or end - timedelta(days=7)
        wide = w.Layout(width="auto")
        self.version = w.ToggleButtons(
            options=["v1", "v2"],
            value=getattr(client, "api_version", "v1"),
            description="API",
            tooltip="the reporting API version: v1 or the live service's v2",
        )
        self.preset = w.Dropdown(
            options=preset_options(str(self.version.value)),
            description="Preset",
            layout=w.Layout(width="46em"),
        )
        self.account = w.Text(value=account_id, description="Account")
        self.range = w.Dropdown(options=list(RANGES), value="dates", description="Range")
        self.start = w.DatePicker(value=start, description="From")
        self.end = w.DatePicker(value=end, description="To")
        self.tz = w.Text(value=tz, description="Zone", layout=w.Layout(width="14em"))
        self.granularity = w.Dropdown(
            options=[_DEFAULT_GRAIN, "DAY", "HOUR"], description="Granularity"
        )
        self.compare = w.Dropdown(options=COMPARE_OPTIONS, value=None, description="Compare")
        self.percentile = w.BoundedFloatText(
            value=presets.DEFAULT_PERCENTILE, min=0, max=100, description="Percentile"
        )
        tags = tags_input()
        self.dimensions = {
            name: tags(
                param=name,
                value=known.get(name, [])[:1],
                allowed_tags=known.get(name, []),
                allow_duplicates=False,
            )
            for name in DIMENSION_PARAMS
        }
        self._dimension_rows = {
            name: w.HBox([w.Label(name, layout=w.Layout(width="10em")), tags])
            for name, tags in self.dimensions.items()
        }
        self.run_button = w.Button(description="Run", button_style="primary", icon="play")
        self.request_button = w.Button(description="Show request", icon="code")
        self.export_path = w.Text(description="File", layout=w.Layout(width="32em"))
        self.export_button = w.Button(description="Export", icon="download")
        self.progress = w.IntProgress(value=0, min=0, max=1, layout=w.Layout(visibility="hidden"))
        self.status = w.HTML()
        self.table = w.HTML()
        self.chart = w.Image(format="png", layout=w.Layout(max_width="100%"))
        self.request_text = w.Textarea(layout=w.Layout(width="100%", height="22em"))
        self.flags: pd.DataFrame | None = None
        self.health_button = w.Button(description="Check health", icon="heartbeat")
        self.health = w.HTML()
        self.outputs = w.Tab(
            children=[self.table, self.chart, self.request_text, w.VBox([self.health_button,
                                                                         self.health])]
        )  # fmt: skip
        self.outputs.titles = ("Frame", "Chart", "Request", "Health")
        self.widget = w.VBox(
            [
                self.version,
                self.preset,
                w.HBox([self.account, self.granularity, self.percentile, self.compare]),
                w.HBox([self.range, self.start, self.end, self.tz]),
                *self._dimension_rows.values(),
                w.HBox(
                    [self.run_button, self.request_button, self.export_path, self.export_button]
                ),
                w.HBox([self.progress, self.status], layout=wide),
                self.outputs,
            ]
        )
        self.version.observe(lambda _change: self._pick_version(), names="value")
        self.preset.observe(lambda _change: self._new_preset(), names="value")
        self.range.observe(lambda _change: self._sync(), names="value")
        self.run_button.on_click(lambda _b: self._guard(self.run))
        self.request_button.on_click(lambda _b: self._guard(self.show_request))
        self.export_button.on_click(lambda _b: self._guard(self.export))
        self.health_button.on_click(lambda _b: self._guard(self.check_health))
        self._known_msisdns = known.get("msisdn", [])
        self._sync()

    # -- what the controls say -------------------------------------------------------------

    def _new_preset(self) -> None:
        """A new preset starts from its own granularity (the last one's does not carry over)."""
        self.granularity.value = _DEFAULT_GRAIN
        self._sync()

    def _pick_version(self) -> None:
        """Offer the presets of the chosen API version."""
        self.preset.options = preset_options(str(self.version.value))
        self._sync()

    def _sync(self) -> None:
        """Show the controls the selected preset uses; default the export file name."""
        info = presets.get(str(self.preset.value))
        params = {p.name for p in info.params}
        for name, row in self._dimension_rows.items():
            row.layout.display = "" if name in params else "none"
        self.percentile.layout.display = "" if "percentile" in params else "none"
        for control in (self.range, self.tz, self.granularity, self.compare):
            control.disabled = info.is_now
        for control in (self.start, self.end):
            control.disabled = info.is_now or self.range.value != "dates"
        self._show_range()
        self.export_path.value = str(self.export_dir / f"{info.name}.parquet")

    def _show_range(self) -> None:
        """Show a relative range's days (``7d``, ``30d``) in the disabled date pickers."""
        days = relative_days(self.client, str(self.range.value), str(self.tz.value))
        if days is not None:
            self.start.value, self.end.value = days

    def _params(self) -> dict[str, Any]:
        """The preset's keyword arguments, as the controls give them."""
        info = presets.get(str(self.preset.value))
        names = {p.name for p in info.params}
        params: dict[str, Any] = {}
        if "account_id" in names:
            params["account_id"] = self.account.value.strip() or None
        if "start" in names and not info.is_now:  # a current-value preset stays at NOW
            params.update(zip(("start", "end"), self._range(), strict=True))
        for name in DIMENSION_PARAMS:
            if name in names:
                chosen = [str(v).strip() for v in self.dimensions[name].value if str(v).strip()]
                params[name] = None if not chosen else chosen[0] if len(chosen) == 1 else chosen
        if "percentile" in names:
            value = float(self.percentile.value)
            params["percentile"] = int(value) if value.is_integer() else value
        return params

    def _compare(self) -> str | None:
        """The comparison chosen (None for none, and for a NOW preset)."""
        value = self.compare.value
        return None if value is None or presets.get(str(self.preset.value)).is_now else str(value)

    def _range(self) -> tuple[str, str]:
        choice = str(self.range.value)
        end = relative_end(choice)
        if choice != "dates" and end is None:
            return choice, "NOW"
        try:
            zone = parse_tz(self.tz.value)
        except EdgeReportsError as exc:
            raise InputError(f"Zone: {exc}") from None
        if end is not None:  # a relative range: on the service's clock, in the explorer's zone
            now = self.client.service_now()
            bounds = (resolve_relative(choice, zone, now), resolve_relative(end, zone, now))
            return tuple(b.isoformat() for b in bounds if b is not None)  # type: ignore[return-value]
        if self.start.value is None or self.end.value is None:
            raise InputError("pick both dates (From and To), or choose a LAST ... range")
        return tuple(  # type: ignore[return-value]
            datetime.combine(d, datetime.min.time(), tzinfo=zone).isoformat()
            for d in (self.start.value, self.end.value)
        )

    def report(self) -> Report:
        """Build the report the controls describe.

        Returns:
            The report (the preset, with the chosen granularity when one is chosen).

        Raises:
            InputError: a missing or invalid value (``QueryError`` names the field).
        """
        report = presets.build(str(self.preset.value), **self._params())
        if self.granularity.value != _DEFAULT_GRAIN and not report.is_now:
            report = report.granularity(str(self.granularity.value))
        report.to_request()  # validate now, before any request
        return report

    def python_code(self) -> str:
        """Return Python code that builds the same report (and fetches it with a client)."""
        name = str(self.preset.value)
        lines = ["import edgereports as er", "", f"report = er.presets.{name}("]
        lines += [f"    {k}={v!r}," for k, v in self._params().items() if v is not None]
        lines.append(")")
        if self.granularity.value != _DEFAULT_GRAIN and not presets.get(name).is_now:
            lines[-1] += f".granularity({self.granularity.value!r})"
        compare = f", compare={self.compare.value!r}" if self._compare() else ""
        lines += [f"df = client.fetch(report{compare})  # client = er.ReportingClient(key, url)"]
        return "\n".join(lines) + "\n"

    # -- buttons ---------------------------------------------------------------------------

    def run(self) -> pd.DataFrame:
        """Fetch the report; show the frame's head and size, and its chart.

        Returns:
            The frame (also kept as :attr:`frame`).

        Raises:
            EdgeReportsError: the report is invalid or the fetch failed (the buttons show it).
        """
        self.progress.value, self.progress.bar_style = 0, ""  # nothing left of the last run
        self.progress.layout.visibility = "hidden"
        try:
            report = self.report()
        except BaseException:
            self._clear()  # no stale answer
            raise
        self.request_text.value = self._request_text(report)
        self.run_button.disabled = True
        self.progress.value, self.progress.bar_style = 0, "info"
        self.progress.layout.visibility = "visible"
        self._say("Running …")
        began = time.monotonic()
        try:
            client = self.client
            if getattr(client, "api_version", "v1") != report.api_version:
                client = client.for_version(report.api_version)
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always", EdgeReportsWarning)
                frame = client.fetch(report, on_error="collect", compare=self._compare())
        except BaseException:
            self.progress.value, self.progress.bar_style = 1, "danger"  # full and red
            self._clear()  # no stale answer
            raise
        finally:
            self.run_button.disabled = False
        self.progress.value, self.progress.bar_style = 1, "success"
        self.frame = frame
        self.table.value = table_html(frame, str(self.tz.value))
        # times in the explorer's zone (also for LAST ... reports, whose request has no
        # offset); the flags on charts with a time axis
        self.chart.value = chart_png(frame, tz=str(self.tz.value), flags=self.flags, timed=True)
        self.chart.layout.display = None
        failures = frame.attrs.get("failures") or []
        text = (
            f"{len(frame)} rows × {len(frame.columns)} columns in {time.monotonic() - began:.1f} s"
        )
        notes = list(dict.fromkeys(str(w.message) for w in seen))
        if failures:
            first = short(str(failures[0]))
            self._say(f"{text}; {len(failures)} request(s) failed, first: {first}", "warn")
        elif notes:  # a top talker or an empty result: the numbers need this to be read right
            self._say(f"{text}; " + "; ".join(notes), "warn")
        else:
            self._say(text)
        self.outputs.selected_index = 1 if len(frame) else 0
        return frame

    def check_health(self) -> pd.DataFrame:
        """Flag the account over the chosen range (``er.health``): its inventory when the
        explorer has one, else the known MSISDNs (``values["msisdn"]``, else those picked) as a
        partial list; the Health tab shows the episodes and flags, and later charts draw the
        flags that concern them.

        Returns:
            The flags (also kept as :attr:`flags`).
        """
        from .health import flags_html, health

        given: dict[str, Any] = (
            {"inventory": self.inventory}
            if self.inventory is not None
            else {"msisdn": self._known_msisdns or list(self.dimensions["msisdn"].value)}
        )
        start, end = self._range()
        self._say("Checking health …")
        flags = health(self.client.for_version("v1"), **given,
                       account_id=self.account.value.strip(), start=start, end=end,
                       tz=str(self.tz.value))  # fmt: skip
        self.flags = flags
        self.health.value = flags_html(flags, title=None)
        episodes = len(flags.attrs.get("episodes") or [])
        self._say(f"{episodes} episode(s) and {len(flags)} flag(s) over "
                  f"{flags.attrs.get('subjects', 0)} subscriber(s)")  # fmt: skip
        self.outputs.selected_index = 3
        return flags

    def show_request(self) -> str:
        """Show the request JSON and the equivalent Python code; returns the text shown."""
        text = self._request_text(self.report())
        self.request_text.value = text
        self.outputs.selected_index = 2
        self._say("Request shown in the Request tab")
        return text

    def _request_text(self, report: Report) -> str:
        return (
            json.dumps(report.to_request(), indent=2)
            + "\n\n# the same report in Python\n"
            + self.python_code()
        )

    def export(self) -> Path:
        """Write the current frame to the Parquet file named in the File box.

        Returns:
            The file written.

        Raises:
            InputError: no frame yet, or no file name.
            OSError: the file cannot be written.
        """
        if self.frame is None:
            raise InputError("nothing to export yet: press Run first")
        name = self.export_path.value.strip()
        if not name:
            raise InputError("give a file name to export to")
        from .export import save_parquet

        path = save_parquet(self.frame, Path(name).expanduser())
        self._say(f"Wrote {len(self.frame)} rows to {path}")
        return path

    # -- messages --------------------------------------------------------------------------

    def _guard(self, action: Any) -> None:
        """Run a button's action; show any error as a message (never a traceback)."""
        self.error = None
        try:
            action()
        except Exception as exc:  # the UI boundary: every error becomes a message
            self.error = exc
            kind = type(exc).__name__
            prefix = "" if isinstance(exc, EdgeReportsError) else "unexpected "
            self._say(f"{prefix}{kind}: {error_text(exc)}", "error")

    def _clear(self) -> None:
        """Forget the last answer: no frame, no table, no chart (not even an empty image)."""
        self.frame, self.table.value, self.chart.value = None, "", b""
        self.chart.layout.display = "none"

    def _say(self, text: str, level: str = "info") -> None:
        self.message = text
        color = {"info": "#1f3a5f", "warn": "#8a6d00", "error": "#b42318"}[level]
        self.status.value = f'<span style="color:{color}">{html.escape(text)}</span>'

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


def _service_today(client: ReportingClient, tz: str) -> date:
    """Today in ``tz`` on the service's clock (one cheap request when none is known yet)."""
    try:
        zone = parse_tz(tz)
    except EdgeReportsError:
        zone = UTC
    return client.service_now().astimezone(zone).date()
