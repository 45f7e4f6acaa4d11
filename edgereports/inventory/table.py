"""A job file's ``[inventory]`` table, checked without reading anything (no pandas here)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError

__all__ = ["SCOPES", "TABLE_KEYS", "check_table"]

#: What a maintenance window covers: a customer site, an eNodeB or one subscriber.
SCOPES = ("site", "enodeb", "msisdn")
#: The keys of a job file's ``[inventory]`` table.
TABLE_KEYS = ("devices", "maintenance", "complete", "account_id")


def check_table(table: object, where: str) -> dict[str, Any]:
    """Check a job file's ``[inventory]`` table (its keys and their types; no file is read).

    Returns:
        The table as a dict.

    Raises:
        ConfigError: an unknown key, or a value of the wrong type (names the key).
    """
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: [inventory] must be a table")
    unknown = [k for k in table if k not in TABLE_KEYS]
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r} in [inventory]; keys: {', '.join(TABLE_KEYS)}"
        )
    devices = table.get("devices")
    if not isinstance(devices, str) or not devices.strip():
        raise ConfigError(
            f"{where}: [inventory] devices must name the inventory file, "
            'e.g. devices = "inventory.csv"'
        )
    windows = table.get("maintenance")
    if windows is not None and not isinstance(windows, str | list):
        raise ConfigError(
            f"{where}: [inventory] maintenance must name a file or list windows "
            "({scope, subject, start, end})"
        )
    if isinstance(windows, list) and not all(isinstance(w, Mapping) for w in windows):
        raise ConfigError(f"{where}: [inventory] maintenance windows must be tables")
    if not isinstance(table.get("complete", True), bool):
        raise ConfigError(f"{where}: [inventory] complete must be true or false")
    account = table.get("account_id")
    if account is not None and (not isinstance(account, str) or not account.strip()):
        raise ConfigError(f"{where}: [inventory] account_id must be the account's id (a text)")
    return dict(table)
