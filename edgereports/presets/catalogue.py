"""The catalogue of the presets: each one's name, purpose, parameters and API version.

The CLI (``edgereports presets``, ``--preset``), the explorer, :func:`edgereports.fetch` and
export jobs name presets through it: :func:`get` and :func:`build` look one up by name, with
a clear error for an unknown name or a missing or unexpected parameter.

Example:
    >>> info = get("device_status")
    >>> info.api_version, info.is_now, [p.name for p in info.params if p.required]
    ('v1', True, ['account_id'])
    >>> build("device_status", account_id="A", imsi="404").to_request()["dimensions"]
    ['enodeb_ip', 'ue_ip', 'lr_id', 'imsi']
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import QueryError
from ..query import Report
from ..query.times import NOW
from ..query.vocabulary import suggest
from . import v1, v2
from .v1 import DEFAULT_PERCENTILE

__all__ = ["CATALOGUE", "Param", "PresetInfo", "build", "get", "names"]


@dataclass(frozen=True)
class Param:
    """A preset parameter: its name, whether it is required, and what it means."""

    name: str
    required: bool
    help: str
    default: object = None


@dataclass(frozen=True)
class PresetInfo:
    """A catalogue entry: name, one-line purpose, parameters, the function, its API version."""

    name: str
    purpose: str
    params: tuple[Param, ...]
    function: Callable[..., Report]
    api_version: str = "v1"

    @property
    def is_now(self) -> bool:
        """True for presets that report the current value unless given a start and end."""
        return not any(p.name == "start" and p.required for p in self.params)


_PARAM_HELP = {
    "account_id": "the account to report on",
    "start": "range start: ISO-8601 with offset, a date, a relative date ('7d', 'yesterday') "
    "or a service keyword such as 'LAST DAY' (a current-value preset: none means now)",
    "end": f"range end: ISO-8601 with offset, a date, a relative date ('today') or {NOW!r}",
    "msisdn": "one subscriber MSISDN or a list of them",
    "imsi": "one subscriber IMSI or a list of them",
    "customer_site_id": "one customer site id or a list of them",
    "percentile": f"the percentile to compute (0-100, default {DEFAULT_PERCENTILE})",
    "granularity": "the bucket length: DAY or HOUR",
    "device": "one Edge Point (v2 'device': a customer site, e.g. BLR-1001) or a list of them",
    "customer_name": "one customer name or a list of them",
}


def _info(function: Callable[..., Report], api_version: str = "v1") -> PresetInfo:
    params = tuple(
        Param(
            p.name,
            p.default is inspect.Parameter.empty,
            _PARAM_HELP[p.name],
            None if p.default is inspect.Parameter.empty else p.default,
        )
        for p in inspect.signature(function).parameters.values()
    )
    purpose = (function.__doc__ or "").strip().splitlines()[0]
    return PresetInfo(function.__name__, purpose, params, function, api_version)


#: The eleven documented presets, in their documented order, then the v2 presets.
CATALOGUE: tuple[PresetInfo, ...] = tuple(_info(f) for f in v1.FUNCTIONS) + tuple(
    _info(f, "v2") for f in v2.FUNCTIONS
)


def names(api_version: str | None = None) -> list[str]:
    """The preset names, in catalogue order (only those of ``api_version`` when given)."""
    return [p.name for p in CATALOGUE if api_version in (None, p.api_version)]


def get(name: str) -> PresetInfo:
    """Look up a preset by name.

    Raises:
        QueryError: no such preset (with a "did you mean" hint).
    """
    for info in CATALOGUE:
        if info.name == name:
            return info
    raise QueryError(
        f"unknown preset {name!r}{suggest(name, names())} (presets: {', '.join(names())})",
        field="preset",
    )


def build(name: str, **params: object) -> Report:
    """Build the report of preset ``name`` from keyword parameters.

    Raises:
        QueryError: unknown preset, a missing or unexpected parameter, or an invalid value.
    """
    info = get(name)
    allowed = {p.name for p in info.params}
    unexpected = sorted(set(params) - allowed)
    if unexpected:
        raise QueryError(
            f"preset {name!r} takes no parameter {unexpected[0]!r}; "
            f"it takes: {', '.join(p.name for p in info.params)}",
            field=unexpected[0],
        )
    missing = [p.name for p in info.params if p.required and params.get(p.name) is None]
    if missing:
        raise QueryError(f"preset {name!r} needs {', '.join(missing)}", field=missing[0])
    return info.function(**{k: v for k, v in params.items() if v is not None})
