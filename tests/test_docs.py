"""The docs: the site builds with --strict, and every example in them runs against the sandbox.

Every fenced ``python`` block of README.md and docs/*.md runs, page by page, in order, in one
namespace per page, with the ``EDGEREPORTS_*`` settings pointing at a sandbox and a fresh
working directory holding the files the examples read. Shell, config and output blocks are not
run; ``toml`` blocks must parse.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from edgereports.sandbox import SandboxHandle, serve

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
PUBLIC_API = re.compile(r"<!-- public-api -->(.*?)<!-- /public-api -->", re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")

# The docs' examples ask for dates up to the end of 2024: their sandbox's clock (the present, for
# the sandbox) comes after them. Pages whose examples change the service's state (content,
# whitelist, campaigns) get a private sandbox with these options instead of the shared one.
DOCS_NOW = "2025-01-02T10:00:00+05:30"
PRIVATE_SANDBOX: dict[str, dict[str, Any]] = {"docs/content-and-campaigns.md": {"sync_delay": 0}}


@pytest.fixture(scope="module")
def docs_sandbox() -> Iterator[SandboxHandle]:
    """The sandbox the docs' examples share (seed 0, clock at :data:`DOCS_NOW`)."""
    with serve(seed=0, clock=DOCS_NOW) as handle:
        yield handle


def name_of(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def blocks(page: Path, language: str) -> list[tuple[int, str]]:
    """The fenced blocks of ``language`` in ``page``: (line of the first code line, code)."""
    text = page.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start(2)) + 1, m.group(2))
        for m in FENCE.finditer(text)
        if m.group(1) == language
    ]


def pages_with(language: str) -> list[Any]:
    return [pytest.param(p, id=name_of(p)) for p in PAGES if blocks(p, language)]


@pytest.mark.slow
def test_site_builds_strict(tmp_path: Path) -> None:
    assert importlib.util.find_spec("mkdocs") is not None, (
        "mkdocs is not installed: the docs tools are test dependencies (make test installs them)"
    )
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    done = subprocess.run(build, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    reference = (site / "reference" / "index.html").read_text(encoding="utf-8")
    for anchor in ("edgereports.query.Report", "edgereports.reporting.ReportingClient"):
        assert f'id="{anchor}"' in reference, f"the API reference does not document {anchor}"


@pytest.mark.parametrize("page", pages_with("python"))
def test_python_examples_run(
    page: Path,
    docs_sandbox: SandboxHandle,
    make_sandbox: Any,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    options = PRIVATE_SANDBOX.get(name_of(page))
    sb = docs_sandbox if options is None else make_sandbox(clock=DOCS_NOW, **options)
    for name, value in {
        "EDGEREPORTS_API_KEY": sb.api_key,
        "EDGEREPORTS_PARTNER_NAME": sb.partner_name,
        "EDGEREPORTS_BASE_URL": sb.base_url,
        "EDGEREPORTS_REPORTING_URL": sb.reporting_url,
        "EDGEREPORTS_SERVICE_TOKEN": sb.service_token,
        "EDGEREPORTS_CORE_ID": sb.core_id,
        "MPLBACKEND": "Agg",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("EDGEREPORTS_TIMEOUT", raising=False)
    monkeypatch.chdir(tmp_path)
    sims = sb.network.sims_of(sb.account_id)
    (tmp_path / "subscribers.txt").write_text(f"{sims[0].msisdn}\n{sims[1].msisdn}\n")
    (tmp_path / "clip.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42")
    (tmp_path / "thumb.png").write_bytes(b"\x89PNG\r\n\x1a\n")

    namespace: dict[str, Any] = {"__name__": "__docs__"}
    try:
        for line, code in blocks(page, "python"):
            # padded so that a traceback names the line of the page
            exec(compile("\n" * (line - 1) + code, str(page), "exec"), namespace)
    finally:
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")


@pytest.mark.parametrize("page", pages_with("toml"))
def test_toml_examples_parse(page: Path) -> None:
    for line, code in blocks(page, "toml"):
        try:
            tomllib.loads(code)
        except tomllib.TOMLDecodeError as error:
            pytest.fail(f"{name_of(page)}:{line}: {error}")


def test_reference_lists_the_readmes_public_api() -> None:
    # tests/test_public_api.py checks the README's list against __all__
    readme = PUBLIC_API.search(README.read_text(encoding="utf-8"))
    reference = PUBLIC_API.search((ROOT / "docs" / "reference.md").read_text(encoding="utf-8"))
    assert readme and reference
    assert reference.group(1) == readme.group(1)


def test_readme_links_resolve() -> None:
    # mkdocs checks the links of docs/; the README's must work on a code host
    text = README.read_text(encoding="utf-8")
    targets = {t.split("#")[0] for t in LINK.findall(text) if "://" not in t}
    missing = sorted(t for t in targets if t and not (ROOT / t).exists())
    assert not missing, f"README.md links to missing files: {missing}"
    for page in ("query", "fetching", "frames", "export", "sandbox", "cli", "reference"):
        assert f"docs/{page}.md" in targets
