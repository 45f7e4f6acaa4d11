"""The sandbox's inventory as a file: what an operator keeps beside the service (CSV or Parquet).

``edgereports sandbox --write-inventory FILE`` and :func:`write_inventory` write the rows of
:meth:`Network.inventory_rows` (incidents that deactivate a SIM included), so every example that
takes an inventory runs against the sandbox.
"""

from __future__ import annotations

import csv
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["COLUMNS", "write_inventory"]

#: The columns of the file, in order.
COLUMNS = ("msisdn", "imsi", "device_id", "customer_site_id", "enodeb_ip", "activation_date",
           "deactivation_date", "account_id")  # fmt: skip


def write_inventory(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write inventory rows to ``path``: Parquet when it ends with ``.parquet``, else CSV.

    The file appears whole or not at all (written beside it, then renamed). In CSV an empty
    field is a missing value (no deactivation).

    Returns:
        The file written.

    Raises:
        OSError: the file cannot be written.
    """
    target = Path(path)
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        if target.suffix.lower() == ".parquet":
            os.close(fd)
            import pyarrow as pa
            import pyarrow.parquet as pq

            columns = {c: [r.get(c) for r in rows] for c in COLUMNS}
            pq.write_table(pa.table({c: pa.array(v, pa.string()) for c, v in columns.items()}),
                           temp)  # fmt: skip
        else:
            with open(fd, "w", encoding="utf-8", newline="") as out:
                writer = csv.writer(out)
                writer.writerow(COLUMNS)
                writer.writerows(
                    [["" if r.get(c) is None else r[c] for c in COLUMNS] for r in rows]
                )
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target
