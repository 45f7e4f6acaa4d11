"""Every docstring example of the package runs: ``>>>`` lines give the output they show.

Examples run module by module, in a fresh working directory, with these names at hand, as a
reader of the docs would have them after the getting-started page:

- ``er``: the package;
- ``client``: a :class:`~edgereports.ReportingClient` of a local sandbox (seed 0, clock fixed at
  2022-07-08T10:00+05:30, so every output is the same on every run); ``sandbox_url`` its
  address and ``key`` its API key;
- ``acct`` and ``numbers``: the sandbox's account and three of its subscribers (MSISDNs);
- ``report``: their daily time usage over the first week of July 2022, and ``df`` its frame;
- ``job_file``: a job file of that report on this sandbox (``nightly.toml``).

An example marked ``+SKIP`` needs what no test here has (a live service, a cloud store).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import edgereports
import edgereports as er
from edgereports.sandbox import SandboxHandle

CLOCK = "2022-07-08T10:00:00+05:30"


def modules() -> list[str]:
    root = Path(edgereports.__file__).parent
    names = ["edgereports"]
    for info in pkgutil.walk_packages([str(root)], "edgereports."):
        if not info.name.rsplit(".", 1)[-1].startswith("__"):
            names.append(info.name)
    return sorted(names)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxHandle]:
    from edgereports.sandbox import serve

    with serve(seed=0, devices=16, clock=CLOCK) as sb:
        yield sb


@pytest.fixture(scope="module")
def names(sandbox: SandboxHandle) -> Iterator[dict[str, Any]]:
    numbers = [s.msisdn for s in sandbox.network.sims_of(sandbox.account_id)][:3]
    report = er.presets.time_usage_subscriber(
        account_id=sandbox.account_id, msisdn=numbers, start="2022-07-01", end="2022-07-08"
    )
    client = er.ReportingClient(sandbox.api_key, sandbox.reporting_url, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", er.EdgeReportsWarning)
        df = client.fetch(report)
    listed = ", ".join(f'"{n}"' for n in numbers)
    job = (
        f'output = "exports"\n[connection]\nreporting_url = "{sandbox.reporting_url}"\n'
        f'[defaults]\naccount_id = "{sandbox.account_id}"\nstart = 2022-06-01\n'
        f'[[reports]]\nname = "usage"\npreset = "time_usage_subscriber"\n'
        f"params = {{ msisdn = [{listed}] }}\n"
    )
    yield {
        "er": er,
        "client": client,
        "key": sandbox.api_key,
        "sandbox_url": sandbox.reporting_url,
        "acct": sandbox.account_id,
        "numbers": numbers,
        "report": report,
        "df": df,
        "job": job,
    }
    client.close()


@pytest.mark.parametrize("name", modules())
def test_docstring_examples_run(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, names: dict[str, Any]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EDGEREPORTS_API_KEY", names["key"])
    (tmp_path / "nightly.toml").write_text(names["job"], encoding="utf-8")
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    extra = {k: v for k, v in names.items() if k != "job"} | {"job_file": "nightly.toml"}
    for test in finder.find(module, name, extraglobs=extra):
        if test.examples:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", er.EdgeReportsWarning)
                runner.run(test)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0, f"{failed} of {attempted} docstring examples of {name} failed (above)"
