"""Building report requests: the ``Report`` builder, its terms, times and vocabularies.

Building a request is pure: nothing here imports pandas or the HTTP stack.

Example:
    >>> from edgereports.query import Report
    >>> Report(account_id="A").now().metric("ue_connections", "COUNT").to_request()["end_date_time"]
    'NOW'
"""

from __future__ import annotations

from .report import Report
from .service_report import ServiceReport
from .terms import Clause, Filter, Metric, MetricFilter
from .times import NOW

__all__ = ["NOW", "Clause", "Filter", "Metric", "MetricFilter", "Report", "ServiceReport"]
