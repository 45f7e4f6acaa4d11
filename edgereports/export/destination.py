"""The contract between the export and where it stores rows: one small protocol per format.

The shared layer (:mod:`.engine`) plans a report's windows, fetches them, cuts each window's
rows into UTC days with the time grid (:mod:`.days`) and works out what the write means for
the table's progress (:mod:`.ledger`); a destination only stores. It opens one report's table
(:meth:`Destination.open`), which then

- answers its marks (:meth:`Table.mark`: the watermark is read from them) and what it records
  of the report (:meth:`Table.recorded`: the definition, the fan-out values held whole and
  those whose rows it keeps),
- replaces whole UTC days atomically (:meth:`Table.write`), the rows of some fan-out values
  only when asked, recording marks with them,
- removes the days outside a range (:meth:`Table.remove_outside`, after a full refresh),
- records the values it holds (:meth:`Table.record_values`).

The destination also reads a table back (:meth:`Destination.read`) and maintains it
(:meth:`Destination.maintain`). What the rest of the package needs to know of a format without
loading it (object storage, a catalog, the extra to install) are attributes of its
:class:`~.formats.Format`. Adding a format is one class of each kind and a line in
:data:`~.formats.FORMATS` (docs/export.md, "Adding a destination").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Protocol

from .days import DayRows
from .formats import FORMATS, Format
from .ledger import Marks
from .summary import Maintenance, Written
from .values import Values

if TYPE_CHECKING:
    from .job import Job
    from .reports import ReportJob

__all__ = ["FORMATS", "Destination", "Format", "ReadBack", "Recorded", "Table"]


@dataclass(frozen=True)
class Recorded:
    """What a table records of the report it holds.

    Attributes:
        definition: the report's request without its range (``None``: nothing recorded).
        held: the fan-out values held whole from the report's start (``None``: unknown).
        retired: the fan-out values whose rows it keeps, though no run fetches them any more.
    """

    definition: dict[str, Any] | None = None
    held: Values | None = None
    retired: Values | None = None


@dataclass(frozen=True)
class ReadBack:
    """Rows read back from a table: an Arrow table (without ``day``), its shape, the report's
    definition as recorded (``{}`` when none), and the API version it was fetched with (v2
    stamps end the pieces they cover)."""

    table: Any
    shape: str
    definition: dict[str, Any]
    api_version: str = "v1"


class Table(Protocol):
    """One report's table, opened by a :class:`Destination`."""

    location: str

    def mark(self, key: str) -> int | None:
        """The mark named ``key`` (:mod:`.ledger`), or ``None``."""
        ...

    def recorded(self) -> Recorded:
        """What the table records of its report."""
        ...

    def damaged(self) -> list[date]:
        """The days whose data cannot be read back (fetched again by the next run)."""
        ...

    def write(
        self,
        rows: DayRows,
        *,
        values: Mapping[str, Sequence[str]] | None,
        marks: Marks,
        metadata: Mapping[str, Any],
    ) -> Written:
        """Replace the days of ``rows`` with its rows, atomically, recording ``marks``.

        A day without rows is emptied. With ``values``, only the rows of those fan-out values
        are replaced (the rows of the others stay). ``metadata`` (JSON-ready, no secret) is
        stored with the data. Returns what was written; its bytes are those this write added.
        """
        ...

    def remove_outside(self, begin: datetime, end: datetime, *, metadata: Mapping[str, Any]) -> int:
        """Remove every day outside ``[begin, end)`` (a full refresh), recording the removed
        days and the table as contiguous up to ``end`` (:func:`.ledger.removal_marks`);
        returns the days removed."""
        ...

    def record_values(self, held: Values, retired: Values) -> None:
        """Record the fan-out values held whole, and those whose rows are kept."""
        ...

    def refresh(self) -> None:
        """See what other processes committed since the table was opened."""
        ...


class Destination(Protocol):
    """A table format the export writes: Parquet files, a Delta table, an Iceberg table."""

    format: Format

    @property
    def write_errors(self) -> tuple[type[BaseException], ...]:
        """The errors a write may raise that fail only its window (listed; the next run
        retries it)."""
        ...

    def open(
        self,
        job: Job,
        report: ReportJob,
        *,
        create: bool,
        full_refresh: bool = False,
        now: datetime | None = None,
    ) -> Table | None:
        """Open the report's table (created first when missing and ``create``; else ``None``).

        ``full_refresh``: the run rebuilds the table from its start (what it recorded may be
        set aside); ``now``: the service's present (a mark past it is not trusted).

        Raises:
            ConfigError: the table holds another report's data, or cannot be read.
            OSError: the store failed.
        """
        ...

    def lock(
        self, job: Job, reports: Sequence[ReportJob], days: Mapping[str, list[date]] | None
    ) -> AbstractContextManager[object]:
        """Hold what keeps other runs from writing the same data at once (``days``: a unit's,
        by report); formats whose commits need no lock hold nothing."""
        ...

    def guard(self, location: str, secrets: Sequence[str]) -> AbstractContextManager[object]:
        """Turn the store's errors while opening or reading into one redacted line."""
        ...

    def read(
        self,
        job: Job | None,
        location: str,
        start: datetime | None,
        end: datetime | None,
        options: Mapping[str, str] | None,
    ) -> ReadBack:
        """Read the rows of ``[start, end)`` (the range rule of :mod:`.bounds`)."""
        ...

    def holds(self, location: str) -> bool:
        """True when a local ``location`` holds a table of this format."""
        ...

    def maintain(self, job: Job, report: ReportJob) -> Maintenance:
        """Compact the report's table and drop what it no longer needs; rows unchanged."""
        ...
