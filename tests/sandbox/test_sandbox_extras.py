"""The sandbox is an optional extra: importing it needs no Flask, cheroot or numba; running it
says in one line which pip command installs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PIP = "pip install 'edgereports[sandbox]'"
# Installed before anything is imported: the extra's packages (and Flask's werkzeug) look absent.
BLOCKER = """
import sys

class _Absent:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {"flask", "werkzeug", "cheroot", "numba"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _Absent())
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-c", BLOCKER + code],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def test_the_sandbox_imports_without_its_extra() -> None:
    done = _run(
        "import edgereports.sandbox\n"
        "from edgereports.sandbox import (Clock, FaultConfig, Limits, Network, SandboxHandle,\n"
        "                                 build_network, serve)\n"
        "net = build_network(0, 8)\n"
        "assert isinstance(net, Network), net\n"
        "loaded = sorted(m for m in sys.modules if m.partition('.')[0] in\n"
        "                {'flask', 'werkzeug', 'cheroot', 'numba'})\n"
        "assert not loaded, loaded\n"
        "print('imported')\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "imported"


def test_serve_without_its_extra_names_the_pip_command() -> None:
    done = _run(
        "from edgereports.sandbox import serve\n"
        "try:\n"
        "    serve(port=0)\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, '|', exc)\n"
        "else:\n"
        "    print('no error')\n"
    )
    assert done.returncode == 0, done.stderr
    assert PIP in done.stdout
    assert "flask" in done.stdout and "cheroot" in done.stdout and "numba" in done.stdout
    assert len(done.stdout.strip().splitlines()) == 1


def test_the_command_without_its_extra_exits_2_with_one_line() -> None:
    done = _run(
        "import runpy\n"
        "sys.argv = ['edgereports.sandbox', '--port', '0', '--duration', '0']\n"
        "runpy.run_module('edgereports.sandbox', run_name='__main__', alter_sys=True)\n"
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert PIP in lines[0]
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


@pytest.mark.slow
def test_the_client_works_without_the_extra_and_the_commands_say_what_to_install() -> None:
    done = _run(
        "import json, edgereports as er\n"
        "df = er.to_frame(json.loads(open('sample_data/01_time_usage_enterprise/response.json')"
        ".read()))\n"
        "assert len(df) == 4, df\n"
        "from edgereports.cli import main\n"
        "for command in (['sandbox'], ['demo', '--out', 'unused-demo-output']):\n"
        "    assert main(command) == 2, command\n"
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2 and all(PIP in line for line in lines), done.stderr
    assert "Traceback" not in done.stderr
    assert not (ROOT / "unused-demo-output").exists()


def test_the_package_metadata_keeps_the_emulator_in_its_extra() -> None:
    from importlib.metadata import requires

    core = [r for r in requires("edgereports") or [] if "extra ==" not in r]
    names = {r.split(">")[0].split("=")[0].split("[")[0].strip().lower() for r in core}
    assert names.isdisjoint({"flask", "cheroot", "numba", "llvmlite"}), core
    sandbox = [r for r in requires("edgereports") or [] if "sandbox" in r.replace("'", '"')]
    assert {r.split(">")[0].lower() for r in sandbox} == {"flask", "cheroot", "numba"}, sandbox
