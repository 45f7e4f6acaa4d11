"""The account's inventory: what the service cannot tell (devices, places, lives, maintenance).

:class:`~edgereports.inventory.model.Inventory` reads it from a frame, a CSV or Parquet file, a
job file's ``[inventory]`` table or the sandbox, and answers which devices exist, which are
active at an hour and which maintenance windows apply (docs: "Health flags", "The inventory").
Importing this package loads no pandas (the job file checks its table with
:func:`check_table`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._dependencies import lazy_names
from .table import SCOPES, TABLE_KEYS, check_table

if TYPE_CHECKING:
    from .hours import MaintenanceWindow
    from .model import Inventory

__all__ = ["SCOPES", "TABLE_KEYS", "Inventory", "MaintenanceWindow", "check_table"]

__getattr__, __dir__ = lazy_names(
    __name__, {"Inventory": ".model", "MaintenanceWindow": ".hours"}, globals(), __all__
)
