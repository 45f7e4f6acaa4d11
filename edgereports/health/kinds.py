"""The kinds of health flag and the columns of the flags frame (no import of its own)."""

from __future__ import annotations

__all__ = ["COLUMNS", "KINDS"]

#: The kinds of flag, in the order the docs explain them.
KINDS = ("site_dark", "device_offline", "usage_drop", "usage_spike", "sim_idle")
#: The columns of the flags frame.
COLUMNS = ("kind", "subject", "start", "end", "severity", "evidence")
