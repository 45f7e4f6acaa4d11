"""Health flags: what an operations analyst acts on, from each subject's own history.

:func:`health` pulls one hourly report of an account's subscribers through a
:class:`~edgereports.ReportingClient` and returns one row per flag (``site_dark``,
``device_offline``, ``usage_drop``, ``usage_spike``, ``sim_idle``); :func:`flags_html` renders the
flags as an HTML table for a report page, :func:`flags_table` as text. Importing this package
loads no pandas.
"""

from __future__ import annotations

from .api import COLUMNS, DEFAULT_HISTORY, KINDS, health
from .render import flags_html, flags_table

__all__ = ["COLUMNS", "DEFAULT_HISTORY", "KINDS", "flags_html", "flags_table", "health"]
