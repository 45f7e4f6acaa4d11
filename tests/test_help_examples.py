"""``help()`` of every public name shows an example; ``dir(er)`` only public names."""

from __future__ import annotations

import inspect

import pytest

import edgereports as er


@pytest.mark.parametrize("name", sorted(set(er.__all__) - {"__version__"}))
def test_help_has_an_example(name: str) -> None:
    doc = inspect.getdoc(getattr(er, name)) or ""
    assert "Example" in doc and ">>>" in doc, f"help(er.{name}) shows no example"


def test_dir_shows_only_public_names() -> None:
    assert dir(er) == sorted(er.__all__)
    assert not [n for n in dir(er) if n.startswith("_") and n != "__version__"]
