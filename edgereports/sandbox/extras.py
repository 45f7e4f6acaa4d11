"""The sandbox's optional packages (the ``[sandbox]`` extra): check them before using them.

Flask (the app), cheroot (the HTTP server) and numba (the model's kernels) are not dependencies
of ``edgereports`` itself. Importing ``edgereports.sandbox`` needs none of them; running a
sandbox needs all three, and :func:`require_extras` says so in one line when one is missing.
"""

from __future__ import annotations

import importlib.util

__all__ = ["EXTRA_PACKAGES", "INSTALL_HINT", "SandboxExtrasMissing", "require_extras"]

#: The import names of the packages of the ``[sandbox]`` extra.
EXTRA_PACKAGES = ("flask", "cheroot", "numba")
INSTALL_HINT = "pip install 'edgereports[sandbox]'"


class SandboxExtrasMissing(ImportError):
    """The packages of the ``[sandbox]`` extra are not installed."""


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a finder refused it, or a stub with no spec
        return False


def require_extras() -> None:
    """Check that the packages of the ``[sandbox]`` extra can be imported.

    Raises:
        SandboxExtrasMissing: one of them is missing (the message names the pip command).
    """
    missing = [name for name in EXTRA_PACKAGES if not _installed(name)]
    if missing:
        raise SandboxExtrasMissing(
            f"the sandbox needs its extra packages ({', '.join(EXTRA_PACKAGES)}; "
            f"missing: {', '.join(missing)}): {INSTALL_HINT}"
        )
