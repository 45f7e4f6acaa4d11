"""The export's map: one folder per format, the formats apart, the shared modules below both.

The import contracts of pyproject.toml stay few (tests/test_layers.py); this checks the export's
inner map on the same import graph.
"""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest

import edgereports.export

FORMATS = ("edgereports.export.parquet", "edgereports.export.delta")
#: What both formats build on (the entry points run, read, maintain and units may use both).
SHARED = (
    "bounds",
    "client",
    "estimate",
    "fanout",
    "files",
    "job",
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
    assert modules - set(SHARED) == {"__init__", "run", "read", "maintain", "units"}


def test_the_formats_do_not_know_each_other(graph: grimp.ImportGraph) -> None:
    parquet, delta = FORMATS
    assert not graph.chain_exists(parquet, delta, as_packages=True)
    assert not graph.chain_exists(delta, parquet, as_packages=True)


@pytest.mark.parametrize("name", SHARED)
def test_a_shared_module_uses_no_format(graph: grimp.ImportGraph, name: str) -> None:
    for fmt in FORMATS:
        assert not graph.chain_exists(f"edgereports.export.{name}", fmt, as_packages=True), fmt
