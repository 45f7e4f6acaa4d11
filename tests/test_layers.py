"""The import contracts of pyproject.toml catch what they promise to catch.

Each case copies the package into a temporary folder, plants one bad import (or one unplaced
module), runs the real import checker on the copy and expects exactly the contract that
forbids it to break; the untouched copy keeps every contract.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = [
    c["name"]
    for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"
    ]
]


LINT_IMPORTS = "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())"


def _contract(prefix: str) -> str:
    (name,) = [c for c in CONTRACTS if c.startswith(prefix)]
    return name


# (file to change, line appended, the contract that must break)
PLANTS = {
    "upward import": ("progress.py", "from . import presets", "layers"),
    "unplaced module": ("stray.py", "VALUE = 1", "layers"),
    "sandbox imports the client": ("sandbox/clock.py", "from .. import errors", "the sandbox"),
    "model knows the web": ("sandbox/model/hashing.py", "from ..web import state", "inside the"),
    "pandas-free request": ("presets/v1.py", "import numpy", "building a request is pure"),
    "no HTTP below clients": ("plotting/__init__.py", "import urllib3", "no HTTP stack"),
    "export through reporting": ("export/plan.py", "from .. import http", "the export reaches"),
}


def _check(tmp_path: Path, plant: tuple[str, str] | None) -> tuple[set[str], str]:
    copy = tmp_path / "edgereports"
    shutil.copytree(
        ROOT / "edgereports", copy, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    if plant is not None:
        path = copy / plant[0]
        text = path.read_text() if path.exists() else ""
        path.write_text(f"{text}\n{plant[1]}  # planted\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", LINT_IMPORTS, "--no-cache", "--no-logo"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    text = " ".join((out.stdout + out.stderr).split())  # contract names may wrap
    broken = {name for name in CONTRACTS if f"{name} BROKEN" in text}
    return broken, text


def test_the_contracts_are_six_or_fewer_and_the_package_keeps_them(tmp_path: Path) -> None:
    assert 1 <= len(CONTRACTS) <= 6
    broken, text = _check(tmp_path, None)
    assert broken == set(), text
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken" in text, text


@pytest.mark.parametrize("case", PLANTS, ids=list(PLANTS))
@pytest.mark.slow
def test_a_planted_violation_breaks_exactly_its_contract(tmp_path: Path, case: str) -> None:
    file, line, contract = PLANTS[case]
    broken, text = _check(tmp_path, (file, line))
    assert broken == {_contract(contract)}, text
    if case == "unplaced module":
        assert "stray" in text, text
