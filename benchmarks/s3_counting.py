"""An S3-compatible server (moto) on loopback that counts the requests it serves.

Run as a script: ``python benchmarks/s3_counting.py PORT``. Every request is counted by kind
(``GET`` of a table's log object: Delta's ``_delta_log/``, Iceberg's ``metadata/``; other
``GET``, ``PUT``, ``LIST``, ``HEAD``, ``DELETE``...);
``GET /_counts`` answers the counts so far as JSON (not counted). The benchmarks start it in a
subprocess: delta-rs may hold the GIL while it waits on the store.
"""

from __future__ import annotations

import json
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

_COUNTS: Counter[str] = Counter()
_LOCK = threading.Lock()


def kind(method: str, path: str, query: str) -> str:
    """The kind of one request, as counted."""
    if method == "GET" and ("list-type" in query or path.count("/") <= 1):
        return "LIST"
    log = "/_delta_log/" in path or "/metadata/" in path
    if method == "GET":
        return "GET log" if log else "GET data"
    if method == "PUT":
        return "PUT log" if log else "PUT data"
    return method


def counting(app: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
    """Wrap a WSGI app: count each request, answer ``/_counts``."""

    def wrapped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == "/_counts":
            with _LOCK:
                body = json.dumps(dict(_COUNTS)).encode()
            start_response("200 OK", [("Content-Type", "application/json")])
            return [body]
        label = kind(environ.get("REQUEST_METHOD", ""), path, environ.get("QUERY_STRING", ""))
        with _LOCK:
            _COUNTS[label] += 1
        return app(environ, start_response)

    return wrapped


def main() -> None:
    """Serve on 127.0.0.1:PORT until killed."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import run_simple

    port = int(sys.argv[1])
    app = DomainDispatcherApplication(create_backend_app)
    run_simple("127.0.0.1", port, counting(app), threaded=True)


if __name__ == "__main__":
    main()
