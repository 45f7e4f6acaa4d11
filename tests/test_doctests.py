"""Every docstring example of the package runs: ``>>>`` lines give the output they show.

Each module's examples run in a fresh working directory. The export's examples find there a job
file, ``nightly.toml``, whose report ``usage_daily`` (two subscribers, daily, from 2024-06-01)
writes to ``exports/``, and the settings of a sandbox on loopback in the environment (its clock
fixed at :data:`EXPORT_NOW`), as a user's shell would hold them. An example marked ``+SKIP``
needs a live service of its own (an account, a key).
"""

from __future__ import annotations

import doctest
import importlib
import os
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import edgereports
from edgereports.sandbox import SandboxHandle, serve

#: The clock of the export examples' sandbox: a week after their job's start.
EXPORT_NOW = "2024-06-08T06:00:00+00:00"


def modules() -> list[str]:
    root = Path(edgereports.__file__).parent
    names = ["edgereports"]
    for info in pkgutil.walk_packages([str(root)], "edgereports."):
        if not info.name.rsplit(".", 1)[-1].startswith("__"):
            names.append(info.name)
    return sorted(names)


@pytest.fixture(scope="module")
def export_sandbox() -> Iterator[SandboxHandle]:
    with serve(seed=0, clock=EXPORT_NOW) as handle:
        yield handle


def write_export_job(where: Path, sb: SandboxHandle) -> None:
    msisdns = ", ".join(f'"{s.msisdn}"' for s in sb.network.sims_of(sb.account_id)[:2])
    (where / "nightly.toml").write_text(
        f"""name = "nightly"
output = "exports"

[defaults]
account_id = "{sb.account_id}"
start = 2024-06-01

[[reports]]
name = "usage_daily"
preset = "time_usage_subscriber"
params = {{ msisdn = [{msisdns}] }}
""",
        encoding="utf-8",
    )


@pytest.mark.parametrize("name", modules())
def test_docstring_examples_run(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    monkeypatch.chdir(tmp_path)
    if name == "edgereports.export" or name.startswith("edgereports.export."):
        sb: SandboxHandle = request.getfixturevalue("export_sandbox")
        write_export_job(tmp_path, sb)
        for key in [k for k in os.environ if k.startswith("EDGEREPORTS_")]:
            monkeypatch.delenv(key)
        monkeypatch.setenv("EDGEREPORTS_API_KEY", sb.api_key)
        monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", sb.reporting_url)
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(module, name):
        if test.examples:
            runner.run(test)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0, f"{failed} of {attempted} docstring examples of {name} failed (above)"
