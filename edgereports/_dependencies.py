"""The one way edgereports imports lazily: a module proxy that imports on first use.

:func:`lazy_import` stands for a heavy or optional package at the top of a module: the package
is imported when an attribute is first read, and a missing one raises a
:class:`ModuleNotFoundError` whose message names the ``pip install`` that brings it.
:func:`lazy_names` gives a package the ``__getattr__`` and ``__dir__`` (PEP 562) of public names
read through such proxies, so ``import edgereports`` loads neither pandas nor the HTTP stack.
"""

from __future__ import annotations

import importlib
import importlib.util
import types
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

__all__ = ["LazyModule", "lazy_import", "lazy_names"]


class LazyModule(types.ModuleType):
    """A stand-in for the module ``name``, imported when one of its attributes is first read.

    An attribute read is kept on the proxy, so reading it again costs what it costs on the
    module itself (a miss on a module raises and catches an AttributeError inside Python).

    Args:
        name: the module's absolute name.
        pip: what to install when it is missing (``"edgereports[polars]"``); None for a
            module the package always has.

    Example:
        >>> json = LazyModule("json")
        >>> json.dumps([1])
        '[1]'
        >>> LazyModule("not_a_package", pip="edgereports[extra]").anything
        Traceback (most recent call last):
        ...
        ModuleNotFoundError: not_a_package is not installed: pip install 'edgereports[extra]'
    """

    def __init__(self, name: str, pip: str | None = None) -> None:
        super().__init__(name)
        self._lazy_pip = pip
        self._lazy_module: types.ModuleType | None = None

    def _load(self) -> types.ModuleType:
        module = self._lazy_module
        if module is None:
            try:
                module = importlib.import_module(self.__name__)
            except ModuleNotFoundError as exc:
                if self._lazy_pip is None or exc.name != self.__name__.partition(".")[0]:
                    raise
                raise ModuleNotFoundError(
                    f"{self.__name__} is not installed: pip install '{self._lazy_pip}'",
                    name=exc.name,
                ) from None
            self._lazy_module = module
        return module

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_lazy_"):  # not set yet (during __init__)
            raise AttributeError(attr)
        value = getattr(self._load(), attr)
        setattr(self, attr, value)
        return value

    def __dir__(self) -> list[str]:
        return dir(self._load())

    def __repr__(self) -> str:
        state = "loaded" if self._lazy_module is not None else "not loaded yet"
        return f"<lazy module {self.__name__!r} ({state})>"


def lazy_import(name: str, *, pip: str | None = None) -> Any:
    """A :class:`LazyModule` for ``name``, to name at the top of a module.

    The proxy imports through :func:`importlib.import_module` even when the module is in
    ``sys.modules`` already: another thread may still be running its body, and the import
    system waits for it to finish where a look-up in ``sys.modules`` would not.

    Args:
        name: the module's absolute name.
        pip: what to install when it is missing, named in the error.

    Example:
        >>> lazy_import("json").loads("[2]")
        [2]
    """
    return LazyModule(name, pip)


def lazy_names(
    package: str,
    names: Mapping[str, str],
    namespace: MutableMapping[str, Any],
    public: Sequence[str],
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for public names read through lazy modules.

    Args:
        package: the package's ``__name__``.
        names: public name -> the module that defines it, relative to the package.
        namespace: the package's ``globals()``: a name read is kept there, so it is read once.
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
        value = getattr(LazyModule(importlib.util.resolve_name(module, package)), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(public)

    return __getattr__, __dir__
