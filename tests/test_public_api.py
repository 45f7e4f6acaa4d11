"""The public names: __all__ equals the list documented in the README, and imports stay light."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import edgereports as er
from edgereports.sandbox import SandboxHandle

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


def test_the_readers_and_the_client_import_without_pandas_pyarrow_or_numpy() -> None:
    """The readers and the reporting client are imported with ordinary imports, and pandas,
    pyarrow and numpy load only with the first frame or table: a pull checks ``output=`` and
    sends its first requests before they do (and ``stitch`` stays the function)."""
    code = (
        "import sys; import edgereports.normalize as n, edgereports.reporting; "
        "n.output.check_output('arrow'); "
        "print(sorted(m for m in ('pandas', 'pyarrow', 'numpy') if m in sys.modules),"
        " callable(n.stitch), n.to_frame.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "True", "edgereports.normalize.api"]


def test_a_pull_sends_its_first_request_before_loading_the_readers(
    sandbox: SandboxHandle,
) -> None:
    """The readers' packages (pandas and pyarrow, which take a while to import) never hold back
    the first request: a part imports them only once its answer is in (a pull on several
    threads loads them while its first answers travel)."""
    code = """if True:
        import os, sys
        import requests
        import edgereports as er
        READERS = ("pandas", "pyarrow")
        loaded = []

        class Watching(requests.adapters.HTTPAdapter):
            def send(self, request, *args, **kwargs):
                loaded.append(any(m in sys.modules for m in READERS))
                return super().send(request, *args, **kwargs)

        session = requests.Session()
        session.mount("http://", Watching())
        env = os.environ
        report = er.presets.byte_usage_subscriber(
            account_id=env["T_ACCOUNT"], msisdn=env["T_MSISDN"].split(","),
            start="2022-07-01T00:00:00+00:00", end="2022-07-03T00:00:00+00:00",
        )
        client = er.ReportingClient(
            env["T_KEY"], env["T_URL"], session=session, progress=False, max_workers=1
        )
        frame = client.fetch(report)
        print(loaded[0], all(m in sys.modules for m in READERS), len(loaded), len(frame))
    """
    msisdns = [s.msisdn for s in sandbox.network.sims_of(sandbox.account_id)[:2]]
    env = {
        **os.environ,
        "T_ACCOUNT": sandbox.account_id,
        "T_MSISDN": ",".join(str(m) for m in msisdns),
        "T_KEY": sandbox.api_key,
        "T_URL": sandbox.reporting_url,
    }
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    first_loaded, loaded_after, requests_sent, rows = out.stdout.split()
    assert (first_loaded, loaded_after, requests_sent) == ("False", "True", "2")
    assert int(rows) == 2 * 2 * 48  # two subscribers, two metrics, 48 hours
