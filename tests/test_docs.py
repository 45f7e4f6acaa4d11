"""The docs: the site builds with --strict, and every example in them runs against the sandbox.

Every fenced ``python`` block of README.md and docs/*.md runs, page by page, in order, in one
namespace per page, as a reader runs it: against the sandbox the page tells them to start (the
first ``edgereports sandbox ...`` command of its shell blocks, with its options; none: the
plain ``edgereports sandbox``), with exactly the ``EDGEREPORTS_*`` settings that command
prints, and a fresh working directory holding the files the examples read (and the inventory
that command writes with ``--write-inventory``). Shell, config and
output blocks are not run; ``toml`` blocks must parse.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from edgereports.sandbox import SandboxHandle, serve
from edgereports.sandbox.__main__ import build_parser, settings_env
from edgereports.sandbox.inventory import write_inventory

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
PUBLIC_API = re.compile(r"<!-- public-api -->(.*?)<!-- /public-api -->", re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")

SHELLS = ("sh", "bash", "shell", "console")
SANDBOX_COMMAND = re.compile(r"^\s*(?:\$\s*)?edgereports sandbox\b([^#\n]*)", re.MULTILINE)
# Pages whose examples change the service's state (content, whitelist, campaigns) get a
# private sandbox (started as the page says) instead of one shared with other pages.
PRIVATE = {"docs/content-and-campaigns.md"}


def sandbox_options(page: Path) -> list[str]:
    """The options of the first ``edgereports sandbox`` command in the page's shell blocks."""
    text = page.read_text(encoding="utf-8")
    for m in FENCE.finditer(text):
        if m.group(1) in SHELLS and (command := SANDBOX_COMMAND.search(m.group(2))):
            return shlex.split(command.group(1))
    return []


def start_sandbox(stack: ExitStack, options: list[str]) -> SandboxHandle:
    """The sandbox ``edgereports sandbox OPTIONS`` runs (on a free loopback port)."""
    args = build_parser().parse_args(options)
    handle: SandboxHandle = stack.enter_context(
        serve(
            seed=args.seed,
            devices=args.devices,
            extra_accounts=args.extra_accounts,
            clock=args.now,
            sync_delay=args.sync_delay,
            api_key=args.api_key,
            partner_name=args.partner_name,
            host="127.0.0.1",
            port=0,
        )
    )
    return handle


@pytest.fixture(scope="module")
def docs_sandboxes() -> Iterator[dict[tuple[str, ...], SandboxHandle]]:
    """The sandboxes the pages ask for, one per set of options, shared by the pages."""
    with ExitStack() as stack:
        yield _Sandboxes(stack)


class _Sandboxes(dict[tuple[str, ...], SandboxHandle]):
    def __init__(self, stack: ExitStack) -> None:
        super().__init__()
        self.stack = stack

    def __missing__(self, options: tuple[str, ...]) -> SandboxHandle:
        self[options] = start_sandbox(self.stack, list(options))
        return self[options]


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
    # the docstrings' Sphinx roles are cross-references, not raw text
    raw = re.findall(r":(?:meth|class|func|mod|attr|data|exc|obj):(?:`|<code>)", reference)
    assert raw == [], raw[:5]
    # ReportingClient.fetch's ':class:`PartialFailure`' links to the error's entry
    link = 'href="#edgereports.errors.PartialFailure"><code>PartialFailure</code></a>'
    assert link in reference


@pytest.mark.parametrize("page", pages_with("python"))
def test_python_examples_run(
    page: Path,
    docs_sandboxes: dict[tuple[str, ...], SandboxHandle],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    options = tuple(sandbox_options(page))
    with ExitStack() as private:
        sb = (
            start_sandbox(private, list(options))
            if name_of(page) in PRIVATE
            else docs_sandboxes[options]
        )
        _run_page(page, sb, monkeypatch, tmp_path)


def _run_page(
    page: Path, sb: SandboxHandle, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in [n for n in os.environ if n.startswith("EDGEREPORTS_")]:
        monkeypatch.delenv(name)  # only what the sandbox prints
    for name, value in {**settings_env(sb), "MPLBACKEND": "Agg"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    sims = sb.network.sims_of(sb.account_id)
    (tmp_path / "subscribers.txt").write_text(f"{sims[0].msisdn}\n{sims[1].msisdn}\n")
    (tmp_path / "clip.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42")
    written = build_parser().parse_args(sandbox_options(page)).write_inventory
    if written:  # the page's sandbox command writes its inventory where the reader is
        write_inventory(sb.inventory(), tmp_path / written)
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


def test_the_install_instructions_install_from_the_repository() -> None:
    # the package is on no index: a bare 'pip install edgereports' finds nothing
    bare = re.compile(r"pip install edgereports(?![\w\[-])")
    said = [name_of(p) for p in PAGES if bare.search(p.read_text(encoding="utf-8"))]
    assert said == []
    readme = README.read_text(encoding="utf-8")
    assert "pip install ." in readme and "not published on a package" in readme
