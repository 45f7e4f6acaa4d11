"""JSON and CSV report answers into tidy frames with the schemas of :mod:`..schema`.

Public names: :func:`to_frame`, :func:`read_csv`, :func:`stitch`, :func:`concat_frames` and
:func:`detect_shape`. A pull's answers are read, owned and joined as Arrow tables by
:mod:`.parts`. The package uses pandas, pyarrow and orjson, never ``requests``; pandas and
pyarrow load when a frame or a table is first built, so a pull's first requests leave before
they do.
"""

from __future__ import annotations

from .api import read_csv, to_frame
from .detect import detect_shape
from .reporting_service import service_frame
from .stitching import concat_frames, stitch

__all__ = [
    "concat_frames",
    "detect_shape",
    "read_csv",
    "service_frame",
    "stitch",
    "to_frame",
]
