"""The mutable state of one sandbox instance: settings, counters and request log."""

from __future__ import annotations

import hmac
import threading
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..clock import Clock
from ..model.network import Network
from .buffers import BufferPool
from .faults import FaultInjector
from .throttle import Throttle

__all__ = ["Limits", "SandboxState", "same_secret"]


def same_secret(given: str, accepted: str) -> bool:
    """Whether a credential presented is the accepted one, compared in constant time.

    Compared as UTF-8 bytes: ``hmac.compare_digest`` refuses strings with characters outside
    ASCII (a key with a no-break space would be a server error, not a 401).
    """
    return hmac.compare_digest(
        given.encode("utf-8", "surrogateescape"), accepted.encode("utf-8", "surrogateescape")
    )


@dataclass(frozen=True)
class Limits:
    """Size and rate limits (beyond them: 413 for bodies, 400 for the rest, 429 for rates).

    Attributes:
        json_body: bytes of a JSON request body (report, content, whitelist).
        upload_body: bytes of a campaign onboarding (multipart) body.
        url_list: items in one ``content/add``.
        report_log: report request bodies remembered for tests.
        report_points: points (buckets x metrics) one report answer may hold (else 400
            saying so: "the answer would hold N points"), to test clients that split.
        requests_per_second: the rate-limit mode: at most this many API requests per key in
            any sliding one-second window (no burst), else 429 with ``Retry-After``; None
            (default) for no limit. See ``throttle.py``.
    """

    json_body: int = 1 << 20
    upload_body: int = 16 << 20
    url_list: int = 50
    report_log: int = 10_000
    report_points: int = 500_000
    requests_per_second: int | None = None


@dataclass(eq=False)
class SandboxState:
    """Everything one running sandbox shares between its request threads.

    Attributes:
        network: the synthetic network.
        clock: the clock.
        faults: the fault injector.
        api_key: the accepted API key (areas A, B, C and playback).
        partner_name: the accepted ``partner_name``.
        seed: the seed.
        sync_delay: seconds until onboarded content turns ``success``.
        limits: size limits.
        base_url: the server's own address, once bound.
        service_token: the accepted bearer token of the v2 reporting service.
        core_id: the mobile core id of the v2 reporting service.
        throttle: the rate-limit mode (its limit starts at ``limits.requests_per_second``).
        buffers: recycled buffers of large JSON answers (``buffers.py``).
        data_lag: seconds the reported data trails the clock (a service whose data lags):
            reports are answered as of ``clock - data_lag``, the ``Date`` header states the
            clock.
        account_keys: further API keys of the report endpoints, each accepted only for the
            accounts listed (403 for any other).
    """

    network: Network
    clock: Clock
    faults: FaultInjector
    api_key: str
    partner_name: str
    seed: int
    sync_delay: float
    limits: Limits = field(default_factory=Limits)
    base_url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)
    counts: Counter[str] = field(default_factory=Counter)
    report_log: deque[Any] = field(default_factory=deque)
    service_token: str = field(default="", repr=False)
    core_id: str = ""
    throttle: Throttle = field(default_factory=Throttle)
    buffers: BufferPool = field(default_factory=BufferPool)
    data_lag: float = 0.0
    account_keys: Mapping[str, frozenset[str]] = field(default_factory=dict, repr=False)

    def data_now(self) -> float:
        """The present of the reported data, POSIX seconds: the clock less ``data_lag``."""
        return self.clock.timestamp() - self.data_lag

    def count(self, area: str) -> None:
        """Count one request to ``area``."""
        with self.lock:
            self.counts[area] += 1

    def log_report(self, body: Any) -> None:
        """Remember a report request body (the oldest are forgotten past the limit)."""
        with self.lock:
            self.report_log.append(body)
            while len(self.report_log) > self.limits.report_log:
                self.report_log.popleft()

    def request_counts(self) -> dict[str, int]:
        """Return requests served so far per area (reporting, content, campaigns, playback)."""
        with self.lock:
            return {
                k: self.counts.get(k, 0) for k in ("reporting", "content", "campaigns", "playback")
            }

    def reports(self) -> list[Any]:
        """Return the report request bodies received so far (oldest first)."""
        with self.lock:
            return list(self.report_log)

    def reset_counters(self) -> None:
        """Forget request counts, the report log, fault counts and rate-limited requests (not
        content or campaigns)."""
        with self.lock:
            self.counts.clear()
            self.report_log.clear()
        self.faults.reset()
        self.throttle.reset()
