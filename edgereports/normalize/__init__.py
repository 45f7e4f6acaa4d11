"""JSON and CSV report answers into tidy frames with the schemas of :mod:`..schema`.

Public names: :func:`to_frame`, :func:`read_csv`, :func:`stitch`, :func:`concat_frames` and
:func:`detect_shape`. The two steps of stitching that the client applies part by part
(``owned_rows``, ``canonical_order``) live in :mod:`.stitching`. The package imports pandas,
pyarrow and orjson, never ``requests``.

Every public name is loaded on first use, so a module of the package that a pull needs before
its first request (``output``, to check ``output=``) comes without the readers and the
stitching: a pull loads them once its first requests are out, while the answers travel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._dependencies import lazy_names

if TYPE_CHECKING:
    from .api import read_csv, to_frame
    from .detect import detect_shape
    from .reporting_service import service_frame
    from .stitching import concat_frames, stitch

#: The public names loaded on first access: name -> module.
_LAZY = {
    "concat_frames": ".stitching",
    "detect_shape": ".detect",
    "read_csv": ".api",
    "service_frame": ".reporting_service",
    "stitch": ".stitching",
    "to_frame": ".api",
}

__all__ = [
    "concat_frames",
    "detect_shape",
    "read_csv",
    "service_frame",
    "stitch",
    "to_frame",
]


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals(), __all__)
