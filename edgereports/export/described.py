"""What a table format (Delta, Iceberg) records of the report it holds, and reads back.

A table keeps a description of its report (name, shape, definition, API version) beside its
data; it is checked against the job's report whenever the table is opened, and read back as
the fan-out values it holds (:class:`~edgereports.export.destination.Recorded`). Its columns
are the report's frame and the partition column ``day``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._dependencies import lazy_import
from ..errors import ConfigError, redact
from ..schema import schema_for
from .days import DAY_COLUMN
from .destination import Recorded
from .reports import ReportJob
from .values import read_values, split_definition

pa = lazy_import("pyarrow")

__all__ = ["check_identity", "describe_report", "recorded_of", "table_dimensions", "table_schema"]


def table_dimensions(report: ReportJob) -> tuple[str, ...]:
    """The dimension columns of the report's table (none for SIM counts)."""
    return () if report.shape == "sim_count" else tuple(report.report.dimensions or ())


def describe_report(report: ReportJob) -> dict[str, Any]:
    """The description a table records of ``report`` (JSON-ready)."""
    return {
        "report": report.name,
        "shape": report.shape,
        "definition": json.loads(json.dumps(report.definition())),
        "api_version": report.report.api_version,
    }


def table_schema(report: ReportJob, dims: tuple[str, ...]) -> Any:
    """The Arrow schema of the report's table: its frame's columns, then ``day``."""
    base = schema_for(report.shape).arrow_schema(dims)
    return base.append(pa.field(DAY_COLUMN, pa.date32(), nullable=False))


def recorded_of(recorded: Mapping[str, Any]) -> Recorded:
    """The definition and values a table's stored description records."""
    definition = recorded.get("definition")
    held = read_values(recorded.get("values"))
    if held is None and isinstance(definition, dict):
        held = split_definition(definition)[1]
    retired = read_values(recorded.get("retired")) or {}
    return Recorded(definition if isinstance(definition, dict) else None, held, retired)


def check_identity(recorded: object, report: ReportJob, table: str, location: str) -> None:
    """Refuse a table whose recorded definition is another report's: its identity (metrics,
    dimensions, granularity, the filters other than the fan-out values) differs.

    Args:
        recorded: the definition the table records (None: nothing recorded yet).
        report: the job's report.
        table: the table's kind, for the message (``"Delta table"``).
        location: where the table lies (redacted in the message).

    Raises:
        ConfigError: the table holds another report's data.
    """
    if not isinstance(recorded, dict):
        return
    if split_definition(recorded)[0] != split_definition(describe_report(report)["definition"])[0]:
        raise ConfigError(
            f"report {report.name!r} asks for other data than the {table} at "
            f"{redact(location)} holds (its request changed: metrics, dimensions, filters or "
            "granularity); give the changed report a new name, or remove the table"
        )
