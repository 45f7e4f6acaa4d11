"""A griffe extension for the API reference: ``Example:`` sections and Sphinx roles.

- The package's docstrings head their doctests with ``Example:``, which griffe's Google parser
  does not know and renders as an admonition of plain Markdown, so ``>>>`` lines lose their
  code formatting and outputs such as ``[1, 1]`` read as reference links. This renames the
  heading before the docstring is parsed.
- The docstrings name other objects with Sphinx roles (``:class:`~edgereports.query.Report```,
  ``:meth:`fetch```), which Markdown shows as raw text. Each role becomes a cross-reference
  (an optional autoref: a link when the object is on a page of the reference, else its name as
  code), its target resolved as Python would from where the docstring is: the object's class,
  its module, its package, then the top-level package.

The package itself is unchanged.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

import griffe

_HEADING = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)
_ROLE = re.compile(r":(?:py:)?(?:meth|class|func|mod|attr|data|exc|obj|const):`(~?)([^`]+)`")
_ROOT = "edgereports"


class ExampleSections(griffe.Extension):
    """Rename ``Example:`` headings to ``Examples:``; turn Sphinx roles into cross-references."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for obj in _walk(pkg):
            if obj.docstring is not None:
                text = _HEADING.sub(r"\1Examples:", obj.docstring.value)
                obj.docstring.value = _ROLE.sub(partial(_autoref, pkg, obj), text)


def _walk(obj: griffe.Object) -> list[griffe.Object]:
    """``obj`` and every object defined in it (aliases, i.e. re-exports, are skipped)."""
    found = [obj]
    for member in obj.members.values():
        if not member.is_alias:
            found.extend(_walk(member))  # type: ignore[arg-type]
    return found


def _autoref(pkg: griffe.Module, obj: griffe.Object, match: re.Match[str]) -> str:
    short, target = match.group(1) == "~", match.group(2).strip().removesuffix("()")
    title = target.rsplit(".", 1)[-1] if short else target.lstrip(".")
    path = _resolve(pkg, obj, target)
    if path is None:
        return f"`{title}`"  # not ours (the standard library, a third party): its name
    return f'<autoref identifier="{path}" optional><code>{title}</code></autoref>'


def _resolve(pkg: griffe.Module, obj: griffe.Object, target: str) -> str | None:
    """The full path of ``target`` as seen from ``obj``'s docstring, or None."""
    module = obj if obj.is_module else obj.module
    if target.startswith("."):
        base = module.path if module.is_package else module.parent.path  # type: ignore[union-attr]
        rest = target.lstrip(".")
        for _ in range(len(target) - len(rest) - 1):
            base = base.rsplit(".", 1)[0]
        candidates = [f"{base}.{rest}"]
    else:
        scopes = [obj.path] if obj.is_class else []
        if obj.parent is not None:
            scopes.append(obj.parent.path)
        scopes += [module.path, module.path.rsplit(".", 1)[0], _ROOT]
        candidates = [target] + [f"{s}.{target}" for s in dict.fromkeys(scopes)]
    for path in candidates:
        found = _lookup(pkg, path)
        if found is not None:
            return found
    return None


def _lookup(pkg: griffe.Module, path: str) -> str | None:
    """The canonical path of the object at ``path`` in ``pkg``, or None."""
    if path != _ROOT and not path.startswith(f"{_ROOT}."):
        return None
    try:
        found = pkg[path.removeprefix(_ROOT).lstrip(".")] if path != _ROOT else pkg
        return str(found.final_target.path if found.is_alias else found.path)
    except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None
