"""``help()`` of every public name shows an example (issue 19); ``dir(er)`` only public names."""

from __future__ import annotations

import inspect

import pytest

import edgereports as er

# The exception and warning classes are documented by the tree in their module's docstring
# (errors.py, owned by the error-handling work); every other public name carries an example.
EXCEPTIONS = {n for n in er.__all__ if isinstance(getattr(er, n), type)
              and issubclass(getattr(er, n), (BaseException, Warning))}  # fmt: skip


@pytest.mark.parametrize("name", sorted(set(er.__all__) - EXCEPTIONS - {"__version__"}))
def test_help_has_an_example(name: str) -> None:
    doc = inspect.getdoc(getattr(er, name)) or ""
    assert "Example" in doc and ">>>" in doc, f"help(er.{name}) shows no example"


def test_dir_shows_only_public_names() -> None:
    assert dir(er) == sorted(er.__all__)
    assert not [n for n in dir(er) if n.startswith("_") and n != "__version__"]
