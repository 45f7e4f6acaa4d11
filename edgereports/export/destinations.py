"""The destinations by the job's ``format``: one implementation of the contract each."""

from __future__ import annotations

from collections.abc import Callable

from .delta.destination import DeltaDestination
from .destination import Destination
from .iceberg.destination import IcebergDestination
from .parquet.destination import ParquetDestination

__all__ = ["destination"]


def destination(name: str, checkpoint: Callable[[str], None] | None = None) -> Destination:
    """The destination of the format ``name`` (a key of :data:`.destination.FORMATS`).

    Args:
        name: ``"parquet"``, ``"delta"`` or ``"iceberg"``.
        checkpoint: called at the named points of the write path (tests stop a run there).
    """
    makers: dict[str, Callable[[], Destination]] = {
        "parquet": lambda: ParquetDestination(checkpoint),
        "delta": DeltaDestination,
        "iceberg": IcebergDestination,
    }
    return makers[name]()
