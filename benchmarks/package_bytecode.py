"""Bring the package's bytecode up to date before a benchmark times new processes.

Benchmarks that start processes time their imports too. Where ``PYTHONDONTWRITEBYTECODE`` is
set (and an editable install never compiles), a module edited since the last compilation would
be compiled again in every process, which is not what users run.
"""

from __future__ import annotations

import compileall
from pathlib import Path


def compile_package() -> None:
    """Compile the ``edgereports`` package's modules whose bytecode is missing or stale."""
    import edgereports

    compileall.compile_dir(str(Path(edgereports.__file__).parent), quiet=1)
