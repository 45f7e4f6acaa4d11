"""The rules: one module per kind of flag, run in the order of :data:`KINDS`.

A rule is a kind and a function from one site's hours (:class:`~..context.Site`) to flags,
like the passes of a query optimiser: the flags loop runs them in order, and a kind is one
module here and one line in :data:`KINDS`. Group rules run first and mark the hours they
explain (a dark site, a dark eNodeB), so a device inside one is not flagged for those hours.
Importing this package loads no numpy; :func:`load_rules` imports the modules.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..context import Flag, Site

__all__ = ["KINDS", "Rule", "load_rules"]

#: The kinds of flag, in the order the rules run (and the docs explain them): one module each.
KINDS = (
    "site_dark",
    "enodeb_dark",
    "device_offline",
    "usage_drop",
    "usage_spike",
    "sim_idle",
)


@dataclass(frozen=True)
class Rule:
    """A kind of flag and its detector.

    Attributes:
        kind: the kind (the module's name).
        detect: one site's hours in, its flags of this kind out.
        subject: what the flags' subject is (``"site"``, ``"enodeb"`` or ``"msisdn"``).
    """

    kind: str
    detect: Callable[[Site], list[Flag]]
    subject: str


def load_rules() -> tuple[Rule, ...]:
    """The rules of :data:`KINDS`, in order."""
    out = tuple(importlib.import_module(f"{__name__}.{kind}").RULE for kind in KINDS)
    assert all(rule.kind == kind for rule, kind in zip(out, KINDS, strict=True))
    return out
