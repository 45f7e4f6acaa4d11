"""Every notebook runs in a real Jupyter kernel (nbclient) on the sandbox; outputs stay stripped."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell

from edgereports.config import ENV_VARS

pytestmark = pytest.mark.slow

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
TIMEOUT = 120  # seconds per cell


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel inherits this environment: no key, so every notebook starts the sandbox.

    ``JUPYTER_PREFER_ENV_PATH`` makes this environment's ``python3`` kernel spec win over one
    a user may have installed for another interpreter.
    """
    for var in ENV_VARS.values():
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("JUPYTER_PREFER_ENV_PATH", "1")


def execute(
    path: Path, workdir: Path, extra: list[str] | None = None, *, at: int | None = None
) -> nbformat.NotebookNode:
    """Execute a notebook in a fresh kernel, with extra cells at ``at`` (default: the end).

    Raises:
        CellExecutionError: a cell raised.
    """
    nb = nbformat.read(path, as_version=4)
    place = len(nb.cells) if at is None else at
    nb.cells[place:place] = [new_code_cell(code) for code in extra or []]
    client = NotebookClient(
        nb,
        timeout=TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(workdir)}},
    )
    interrupt = signal.getsignal(signal.SIGINT)
    try:
        client.execute()
    finally:
        # nbclient handles SIGINT while it runs and then sets Python's default handler, not
        # the one it found: a runner started in the background (SIGINT ignored) gets it back
        signal.signal(signal.SIGINT, interrupt)
    return nb


def stream_text(cell: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")


def test_there_are_four_notebooks() -> None:
    assert [p.name for p in NOTEBOOKS] == [
        "01-quickstart.ipynb",
        "02-explorer.ipynb",
        "03-scheduled-export.ipynb",
        "04-content-and-campaigns.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebooks_are_stored_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)
    assert nb.metadata.kernelspec.name == "python3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_a_kernel_of_this_environment(path: Path, tmp_path: Path) -> None:
    nb = execute(path, tmp_path, extra=["import sys; print(sys.prefix)"])
    assert stream_text(nb.cells[-1]).strip() == sys.prefix  # the kernel is this venv's python
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert errors == []
    images = sum("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))
    assert images >= {"01": 4, "02": 0, "03": 2, "04": 0}[path.name[:2]]


EXPLORER_CHECKS = """
PNG = b"\\x89PNG\\r\\n\\x1a\\n"
checks = []
for name in ["time_usage_enterprise", "bandwidth_percentile", "device_status"]:
    explorer.preset.value = name
    explorer.run_button.click()
    assert explorer.error is None, explorer.message
    assert len(explorer.frame) > 0 and bytes(explorer.chart.value)[:8] == PNG
    checks.append(f"{name}: {explorer.message.split(' in ')[0]}")
explorer.preset.value = "time_usage_enterprise"
explorer.range.value = "dates"
explorer.tz.value = "Mars/Base"
explorer.run_button.click()
assert explorer.message.startswith("InputError: Zone: timezone 'Mars/Base'"), explorer.message
explorer.tz.value = "+05:30"
explorer.range.value = "LAST DAY"
explorer.granularity.value = "HOUR"
explorer.run_button.click()
assert explorer.error is None and explorer.frame["time_stamp"].nunique() >= 24
target = Path(tempfile.mkdtemp()) / "last_day.parquet"
explorer.export_path.value = str(target)
explorer.export_button.click()
import pandas as pd
assert len(pd.read_parquet(target)) == len(explorer.frame)
assert explorer.widget.comm is not None  # a live widget of this kernel
print("\\n".join(checks))
print("explorer ok")
"""


def test_the_explorer_is_driven_in_a_real_kernel(tmp_path: Path) -> None:
    # after Run All (or served as an app) the explorer still runs: its sandbox lives as long
    # as the kernel (the last cell closed it once)
    path = next(p for p in NOTEBOOKS if p.name == "02-explorer.ipynb")
    nb = execute(path, tmp_path, extra=[EXPLORER_CHECKS])
    shown = [o for o in nb.cells[2].outputs if "data" in o]
    assert "application/vnd.jupyter.widget-view+json" in shown[0]["data"]
    out = stream_text(nb.cells[-1])
    assert out.splitlines()[-1] == "explorer ok"
    assert "device_status: 1 rows" in out  # the chosen IMSI: one row, its device
