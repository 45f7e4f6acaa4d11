"""Shared fixtures.

Sandbox fixtures:

- ``sandbox`` (session scope): one sandbox for the whole run, seed 0, 64 devices, the clock
  fixed at :data:`SANDBOX_NOW`. Read it, query it, do not move its clock or change its
  whitelist (other tests share it); read counters as differences.
- ``make_sandbox`` (function scope): a factory ``make_sandbox(**serve_options)`` for a private
  instance (own seed, clock, faults, sync delay...); the clock defaults to
  :data:`SANDBOX_NOW`. Instances stop at the end of the test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from edgereports.sandbox import SandboxHandle, serve

SANDBOX_NOW = "2022-07-08T10:00:00+05:30"


@pytest.fixture(scope="session")
def sandbox() -> Iterator[SandboxHandle]:
    """One sandbox shared by the whole test session (seed 0, clock fixed at SANDBOX_NOW)."""
    with serve(seed=0, clock=SANDBOX_NOW) as handle:
        yield handle


@pytest.fixture
def make_sandbox() -> Iterator[Callable[..., SandboxHandle]]:
    """A factory of private sandboxes: ``make_sandbox(seed=3, faults={...}, clock=...)``."""
    with ExitStack() as stack:

        def factory(**options: Any) -> SandboxHandle:
            options.setdefault("clock", SANDBOX_NOW)
            return stack.enter_context(serve(**options))

        yield factory
