"""The export's map: one folder per destination, the destinations apart, the shared layer
(the contract, the engine, the days, the ledger) below them all.

The import contracts of pyproject.toml stay few (tests/test_layers.py); this checks the export's
inner map on the same import graph.
"""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest

import edgereports.export

FORMATS = ("edgereports.export.parquet", "edgereports.export.delta", "edgereports.export.iceberg")
#: What every destination builds on (the entry points, and the registry of destinations, may
#: use them all).
SHARED = (
    "availability",
    "bounds",
    "client",
    "days",
    "described",
    "destination",
    "engine",
    "estimate",
    "fanout",
    "files",
    "formats",
    "job",
    "ledger",
    "plan",
    "reports",
    "storage",
    "summary",
    "values",
    "windows",
)


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("edgereports")


def test_every_top_module_is_shared_or_an_entry_point() -> None:
    modules = {p.stem for p in Path(edgereports.export.__path__[0]).glob("*.py")}
    entry = {"__init__", "destinations", "run", "read", "maintain", "units"}
    assert modules - set(SHARED) == entry


@pytest.mark.parametrize("one", FORMATS)
def test_the_destinations_do_not_know_each_other(graph: grimp.ImportGraph, one: str) -> None:
    for other in FORMATS:
        if other != one:
            assert not graph.chain_exists(one, other, as_packages=True), other


@pytest.mark.parametrize("name", SHARED)
def test_a_shared_module_uses_no_format(graph: grimp.ImportGraph, name: str) -> None:
    for fmt in FORMATS:
        assert not graph.chain_exists(f"edgereports.export.{name}", fmt, as_packages=True), fmt
