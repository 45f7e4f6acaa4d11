"""The ``[storage]`` table of a Delta job: object-store settings, timeouts, credentials by name.

``deltalake`` (through ``object_store``) reads its settings from the environment
(``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``...) and from ``storage_options``; the job file may
add the latter, so that one machine can run jobs against several stores (docs/export.md, "Past
one machine").

A credential is never written in the file: ``options`` refuses a key that names one (a secret,
a password, a token, an access key, a SAS) and ``options_from_env`` names the environment
variable that holds it instead. :meth:`Storage.resolve` reads those variables (a missing one is
a :class:`~edgereports.errors.ConfigError` naming the variable, never a value) before any
request; the values are kept out of reprs, messages and files.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from .formats import FORMATS
from .reports import check_keys

__all__ = ["DEFAULT_TIMEOUTS", "STORAGE_KEYS", "Storage", "parse_storage"]

#: The keys of the ``[storage]`` table.
STORAGE_KEYS = ("timeout", "connect_timeout", "retry_timeout", "options", "options_from_env")
#: The timeouts (seconds) ours unless ``[storage]`` says otherwise: ``object_store``'s own
#: ``timeout`` is 30 s per request but its retries may go on for 3 minutes per operation.
DEFAULT_TIMEOUTS = {"timeout": 60.0, "connect_timeout": 5.0, "retry_timeout": 120.0}

_OPTION = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Words of an option name that holds a credential (compared in lower case).
_SECRET_WORDS = (
    "secret",
    "password",
    "token",
    "access_key",
    "key_id",
    "account_key",
    "sas",
    "credential",
    "private",
)


@dataclass(frozen=True)
class Storage:
    """Object-store settings of a Delta job (the ``[storage]`` table); no credential in it.

    Attributes:
        options: plain ``storage_options`` (region, endpoint...), name → value.
        from_env: ``storage_options`` read from the environment, name → variable name.
        timeout: seconds one object-store request may take.
        connect_timeout: seconds to connect to the store.
        retry_timeout: seconds one operation may spend retrying.
    """

    options: tuple[tuple[str, str], ...] = ()
    from_env: tuple[tuple[str, str], ...] = ()
    timeout: float = DEFAULT_TIMEOUTS["timeout"]
    connect_timeout: float = DEFAULT_TIMEOUTS["connect_timeout"]
    retry_timeout: float = DEFAULT_TIMEOUTS["retry_timeout"]

    def resolve(self, where: str = "job") -> dict[str, str]:
        """The ``storage_options`` to give ``deltalake``: timeouts, options, variables read.

        Raises:
            ConfigError: a variable of ``options_from_env`` is not set (named, not its value).
        """
        out = {
            "timeout": _duration(self.timeout),
            "connect_timeout": _duration(self.connect_timeout),
            "retry_timeout": _duration(self.retry_timeout),
            **dict(self.options),
        }
        for name, variable in self.from_env:
            value = os.environ.get(variable, "")
            if not value.strip():
                raise ConfigError(
                    f"{where} [storage] options_from_env: {name} names the environment "
                    f"variable {variable}, which is not set"
                )
            out[name] = value
        return out

    def secrets(self) -> list[str]:
        """The values of the variables ``options_from_env`` names (to redact them)."""
        return [os.environ.get(variable, "") for _, variable in self.from_env]


def parse_storage(table: Mapping[str, Any], fmt: str, where: str) -> Storage:
    """Validate a ``[storage]`` table (empty: the defaults).

    Raises:
        ConfigError: a bad key or value, a credential written in clear, or ``[storage]`` in a
            Parquet job; the message names the key, never a value that may be a credential.
    """
    label = f"{where} [storage]"
    if not table:
        return Storage()
    if not FORMATS[fmt].object_storage:
        tables = " or ".join(f'"{f.name}"' for f in FORMATS.values() if f.object_storage)
        raise ConfigError(
            f"{label}: object-store settings apply to format = {tables}; remove [storage] or "
            f"set format = {tables}"
        )
    check_keys(table, STORAGE_KEYS, label)
    timeouts = {k: _seconds(table.get(k, v), f"{label} {k}") for k, v in DEFAULT_TIMEOUTS.items()}
    options = _mapping(table.get("options", {}), f"{label} options")
    from_env = _mapping(table.get("options_from_env", {}), f"{label} options_from_env")
    for name, value in options.items():
        _check_name(name, f"{label} options")
        if _is_secret(name):
            raise ConfigError(
                f"{label} options: {name} is a credential; keep credentials out of job files: "
                "name the environment variable that holds it instead, e.g. "
                f'options_from_env = {{ {name} = "MY_VARIABLE" }}'
            )
        if isinstance(value, bool):
            options[name] = "true" if value else "false"
        elif isinstance(value, int | float | str):
            options[name] = str(value)
        else:
            raise ConfigError(f"{label} options: {name} must be a string, number or true/false")
    for name, variable in from_env.items():
        _check_name(name, f"{label} options_from_env")
        if not isinstance(variable, str) or not _ENV_NAME.fullmatch(variable):
            raise ConfigError(
                f"{label} options_from_env: {name} must name an environment variable "
                f'(letters, digits, _), e.g. {name} = "MY_VARIABLE"'
            )
    both = sorted(set(options) & set(from_env))
    if both:
        raise ConfigError(f"{label}: {', '.join(both)} is in options and in options_from_env")
    return Storage(
        options=tuple(sorted(options.items())),
        from_env=tuple(sorted(from_env.items())),
        **timeouts,
    )


def _check_name(name: str, label: str) -> None:
    if not _OPTION.fullmatch(name):
        raise ConfigError(f"{label}: {name!r} is not an option name (letters, digits, _ and .)")
    if name.lower() in DEFAULT_TIMEOUTS:
        raise ConfigError(f"{label}: set {name.lower()} as [storage] {name.lower()} (in seconds)")


def _is_secret(name: str) -> bool:
    lower = name.lower()
    return any(word in lower for word in _SECRET_WORDS)


def secret_values(options: Mapping[str, str] | None) -> list[str]:
    """The values of ``options`` whose names hold a credential (to redact them)."""
    return [v for k, v in (options or {}).items() if _is_secret(k) and v]


def _mapping(value: object, label: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f'{label} must be a table, e.g. {{ aws_region = "us-east-1" }}')
    return {str(k): v for k, v in value.items()}


def _seconds(value: object, label: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ConfigError(f"{label} must be a positive number of seconds, got {value!r}")
    return float(value)


def _duration(seconds: float) -> str:
    """Seconds as a duration ``object_store`` reads (whole milliseconds)."""
    return f"{max(1, round(seconds * 1000))}ms"
