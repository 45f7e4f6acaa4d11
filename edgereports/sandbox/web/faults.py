"""Fault injection for client tests: latency, 5xx answers, 429 with Retry-After, dropped bodies.

Faults hit the API routes (reporting, content, campaigns by default; never ``/sandbox/...``,
``/openapi.json`` or playback). Three sources, checked in this order for each API request:

1. The request header ``X-Sandbox-Fault``, a comma-separated list of
   ``latency=<seconds>``, ``<status>`` (any 4xx/5xx code, e.g. ``503``),
   ``429`` or ``429;retry-after=<seconds>``, ``drop``, or ``none`` (no fault, not even a
   random one). Example: ``X-Sandbox-Fault: latency=0.2, 503``.
2. A queue of specs (same syntax) filled with :meth:`FaultInjector.enqueue`, ``serve(faults=
   FaultConfig(schedule=...))`` or ``POST /sandbox/faults``: each API request takes the next one.
3. Random faults from :class:`FaultConfig` rates, drawn from a seeded ``random.Random``.

``drop`` sends the status line, headers (with the full ``Content-Length``) and half the body,
then closes the connection: clients see an incomplete read (requests raises
``ChunkedEncodingError``). Every injected fault is counted by kind: ``latency``, the status code
as a string (``"500"``, ``"429"``...), and ``drop``.
"""

from __future__ import annotations

import random
import re
import threading
from collections import Counter, deque
from dataclasses import dataclass, field

__all__ = ["FaultConfig", "FaultInjector", "FaultSpec", "parse_fault_header"]

_STATUS = re.compile(r"^(?P<code>[45]\d\d)(?:\s*;\s*retry-after\s*=\s*(?P<ra>\d+(?:\.\d+)?))?$")
_LATENCY = re.compile(r"^latency\s*=\s*(?P<s>\d+(?:\.\d+)?)$")
MAX_LATENCY = 30.0
AREAS = ("reporting", "content", "campaigns")


@dataclass(frozen=True)
class FaultSpec:
    """One request's faults: optional latency, then an error status or a dropped body."""

    latency: float = 0.0
    status: int | None = None
    retry_after: float | None = None
    drop: bool = False
    none: bool = False


@dataclass(frozen=True)
class FaultConfig:
    """Faults configured when the sandbox starts (all rates are probabilities per request).

    Attributes:
        latency: seconds added to a request, with probability ``latency_rate``.
        latency_rate: chance of adding ``latency`` (1.0: every request).
        error_rate: chance of answering with one of ``error_statuses`` instead.
        error_statuses: the statuses to pick from, uniformly.
        rate_limit_rate: chance of answering 429.
        retry_after: the ``Retry-After`` seconds of a 429 (0 allowed).
        drop_rate: chance of dropping the connection mid-body.
        seed: seed of the random draws.
        areas: which API areas get random and queued faults (the header works everywhere).
        schedule: specs (header syntax) for the first API requests, in order.
    """

    latency: float = 0.0
    latency_rate: float = 1.0
    error_rate: float = 0.0
    error_statuses: tuple[int, ...] = (500, 502, 503)
    rate_limit_rate: float = 0.0
    retry_after: float = 1.0
    drop_rate: float = 0.0
    seed: int = 0
    areas: tuple[str, ...] = AREAS
    schedule: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        for name in ("latency_rate", "error_rate", "rate_limit_rate", "drop_rate"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, got {value}")
        if self.error_rate + self.rate_limit_rate + self.drop_rate > 1.0:
            raise ValueError("error_rate + rate_limit_rate + drop_rate must not exceed 1")
        if not 0.0 <= self.latency <= MAX_LATENCY:
            raise ValueError(f"latency must be between 0 and {MAX_LATENCY} seconds")
        if self.retry_after < 0:
            raise ValueError("retry_after must be >= 0")
        if not self.error_statuses or any(not 400 <= s <= 599 for s in self.error_statuses):
            raise ValueError("error_statuses must be 4xx or 5xx codes")
        unknown = set(self.areas) - set(AREAS)
        if unknown:
            raise ValueError(f"unknown fault areas {sorted(unknown)}; known: {list(AREAS)}")
        for spec in self.schedule:
            parse_fault_header(spec)

    @property
    def active(self) -> bool:
        """Whether any random fault can happen."""
        return bool(self.latency or self.error_rate or self.rate_limit_rate or self.drop_rate)


def parse_fault_header(value: str) -> FaultSpec:
    """Parse an ``X-Sandbox-Fault`` value.

    Args:
        value: e.g. ``"latency=0.1, 429;retry-after=0"``.

    Returns:
        The spec.

    Raises:
        ValueError: an item is not understood (the message names it).
    """
    latency = 0.0
    status: int | None = None
    retry_after: float | None = None
    drop = False
    none = False
    for raw in value.split(","):
        item = raw.strip().lower()
        if not item:
            continue
        if item == "drop":
            drop = True
        elif item == "none":
            none = True
        elif m := _LATENCY.match(item):
            latency = float(m["s"])
            if latency > MAX_LATENCY:
                raise ValueError(f"latency {latency} exceeds {MAX_LATENCY} seconds")
        elif m := _STATUS.match(item):
            status = int(m["code"])
            if m["ra"] is not None:
                if status != 429:
                    raise ValueError(f"retry-after only goes with 429, not {status}")
                retry_after = float(m["ra"])
        else:
            raise ValueError(
                f"cannot parse fault {raw.strip()!r}; use latency=<s>, <4xx/5xx status>, "
                "429;retry-after=<s>, drop or none"
            )
    if status is not None and drop:
        raise ValueError("a fault cannot be both a status and a drop")
    return FaultSpec(latency, status, retry_after, drop, none)


class FaultInjector:
    """Decides and counts the faults of each API request (thread-safe).

    Args:
        config: the configured faults.
    """

    def __init__(self, config: FaultConfig | None = None) -> None:
        self.config = config or FaultConfig()
        self._lock = threading.Lock()
        self._rng = random.Random(self.config.seed)
        self._queue: deque[FaultSpec] = deque(parse_fault_header(s) for s in self.config.schedule)
        self._counts: Counter[str] = Counter()

    def enqueue(self, *specs: str) -> None:
        """Queue faults (header syntax) for the next API requests, one each.

        Raises:
            ValueError: a spec does not parse.
        """
        parsed = [parse_fault_header(s) for s in specs]
        with self._lock:
            self._queue.extend(parsed)

    def pending(self) -> int:
        """Return how many queued faults are still waiting."""
        with self._lock:
            return len(self._queue)

    def decide(self, area: str, header: str | None) -> FaultSpec:
        """Return the faults for one request to ``area``.

        Args:
            area: ``reporting``, ``content`` or ``campaigns``.
            header: the ``X-Sandbox-Fault`` header, if sent.

        Returns:
            The spec (possibly empty).

        Raises:
            ValueError: the header does not parse.
        """
        if header is not None and header.strip():
            return parse_fault_header(header)
        cfg = self.config
        if area not in cfg.areas:
            return FaultSpec()
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            if not cfg.active:
                return FaultSpec()
            r_latency, r_kind, r_status = self._rng.random(), self._rng.random(), self._rng.random()
        latency = cfg.latency if cfg.latency and r_latency < cfg.latency_rate else 0.0
        if r_kind < cfg.error_rate:
            pick = cfg.error_statuses[int(r_status * len(cfg.error_statuses))]
            return FaultSpec(latency=latency, status=pick)
        if r_kind < cfg.error_rate + cfg.rate_limit_rate:
            return FaultSpec(latency=latency, status=429, retry_after=cfg.retry_after)
        if r_kind < cfg.error_rate + cfg.rate_limit_rate + cfg.drop_rate:
            return FaultSpec(latency=latency, drop=True)
        return FaultSpec(latency=latency)

    def count(self, kind: str) -> None:
        """Count one injected fault of ``kind``."""
        with self._lock:
            self._counts[kind] += 1

    def counts(self) -> dict[str, int]:
        """Return the injected faults so far, by kind."""
        with self._lock:
            return dict(self._counts)

    def reset(self) -> None:
        """Forget the counts and the queue."""
        with self._lock:
            self._counts.clear()
            self._queue.clear()
