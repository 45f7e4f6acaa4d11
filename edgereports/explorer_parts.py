"""The explorer's parts that are not controls: its tags input, its table, its chart, its messages.

ipywidgets and matplotlib are imported when a part is made, not with the module.
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import TYPE_CHECKING, Any

from . import presets
from .errors import ApiError, EdgeReportsError, InputError
from .query.timegrid import relative_end, resolve_relative
from .query.times import parse_tz

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "HEAD_ROWS",
    "error_text",
    "preset_options",
    "relative_days",
    "short",
    "table_html",
    "tags_input",
]

#: The rows of the frame the explorer's table shows.
HEAD_ROWS = 10


def table_html(frame: pd.DataFrame, tz: str) -> str:
    """The frame's first rows as HTML, times in ``tz`` (the zone of the chart beside it)."""
    from .plotting import shown_columns

    shown = frame.head(HEAD_ROWS)
    try:
        zone = parse_tz(tz)
    except EdgeReportsError:
        zone = None
    times = [c for c in ("time_stamp", "start_time", "end_time") if c in shown.columns]
    if zone is not None and times:
        shown = shown.assign(**{c: shown[c].dt.tz_convert(zone) for c in times})
    head = shown_columns(shown).to_html(index=False, border=0, na_rep="")
    return f"<p><b>{len(frame)} rows × {len(frame.columns)} columns</b> (first rows)</p>{head}"


_URL = re.compile(r"\b(?:POST|GET)?\s*https?://\S+")
_LONGEST = 300


def short(text: str) -> str:
    """A message without URLs, cut to a few lines' length."""
    text = " ".join(_URL.sub("", text).split())
    return text if len(text) <= _LONGEST else text[: _LONGEST - 1] + "…"


def error_text(exc: BaseException) -> str:
    """What an error says, short: a service error as ``HTTP 404: <its message>``, no URL and no
    raw JSON."""
    if isinstance(exc, ApiError):
        said = exc.body_excerpt
        try:
            body = json.loads(said)
        except ValueError:
            body = None
        if isinstance(body, dict) and body.get("message"):
            said = str(body["message"])
            if body.get("field"):
                said += f" (field {body['field']})"
        return short(f"HTTP {exc.status_code}: {said}" if said else str(exc))
    return short(str(exc))


def tags_input() -> Any:
    """A ``TagsInput`` whose values outside its ``allowed_tags`` are refused with an
    :class:`InputError` that names the parameter and the values it knows (not a TraitError)."""
    import ipywidgets as w
    import traitlets

    class Tags(w.TagsInput):  # type: ignore[misc]
        def __init__(self, *, param: str, **kwargs: Any) -> None:
            self.param = param
            super().__init__(**kwargs)

        @traitlets.validate("value")
        def _validate_value(self, proposal: Any) -> Any:
            allowed = list(self.allowed_tags)
            unknown = [v for v in proposal["value"] if allowed and v not in allowed]
            if unknown or "" in proposal["value"]:
                shown = ", ".join(allowed[:5]) + (", …" if len(allowed) > 5 else "")
                raise InputError(
                    f"{self.param}: {(unknown or [''])[0]!r} is not one of the values the "
                    f"explorer was given ({shown}); pass it in values={{{self.param!r}: [...]}}"
                )
            return proposal["value"]

    return Tags


def preset_options(api_version: str) -> list[tuple[str, str]]:
    """The preset dropdown's options for one API version."""
    return [
        (f"{p.name} — {p.purpose.rstrip('.')}", p.name)
        for p in presets.CATALOGUE
        if p.api_version == api_version
    ]


def relative_days(client: Any, choice: str, tz: str) -> tuple[date, date] | None:
    """The days (From, To: the day after) a relative range (``7d``, ``30d``) covers, resolved as
    Run resolves it (the service's clock, else the local one, in ``tz``); None for other choices
    or a zone that does not parse (Run says what is wrong)."""
    end = relative_end(choice)
    if end is None:
        return None
    try:
        zone = parse_tz(tz)
    except EdgeReportsError:
        return None
    try:
        now = client.service_now()
    except EdgeReportsError:
        now = client.service_now(probe=False)
    first, last = resolve_relative(choice, zone, now), resolve_relative(end, zone, now)
    if first is None or last is None:
        return None
    return first.date(), last.date()
