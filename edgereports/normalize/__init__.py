"""JSON and CSV report answers (SPEC 2.9) into tidy frames with the schemas of :mod:`..schema`.

Public names: :func:`to_frame`, :func:`read_csv`, :func:`stitch`, :func:`concat_frames`,
:func:`detect_shape`, and the two steps of stitching the client applies part by part,
:func:`owned_rows` and :func:`canonical_order`. The package imports pandas, pyarrow and orjson,
never ``requests``.
"""

from __future__ import annotations

from .api import read_csv, to_frame
from .detect import detect_shape
from .service import service_frame
from .stitch import canonical_order, concat_frames, owned_rows, stitch

__all__ = [
    "canonical_order",
    "concat_frames",
    "detect_shape",
    "owned_rows",
    "read_csv",
    "service_frame",
    "stitch",
    "to_frame",
]
