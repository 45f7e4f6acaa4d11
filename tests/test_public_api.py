"""The public names: __all__ equals the list documented in the README, and imports stay light."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import edgereports as er

README = Path(__file__).resolve().parents[1] / "README.md"


def documented_names() -> list[str]:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"<!-- public-api -->(.*?)<!-- /public-api -->", text, re.S)
    assert block, "README.md has no public-api block"
    return sorted(re.findall(r"`er\.([A-Za-z_]+)`", block.group(1)))


def test_all_matches_the_readme() -> None:
    assert er.__all__ == sorted(er.__all__)
    assert er.__all__ == documented_names()
    for name in er.__all__:
        assert getattr(er, name) is not None


def test_import_is_light() -> None:
    code = (
        "import sys, edgereports; "
        "heavy = [m for m in ('pandas', 'requests', 'flask', 'matplotlib', 'ipywidgets', 'tqdm')"
        " if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
