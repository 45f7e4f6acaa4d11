"""The sandbox's layout: no import cycles (not even under TYPE_CHECKING) and three parts that
import downwards only (web → engine → model), with clock, problems and extras shared."""

from __future__ import annotations

import pytest

grimp = pytest.importorskip("grimp")

SANDBOX = "edgereports.sandbox"
RANK = {"model": 0, "engine": 1, "web": 2}
SHARED = {f"{SANDBOX}.clock", f"{SANDBOX}.problems", f"{SANDBOX}.extras"}


@pytest.fixture(scope="module")
def edges() -> dict[str, set[str]]:
    graph = grimp.build_graph("edgereports", include_external_packages=False)
    mods = {m for m in graph.modules if m == SANDBOX or m.startswith(f"{SANDBOX}.")}
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in mods}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[2] in RANK else "top"


def test_no_import_cycles(edges: dict[str, set[str]]) -> None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for nxt in sorted(edges[module] & edges.keys()):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_parts_import_downwards(edges: dict[str, set[str]]) -> None:
    wrong = []
    for module, imported in edges.items():
        for target in imported:
            a, b = _part(module), _part(target)
            if a in RANK and (
                (b in RANK and RANK[b] > RANK[a]) or (b == "top" and target not in SHARED)
            ):
                wrong.append((module, target))
    assert sorted(wrong) == []


def test_nothing_outside_the_sandbox(edges: dict[str, set[str]]) -> None:
    outside = {t for imported in edges.values() for t in imported if not t.startswith(SANDBOX)}
    assert outside == set()
