"""The export's formats as the job file names them, and what the package knows of each
without loading it (the destinations themselves: :mod:`.destinations`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FORMATS", "Format"]


@dataclass(frozen=True)
class Format:
    """What the rest of the package knows of a destination without loading it.

    Attributes:
        name: the value of the job's ``format`` key.
        title: the format's name in messages.
        object_storage: ``output`` may be an object-store URI, and ``[storage]`` applies.
        catalog: the tables live in a catalog (the job's ``catalog`` key applies).
        extra: the package extra it needs (``pip install 'edgereports[EXTRA]'``), if any.
    """

    name: str
    title: str
    object_storage: bool = False
    catalog: bool = False
    extra: str | None = None

    @property
    def install_hint(self) -> str:
        """The pip command that installs what the format needs."""
        return f"pip install 'edgereports[{self.extra}]'" if self.extra else ""


#: The formats an export writes, by the job's ``format`` value; the first is the default.
FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("parquet", "Parquet"),
        Format("delta", "Delta", object_storage=True, extra="delta"),
        Format("iceberg", "Iceberg", object_storage=True, catalog=True, extra="iceberg"),
    )
}
