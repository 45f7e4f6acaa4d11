"""The ``edgereports`` command (exit status: :data:`EPILOG`, and 130 when interrupted)."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence

from .._version import __version__
from ..errors import EdgeReportsError, InputError
from . import (
    availability,
    cache,
    campaigns,
    content,
    demo,
    export,
    health,
    jupyter,
    page,
    query,
    report,
    service_report,
)
from ._errors import ShortErrors, say

__all__ = ["main"]

Handler = Callable[[argparse.Namespace], int]

EPILOG = """\
examples:
  edgereports demo --out demo-output
  edgereports presets
  edgereports query --preset time_usage_enterprise --account-id A \\
      --start 2022-07-07T09:50:00+05:30 --end 2022-07-08T09:50:00+05:30
  edgereports query --account-id A --last DAY --granularity HOUR --metric ue_connections:MAX
  edgereports page nightly.toml --last 7d --compare previous_period --out weekly.html
  edgereports sandbox --port 8080
  edgereports health --last 7d
  edgereports availability --last 30d --by site
  edgereports content list
  edgereports campaigns status spring-sale
  edgereports cache info

settings come from EDGEREPORTS_API_KEY, EDGEREPORTS_PARTNER_NAME, EDGEREPORTS_BASE_URL and
EDGEREPORTS_REPORTING_URL. Exit status: 0 ok, 1 service or data error, 2 bad input,
3 export locked by another run.
"""


def _cmd_sandbox(args: argparse.Namespace) -> int:
    from ..sandbox.__main__ import main as sandbox_main

    status: int = sandbox_main(args.extra_args)
    return status


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``edgereports`` command."""
    parser = ShortErrors(
        prog="edgereports",
        description="Connectivity reports of the edge-network service as tidy DataFrames.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"edgereports {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "sandbox",
        help="run the local emulator of the service",
        description="Run the local sandbox; 'edgereports sandbox --help' lists its options.",
        add_help=False,
    )
    p.set_defaults(handler=_cmd_sandbox, passes_through=True)

    query.add_parsers(sub)
    report.add_parser(sub)
    service_report.add_parser(sub)
    export.add_parser(sub)
    page.add_parser(sub)
    content.add_parser(sub)
    campaigns.add_parser(sub)
    demo.add_parser(sub)
    health.add_parser(sub)
    availability.add_parser(sub)
    jupyter.add_parsers(sub)
    cache.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "passes_through", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra_args = extra
    handler: Handler = args.handler
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            status = handler(args)
        except InputError as exc:
            say("edgereports: error: ", exc)
            status = 2
        except ImportError as exc:  # the sandbox's extras: imported here, not at start-up
            from ..sandbox.extras import SandboxExtrasMissing

            if not isinstance(exc, SandboxExtrasMissing):
                raise
            say("edgereports: error: ", exc)
            status = 2
        except EdgeReportsError as exc:
            say(f"edgereports: {type(exc).__name__}: ", exc)
            status = 1
        except OSError as exc:  # a disk that refuses: one line, no traceback
            from ..export.files import describe_os_error

            say("edgereports: error: cannot write: ", describe_os_error(exc))
            status = 1
        except KeyboardInterrupt:
            status = 130
    for w in caught:
        say("edgereports: warning: ", w.message)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
