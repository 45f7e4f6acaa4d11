"""Public names of a package loaded on first access (PEP 562), so importing it stays light."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str,
    names: Mapping[str, str],
    namespace: MutableMapping[str, Any],
    public: Sequence[str],
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for names loaded on first access.

    Args:
        package: the package's ``__name__``.
        names: public name -> the module that defines it, relative to the package.
        namespace: the package's ``globals()``: a loaded name is kept there, so it is loaded
            once.
        public: the package's ``__all__``, which ``dir()`` lists.

    Example:
        >>> getattr_, dir_ = lazy_names("json", {"JSONDecoder": ".decoder"}, {}, ["JSONDecoder"])
        >>> getattr_("JSONDecoder").__module__, dir_()
        ('json.decoder', ['JSONDecoder'])
    """

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(public)

    return __getattr__, __dir__
