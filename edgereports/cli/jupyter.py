"""``edgereports lab`` and ``edgereports explorer``: JupyterLab, or the explorer notebook as a
web app (Voila), beside a sandbox, everything on loopback.

Both start the sandbox in-process on a free loopback port, export its settings
(``EDGEREPORTS_*``, and known subscribers and sites for notebook 02) to the server they start,
print them as ready-to-paste ``export`` lines, and run the server on ``127.0.0.1`` without
opening a browser. JupyterLab keeps its token (set ``JUPYTER_TOKEN`` to choose it). The
explorer app leaves out the notebook's cells tagged ``not-in-app`` (its demonstration of
driving the explorer from code). SIGTERM stops the server, its kernels and the sandbox, as
Ctrl-C does. They need the ``notebook`` extra: ``pip install 'edgereports[notebook]'``.

The notebooks ship with the package (:func:`shipped_notebooks`), so both work after an
install, outside a checkout. Without ``--notebooks``, the explorer serves the shipped notebook
where it lies and its **Export** writes under ``exports/`` of the current directory; ``lab``
serves ``notebooks/`` of the current directory when there is one (a checkout), else a copy
of the shipped notebooks it makes in ``edgereports-notebooks/`` (once: your edits stay).
"""

from __future__ import annotations

import argparse
import importlib.resources
import importlib.util
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..config import ENV_VARS

__all__ = ["SANDBOX_VAR", "add_parsers", "export_lines", "sandbox_env", "shipped_notebooks"]

HOST = "127.0.0.1"
EXPLORER = "02-explorer.ipynb"
#: Set (to 1) by ``edgereports lab|explorer``: the settings point at the sandbox they started.
SANDBOX_VAR = "EDGEREPORTS_SANDBOX"
#: Where the explorer's Export writes (set by ``edgereports explorer`` for the shipped notebook).
EXPORT_DIR_VAR = "EDGEREPORTS_EXPORT_DIR"
#: The copy of the shipped notebooks ``edgereports lab`` makes outside a checkout.
LAB_COPY = "edgereports-notebooks"
_HINT = "needs the notebook extra: pip install 'edgereports[notebook]'"


def sandbox_env(sb: Any) -> dict[str, str]:
    """The ``EDGEREPORTS_*`` variables that point the package (and notebook 02) at ``sb``."""
    sims = sb.network.sims_of(sb.account_id)
    sites = [s.customer_site_id for s in sb.network.sites if s.account_id == sb.account_id]
    return {
        ENV_VARS["api_key"]: sb.api_key,
        ENV_VARS["reporting_url"]: sb.reporting_url,
        ENV_VARS["base_url"]: sb.base_url,
        ENV_VARS["partner_name"]: sb.partner_name,
        ENV_VARS["account_id"]: sb.account_id,
        "EDGEREPORTS_MSISDNS": ",".join(str(s.msisdn) for s in sims[:3]),
        "EDGEREPORTS_IMSIS": ",".join(str(s.imsi) for s in sims[:3]),
        "EDGEREPORTS_SITES": ",".join(str(s) for s in sites),
        SANDBOX_VAR: "1",  # the notebooks say "the local sandbox", not "the live service"
    }


def shipped_notebooks() -> Path:
    """The directory of the notebooks shipped with the package: ``edgereports/notebooks`` in
    an installed wheel, the repository's ``notebooks/`` in a checkout (an editable install)."""
    packaged = importlib.resources.files("edgereports") / "notebooks"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "notebooks"


def _lab_notebooks() -> Path:
    """``notebooks/`` of the current directory, else a copy of the shipped notebooks made in
    :data:`LAB_COPY` (the notebooks it lacks only: edits stay)."""
    here = Path("notebooks")
    if here.is_dir():
        return here
    copy = Path(LAB_COPY)
    copy.mkdir(exist_ok=True)
    for notebook in sorted(shipped_notebooks().glob("*.ipynb")):
        if not (copy / notebook.name).exists():
            shutil.copyfile(notebook, copy / notebook.name)
    return copy


def export_lines(env: dict[str, str]) -> list[str]:
    """Ready-to-paste shell lines: ``export NAME=value``, quoted where needed."""
    return [f"export {name}={shlex.quote(value)}" for name, value in env.items()]


def add_parsers(subparsers: Any) -> None:
    """Add the ``lab`` and ``explorer`` subcommands to an ``add_subparsers()`` object."""
    for name, what in (
        ("lab", "JupyterLab on the notebooks, with a sandbox running"),
        ("explorer", "the explorer notebook (02) as a web app (Voila), with a sandbox running"),
    ):
        p = subparsers.add_parser(name, help=what, description=f"Serve {what}, on loopback.")
        p.add_argument("--port", type=int, default=8888 if name == "lab" else 8866)
        p.add_argument(
            "--notebooks",
            help="the notebooks' directory (default: those shipped with edgereports; lab: "
            "notebooks/ here if there is one, else a copy in edgereports-notebooks/)",
        )
        p.add_argument("--seed", type=int, default=0, help="the sandbox's seed (default 0)")
        p.set_defaults(handler=_cmd, app=name)


def _command(app: str, port: int, notebooks: Path) -> list[str]:
    if app == "lab":
        root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
        return [
            sys.executable, "-m", "jupyter", "lab", f"--ServerApp.ip={HOST}",
            f"--ServerApp.port={port}", "--ServerApp.port_retries=0", "--no-browser",
            f"--ServerApp.root_dir={notebooks}", *root,
        ]  # fmt: skip
    return [
        sys.executable, "-m", "edgereports.cli.voila_app", str(notebooks / EXPLORER),
        f"--Voila.ip={HOST}", f"--port={port}", "--no-browser", f"--Voila.root_dir={notebooks}",
    ]  # fmt: skip


def _cmd(args: argparse.Namespace) -> int:
    module = "jupyterlab" if args.app == "lab" else "voila"
    if importlib.util.find_spec(module) is None:
        print(f"edgereports {args.app}: {_HINT}", file=sys.stderr)
        return 2
    extra = {}
    if args.notebooks is not None:
        notebooks = Path(args.notebooks).resolve()
    elif args.app == "lab":
        notebooks = _lab_notebooks().resolve()
    else:  # the shipped notebook, served where it lies; its exports go here
        notebooks = shipped_notebooks()
        extra[EXPORT_DIR_VAR] = str(Path("exports").resolve())
    if not notebooks.is_dir():
        print(f"edgereports {args.app}: no notebooks directory {notebooks}", file=sys.stderr)
        return 2
    if args.app == "explorer" and not (notebooks / EXPLORER).is_file():
        print(f"edgereports explorer: no {EXPLORER} in {notebooks}", file=sys.stderr)
        return 2
    from ..sandbox import serve

    # the session's cache lives as long as its sandbox: answers of a throwaway service do not
    # belong in the per-user cache
    with serve(seed=args.seed, host=HOST, port=0) as sb, tempfile.TemporaryDirectory() as cache:
        env = sandbox_env(sb) | {ENV_VARS["cache"]: cache} | extra
        print(f"edgereports {args.app}: the notebooks in {notebooks}")
        print(f"edgereports {args.app}: a sandbox runs at {sb.reporting_url}; its settings:")
        print("\n".join(export_lines(env)), flush=True)
        where = "/lab" if args.app == "lab" else ""
        print(f"open http://{HOST}:{args.port}{where} (Ctrl-C stops both)", flush=True)
        child = subprocess.Popen(_command(args.app, args.port, notebooks), env=os.environ | env)
        previous = signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM stops all, as Ctrl-C
        try:
            return child.wait()
        except KeyboardInterrupt:
            child.terminate()  # the server stops its kernels on SIGTERM
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            return 130
        finally:
            signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: Any) -> None:
    """SIGTERM as Ctrl-C: stop the server (and its kernels), then the sandbox."""
    del signum, frame
    raise KeyboardInterrupt
