"""The one lazy mechanism: modules load on first use, once, and a missing one names its pip."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import edgereports
from edgereports._dependencies import LazyModule, lazy_import


def test_a_missing_optional_package_names_the_pip_command() -> None:
    missing = lazy_import("not_a_package_here", pip="edgereports[extra]")
    with pytest.raises(ModuleNotFoundError) as caught:
        missing.anything  # noqa: B018
    assert str(caught.value) == (
        "not_a_package_here is not installed: pip install 'edgereports[extra]'"
    )


def test_a_module_missing_inside_a_package_is_not_blamed_on_the_package() -> None:
    with pytest.raises(ModuleNotFoundError, match=r"edgereports\.no_such_module"):
        LazyModule("edgereports.no_such_module", pip="edgereports[extra]").anything  # noqa: B018


def test_a_proxy_loads_its_module_on_first_use_and_keeps_what_it_read() -> None:
    proxy = lazy_import("colorsys")
    assert "not loaded yet" in repr(proxy)
    assert proxy.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)
    assert "loaded" in repr(proxy) and "not" not in repr(proxy)
    assert vars(proxy)["rgb_to_hsv"] is sys.modules["colorsys"].rgb_to_hsv
    assert "hsv_to_rgb" not in vars(proxy)


def test_threads_that_read_a_lazy_name_at_once_all_get_it() -> None:
    """While one thread imports a public name's module, the others wait for it rather than
    read a half-made module."""
    code = """if True:
        import threading
        import edgereports as er

        start = threading.Barrier(16)
        got = []

        def read():
            start.wait()
            got.append(er.to_frame.__name__)

        threads = [threading.Thread(target=read) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print(sorted(set(got)), len(got))
    """
    for _ in range(3):  # a fresh process each time: the names load anew
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert out.stdout.split("]")[0] == "['to_frame'"
        assert out.stdout.strip().endswith(" 16")


def test_the_package_imports_its_own_modules_with_ordinary_imports() -> None:
    """A lazy proxy names a third-party package, never a module of edgereports, so the import
    checker sees every edge between the package's modules."""
    package = Path(edgereports.__file__).parent
    proxied = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "_dependencies.py":  # the proxy itself
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"lazy_import", "LazyModule"}
                and node.args
            ):
                name = node.args[0]
                assert isinstance(name, ast.Constant), f"{path}: a proxy of a computed name"
                if str(name.value).partition(".")[0] == "edgereports":
                    proxied.append(f"{path.relative_to(package)}: {name.value}")
    assert proxied == []
