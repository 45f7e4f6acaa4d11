"""Shared fixtures.

Sandbox fixtures:

- ``sandbox`` (session scope): one sandbox for the whole run, seed 0, 64 devices, the clock
  fixed at :data:`SANDBOX_NOW`. Read it, query it, do not move its clock or change its
  whitelist (other tests share it); read counters as differences.
- ``make_sandbox`` (function scope): a factory ``make_sandbox(**serve_options)`` for a private
  instance (own seed, clock, faults, sync delay...); the clock defaults to
  :data:`SANDBOX_NOW`. Instances stop at the end of the test.

Helpers (imported by tests with ``from tests.conftest import ...``):

- A scripted HTTP server on loopback for the HTTP layer's tests (real sockets, no mocks), and
  :func:`raw_server`, which answers with a status line of its own (a reason phrase that
  ``http.server`` would not send).
- :func:`chained`: an exception with everything chained to it, for the secrets tests.

Every test leaves the runner's SIGINT and SIGTERM as it found them (an autouse fixture fails
the one that does not): a child inherits an ignored signal, so a runner left ignoring SIGTERM
could not stop the sandboxes and servers that later tests start in processes of their own.

  Each request takes the next step of a script: an answer (status, headers, body), a ``drop``
  (status line, headers with the full Content-Length and half the body, then the connection is
  closed), a ``close`` (the connection is closed before any answer) or a ``sleep`` before the
  answer. When the script runs out the last step repeats.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from edgereports.sandbox import SandboxHandle, serve

SANDBOX_NOW = "2022-07-08T10:00:00+05:30"
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@pytest.fixture(autouse=True)
def _signals_as_found() -> Iterator[None]:
    """Fail a test that leaves SIGINT or SIGTERM handled otherwise than it found them (and put
    them back, so that the tests after it run as they would)."""
    before = {number: signal.getsignal(number) for number in _SIGNALS}
    yield
    changed = {n: signal.getsignal(n) for n in _SIGNALS if signal.getsignal(n) != before[n]}
    for number in changed:
        signal.signal(number, before[number])
    if changed:
        said = ", ".join(
            f"{signal.Signals(n).name} {before[n]!r} -> {h!r}" for n, h in changed.items()
        )
        pytest.fail(f"the test changed the runner's signal handling: {said}")


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


@dataclass(frozen=True)
class Step:
    """One scripted answer."""

    status: int = 200
    body: bytes = b'{"ok": true}'
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),)
    drop: bool = False
    close: bool = False
    sleep: float = 0.0


@dataclass
class Seen:
    """One request the server received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    at: float = field(default_factory=time.monotonic)  # when it arrived (monotonic seconds)


@dataclass
class ScriptedServer:
    """The running server: its URL, the requests it saw, and the script."""

    url: str
    script: list[Step]
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_step(self) -> Step:
        with self.lock:
            index = min(len(self.seen) - 1, len(self.script) - 1)
            return self.script[index]

    def record(self, seen: Seen) -> None:
        with self.lock:
            self.seen.append(seen)


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return None

        def _serve(self) -> None:
            try:
                self._answer()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up (e.g. a read timeout)

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            parts = urlsplit(self.path)
            server.record(
                Seen(self.command, parts.path, parse_qs(parts.query), dict(self.headers), body)
            )
            step = server.next_step()
            if step.sleep:
                time.sleep(step.sleep)
            if step.close:
                self.close_connection = True
                return
            self.send_response(step.status)
            for name, value in step.headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(step.body)))
            if step.drop:
                self.send_header("Connection", "close")
            self.end_headers()
            if step.drop:
                self.wfile.write(step.body[: len(step.body) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(step.body)

        do_GET = do_POST = do_DELETE = _serve

    return Handler


@contextmanager
def scripted(steps: Sequence[Step]) -> Iterator[ScriptedServer]:
    """Run a scripted server on 127.0.0.1, port 0, for the duration of the block."""
    holder = ScriptedServer(url="", script=list(steps))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(holder))
    httpd.daemon_threads = True
    holder.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield holder
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def closed_port_url() -> str:
    """A loopback URL on a port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@contextmanager
def every_logger_at_debug() -> Iterator[None]:
    """Set every existing logger to DEBUG for the block, then restore the levels."""
    import logging

    loggers = [logging.getLogger(n) for n in list(logging.Logger.manager.loggerDict)]
    loggers.append(logging.getLogger())
    levels = [log.level for log in loggers]
    for log in loggers:
        log.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        for log, level in zip(loggers, levels, strict=True):
            log.setLevel(level)


@contextmanager
def raw_server(status_line: str, body: bytes = b"") -> Iterator[str]:
    """A loopback server answering every request with ``status_line`` (its own reason)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.05)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                with contextlib.suppress(OSError):
                    conn.recv(65536)
                    head = f"{status_line}\r\nContent-Length: {len(body)}\r\nConnection: close"
                    conn.sendall(head.encode() + b"\r\n\r\n" + body)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def chained(exc: BaseException | None) -> list[BaseException]:
    """``exc`` and everything chained to it: causes, contexts, a group's or a failure's errors."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo:
        item = todo.pop()
        if item is None or any(item is s for s in seen):
            continue
        seen.append(item)
        todo += [item.__cause__, item.__context__]
        todo += [getattr(f, "error", None) for f in getattr(item, "failures", ())]
        if isinstance(item, BaseExceptionGroup):
            todo += list(item.exceptions)
    return seen
