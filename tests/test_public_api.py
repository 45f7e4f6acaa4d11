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


def test_a_pull_checks_its_output_without_loading_the_readers() -> None:
    """``fetch`` checks ``output=`` before its first request; the readers load afterwards,
    with the first answer (and ``stitch`` stays the function)."""
    code = (
        "import sys; from edgereports.normalize.output import check_output; "
        "import edgereports.normalize as n; "
        "print(sorted(m for m in ('edgereports.normalize.api', 'edgereports.normalize.csv')"
        " if m in sys.modules), callable(n.stitch), n.to_frame.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "True", "edgereports.normalize.api"]
