"""Health flags: what an operations analyst acts on, judged only from what is known.

:func:`health` pulls an account's hourly reports through a :class:`~edgereports.ReportingClient`
(per subscriber of an :class:`~edgereports.Inventory`, or of a partial list of MSISDNs) and
returns one row per flag (``site_dark``, ``enodeb_dark``, ``device_offline``, ``usage_drop``,
``usage_spike``, ``sim_idle``), rolled up into episodes per eNodeB or site; :func:`merge` joins
the frames of shards; :func:`flags_html` renders them as an HTML section for a report page,
:func:`flags_table` as text. Importing this package loads no pandas or numpy.
"""

from __future__ import annotations

from .api import DEFAULT_HISTORY, KINDS, health, parse_shard
from .frame import COLUMNS, merge
from .render import flags_html, flags_table

__all__ = [
    "COLUMNS",
    "DEFAULT_HISTORY",
    "KINDS",
    "flags_html",
    "flags_table",
    "health",
    "merge",
    "parse_shard",
]
