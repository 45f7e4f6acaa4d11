"""Every docstring example of the package runs: ``>>>`` lines give the output they show.

An example marked ``+SKIP`` needs a live service (a client, a key); everything else runs here,
module by module, in a fresh working directory.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import edgereports


def modules() -> list[str]:
    root = Path(edgereports.__file__).parent
    names = ["edgereports"]
    for info in pkgutil.walk_packages([str(root)], "edgereports."):
        if not info.name.rsplit(".", 1)[-1].startswith("__"):
            names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", modules())
def test_docstring_examples_run(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(module, name):
        if test.examples:
            runner.run(test)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0, f"{failed} of {attempted} docstring examples of {name} failed (above)"
