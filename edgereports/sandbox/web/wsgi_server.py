"""The HTTP server under the sandbox's Flask app: cheroot, with keep-alive and a thread pool.

cheroot (CherryPy's WSGI server) keeps HTTP/1.1 connections alive (werkzeug's development
server closes every one), up to ``KEEP_ALIVE`` idle ones, and queues ``BACKLOG`` new ones. Three
hooks adapt it to the sandbox:

- request headers whose names hold an underscore (``api_key``) are handed to the app as they
  were sent, under the environ key ``RAW_HEADERS`` (the CGI-style ``HTTP_API_KEY`` cannot tell
  ``api_key`` from ``api-key``);
- a response the app marks with ``DROP_FLAG`` (the ``drop`` fault: half the body) closes the
  connection after it, so the client sees an incomplete body instead of waiting for the rest;
- a large block of a body with a ``Content-Length`` goes to the socket directly (cheroot's
  writer copies its pending buffer into a new ``bytes`` on every send).

Request lines are logged (with credentials redacted) to the ``edgereports.sandbox`` logger
unless ``quiet``.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["ServerThread", "redact_path", "start_server"]

_LOG = logging.getLogger("edgereports.sandbox")
_SECRET_PARAM = re.compile(r"(?i)\b(apikey|api_key|app_key|signature|authorization)=[^&\s]*")
#: Worker threads: twice the sixteen requests a client keeps in flight by default, so that a
#: latency the sandbox adds (a sleep in a worker) delays requests, never queues them behind it.
THREADS = 32
#: Seconds to wait for requests in progress when the server stops.
SHUTDOWN_TIMEOUT = 2
#: Pending connections the listening socket queues (cheroot's default, 5, drops bursts).
BACKLOG = 128
#: Idle keep-alive connections kept open (cheroot's default, 10, is below the sixteen
#: connections a client keeps by default: the rest would reconnect).
KEEP_ALIVE = 128
#: Blocks of a body at least this large skip cheroot's socket writer.
DIRECT_BYTES = 64 * 1024

WsgiApp = Callable[[dict[str, Any], Any], Any]


def redact_path(text: str) -> str:
    """Return ``text`` with credential query parameters replaced by ``***``."""
    return _SECRET_PARAM.sub(lambda m: f"{m.group(1)}=***", text)


class ServerThread:
    """A running server: its port, and :meth:`stop`."""

    def __init__(self, server: Any, thread: threading.Thread) -> None:
        self._server = server
        self._thread = thread
        self.port: int = server.bind_addr[1]

    def stop(self) -> None:
        """Stop accepting, close the connections and wait for the serving thread.

        Nothing to do once the interpreter is finalizing (a sandbox left running until then):
        its daemon threads no longer run, so they could not confirm the stop, and the
        process's end closes the socket.
        """
        if sys.is_finalizing():
            return
        self._server.stop()
        self._thread.join(timeout=SHUTDOWN_TIMEOUT + 3)


def start_server(
    host: str, port: int, app: WsgiApp, *, raw_headers: str, drop_flag: str, quiet: bool
) -> ServerThread:
    """Bind ``host:port`` and serve ``app`` from a background thread.

    Args:
        host: the interface to bind.
        port: the TCP port (0: a free one).
        app: the WSGI application.
        raw_headers: the environ key under which to pass headers whose names hold ``_``.
        drop_flag: the environ key the app sets to have the connection closed.
        quiet: do not log request lines.

    Returns:
        The running server.

    Raises:
        OSError: the address cannot be bound.
    """
    from cheroot import wsgi  # the [sandbox] extra: imported when a server starts, not before

    class Gateway(wsgi.Gateway_10):
        """Passes underscore headers through, closes after a drop, logs request lines."""

        def get_environ(self) -> dict[str, Any]:  # type: ignore[override]
            env: dict[str, Any] = super().get_environ()  # type: ignore[no-untyped-call]
            env[raw_headers] = [
                (k.decode("latin-1"), v.decode("latin-1"))
                for k, v in self.req.inheaders.items()
                if b"_" in k
            ]
            return env

        def write(self, chunk: bytes) -> None:
            length = self.remaining_bytes_out  # the Content-Length; cheroot checks blocks by it
            if (
                len(chunk) < DIRECT_BYTES
                or self.req.chunked_write
                or length is None
                or len(chunk) > length
            ):
                super().write(chunk)
                return
            super().write(b"")  # the status line and headers, through cheroot's writer
            self.req.conn.socket.sendall(chunk)
            self.req.conn.wfile.bytes_written += len(chunk)

        def respond(self) -> None:
            super().respond()
            if self.env.get(drop_flag):
                self.req.close_connection = True
            if not quiet:
                line = redact_path(f"{self.env['REQUEST_METHOD']} {self.env['REQUEST_URI']}")
                status = self.req.status.decode("latin-1").split(" ", 1)[0]
                _LOG.info('"%s" %s', line, status)

    class Server(wsgi.Server):
        """Keeps ``KEEP_ALIVE`` idle connections, keeps server errors out of the output when
        quiet, stops within 50 ms when idle."""

        expiration_interval = 0.05
        keep_alive_conn_limit = KEEP_ALIVE

        def error_log(self, msg: str = "", level: int = 20, traceback: bool = False) -> None:
            if not quiet:
                _LOG.log(level, "%s", msg, exc_info=traceback)

    server = Server(
        (host, port),
        app,
        numthreads=THREADS,
        request_queue_size=BACKLOG,
        shutdown_timeout=SHUTDOWN_TIMEOUT,
    )
    server.gateway = Gateway
    return ServerThread(server, _serve_from_daemon(server))


def _serve_from_daemon(server: Any) -> threading.Thread:
    """Bind and serve ``server`` from a daemon thread; raise here what binding raised.

    cheroot starts its worker threads in ``prepare()``, and a thread is a daemon when the
    thread that starts it is one: prepared here, every thread of the server is a daemon, so a
    process that never stops its sandbox still exits (the interpreter waits for non-daemon
    threads before it runs its exit handlers).
    """
    bound = threading.Event()
    failed: list[BaseException] = []

    def run() -> None:
        try:
            server.prepare()
        except BaseException as exc:  # handed to the caller below
            failed.append(exc)
            return
        finally:
            bound.set()
        server.serve()

    thread = threading.Thread(target=run, name="edgereports-sandbox", daemon=True)
    thread.start()
    bound.wait()
    if failed:
        thread.join()
        raise failed[0]
    return thread
