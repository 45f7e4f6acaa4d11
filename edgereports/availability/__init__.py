"""Availability: how many hours each site, eNodeB and subscriber was up, with the rule written.

:func:`availability` judges an account's hours as :func:`~edgereports.health` does and counts
them per site, eNodeB or subscriber and bucket: available, unavailable, excluded (maintenance,
inactive) and unknown hours, and ``availability_pct`` (docs: "Availability");
:func:`ledger_series` gives the ledger's long form, which the export writes as a table, and
:func:`ledger_table` renders it as text. Importing this package loads no pandas or numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._dependencies import lazy_names
from .api import availability, check_by, check_granularity
from .columns import BY, COLUMNS, GRANULARITIES, SERIES, aggregation, place_columns

if TYPE_CHECKING:
    from .frame import ledger_series
    from .hours import RULE, STATES
    from .render import ledger_table

__all__ = [
    "BY",
    "COLUMNS",
    "GRANULARITIES",
    "RULE",
    "SERIES",
    "STATES",
    "aggregation",
    "availability",
    "check_by",
    "check_granularity",
    "ledger_series",
    "ledger_table",
    "place_columns",
]

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "ledger_series": ".frame",
        "RULE": ".hours",
        "STATES": ".hours",
        "ledger_table": ".render",
    },
    globals(),
    __all__,
)
