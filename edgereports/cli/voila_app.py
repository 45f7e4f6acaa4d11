"""Voila serving one notebook as an app: the cells tagged ``not-in-app`` are left out.

``edgereports explorer`` runs ``python -m edgereports.cli.voila_app NOTEBOOK [voila options]``:
notebook 02 shows the explorer, then demonstrates driving it from code (setting values,
clicking Run and Export). Those cells teach a notebook reader; in the web app they would show
below the explorer and run on every page load (an export the user never asked for, a
granularity left set). Voila runs the notebook without them. Voila handles SIGTERM itself:
it stops its kernels and exits.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SKIP_TAG", "app_cells", "main"]

#: The tag of the cells a notebook shows its readers but not the web app.
SKIP_TAG = "not-in-app"


def app_cells(_request: Any, notebook: Any, cwd: str) -> Any:
    """Voila's ``prelaunch_hook``: the notebook without its cells tagged :data:`SKIP_TAG`."""
    del cwd
    notebook.cells = [
        c for c in notebook.cells if SKIP_TAG not in (c.get("metadata", {}).get("tags") or ())
    ]
    return notebook


def main(argv: list[str] | None = None) -> None:
    """Run Voila with :func:`app_cells` as its prelaunch hook."""
    from voila.app import Voila

    app = Voila.instance()
    app.initialize(argv)
    app.voila_configuration.prelaunch_hook = app_cells
    app.start()


if __name__ == "__main__":  # pragma: no cover - run by ``edgereports explorer``
    main()
