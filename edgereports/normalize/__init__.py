"""JSON and CSV report answers (SPEC 2.9) into tidy frames with the schemas of :mod:`..schema`.

Public names: :func:`to_frame`, :func:`read_csv`, :func:`stitch`, :func:`concat_frames` and
:func:`detect_shape`. The two steps of stitching that the client applies part by part
(``owned_rows``, ``canonical_order``) live in :mod:`.stitch`. The package imports pandas,
pyarrow and orjson, never ``requests``.
"""

from __future__ import annotations

from .api import read_csv, to_frame
from .detect import detect_shape
from .service import service_frame
from .stitch import concat_frames, stitch

__all__ = [
    "concat_frames",
    "detect_shape",
    "read_csv",
    "service_frame",
    "stitch",
    "to_frame",
]
