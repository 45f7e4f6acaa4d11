"""Area C: the report endpoint (``POST /connectivity/v1/report?apikey=...``).

:func:`answer_report` serves the v2 report too (a key in the query, a JSON body, JSON or CSV
answers). Every request that reaches the endpoint is counted; the JSON bodies that reach
validation are remembered (``SandboxHandle.report_requests()``). Every answer (200) carries a
``Server-Timing`` header with two durations in milliseconds: ``gen`` from the start of the
handler to the computed answer (credentials, ``Accept``, the body, validation, the engine) and
``ser`` for rendering it. The server's work around the handler is in neither.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson
from flask import Flask, Response, request

from ..engine.answer import CurrentAnswer, SeriesAnswer, SimAnswer, answer
from ..engine.render import U8, render_csv, render_json_buffer
from ..engine.request import parse_report
from ..problems import ApiProblem
from .state import SandboxState, same_secret

__all__ = ["REPORT_PATH", "answer_report", "read_json_body", "register_reporting", "timed_response"]

REPORT_PATH = "/connectivity/v1/report"
#: Bytes of a large answer handed to the WSGI server at a time.
BODY_BLOCK = 256 * 1024


def _wants_csv() -> bool:
    """Whether the request's ``Accept`` asks for CSV (406 when it allows neither JSON nor CSV)."""
    if not request.headers.get("Accept"):
        return False
    best = request.accept_mimetypes.best_match(["application/json", "text/csv"])
    if best is None:
        raise ApiProblem(406, "Accept must allow application/json or text/csv", field="Accept")
    return best == "text/csv"


def read_json_body() -> Any:
    """The parsed JSON body (415 when not declared JSON, 400 when it does not parse)."""
    if request.mimetype != "application/json":
        raise ApiProblem(415, "Content-Type must be application/json")
    data = request.get_data(cache=False)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ApiProblem(400, f"the request body is not valid JSON: {exc}") from None


def _blocks(view: memoryview, done: Callable[[], None]) -> Iterator[bytes]:
    """Yield ``view`` as ``bytes`` of at most ``BODY_BLOCK`` each, then call ``done``."""
    try:
        for at in range(0, view.nbytes, BODY_BLOCK):
            yield view[at : at + BODY_BLOCK].tobytes()
    finally:
        view.release()
        done()


def timed_response(
    payload: bytes | str | Iterator[bytes],
    mimetype: str,
    started: float,
    answered: float,
    length: int | None = None,
) -> Response:
    """A 200 answer with its ``Server-Timing`` header (and ``Content-Length`` if given).

    ``gen`` runs from ``started`` to ``answered``, ``ser`` from then until now, in milliseconds:
    ``gen;dur=12.345, ser;dur=4.567``.
    """
    gen, ser = answered - started, time.perf_counter() - answered
    headers = {"Server-Timing": f"gen;dur={gen * 1e3:.3f}, ser;dur={ser * 1e3:.3f}"}
    if length is not None:
        headers["Content-Length"] = str(length)
    return Response(payload, mimetype=mimetype, headers=headers)


Answer = SeriesAnswer | CurrentAnswer | SimAnswer


def answer_report(
    state: SandboxState, key: str, invalid: str, compute: Callable[[Any], Answer]
) -> Response:
    """Answer a report that takes the API key in the query parameter ``key``.

    Checks the key (401: missing, else ``invalid``) and ``Accept``, reads and logs the JSON
    body, has ``compute`` answer it and renders the answer (:func:`_answer_response`).
    """
    started = time.perf_counter()
    given = request.args.get(key)
    if not given:
        raise ApiProblem(401, f"the {key} query parameter is required", field=key)
    accounts = _accounts_of_key(state, given)
    if accounts is None and not same_secret(given, state.api_key):
        raise ApiProblem(401, invalid, field=key)
    want_csv = _wants_csv()
    body = read_json_body()
    if accounts is not None:
        _refuse_other_accounts(body, accounts, key)
    state.log_report(body)
    ans = compute(body)
    return _answer_response(state, ans, want_csv, started, time.perf_counter())


def _accounts_of_key(state: SandboxState, given: str) -> frozenset[str] | None:
    """The accounts a further key of ``state.account_keys`` may read (None: not one of them)."""
    found = None
    for other, accounts in state.account_keys.items():
        if same_secret(given, other):
            found = accounts
    return found


def _refuse_other_accounts(body: Any, accounts: frozenset[str], key: str) -> None:
    """403 when ``body`` filters on an account outside ``accounts`` (a body without one is
    left to validation)."""
    clauses = body.get("dimension_filter_clauses") if isinstance(body, dict) else None
    for clause in clauses if isinstance(clauses, list) else ():
        filters = clause.get("filters") if isinstance(clause, dict) else None
        for f in filters if isinstance(filters, list) else ():
            if not isinstance(f, dict) or f.get("dimension_name") != "account_id":
                continue
            expressions = f.get("expressions")
            for account in expressions if isinstance(expressions, list) else [expressions]:
                if str(account) not in accounts:
                    raise ApiProblem(403, f"this {key} may not read account {account}", field=key)


def _answer_response(
    state: SandboxState, ans: Answer, want_csv: bool, started: float, answered: float
) -> Response:
    """Render an answer as CSV or JSON into a 200 response with its ``Server-Timing``.

    A large JSON answer is written into a buffer of ``state.buffers`` and handed to the server
    from there in blocks of ``BODY_BLOCK`` bytes (WSGI servers take ``bytes`` only), with its
    ``Content-Length``; the buffer goes back to the pool once the last block is out.
    """
    if want_csv:
        return timed_response(render_csv(ans), "text/csv", started, answered)
    taken: list[U8] = []

    def alloc(size: int) -> U8:
        taken.append(state.buffers.take(size))
        return taken[-1]

    def done() -> None:
        for buf in taken:
            state.buffers.give(buf)

    payload = render_json_buffer(ans, alloc)
    if isinstance(payload, bytes):
        return timed_response(payload, "application/json", started, answered)
    blocks = _blocks(payload, done)
    return timed_response(blocks, "application/json", started, answered, payload.nbytes)


def register_reporting(app: Flask, state: SandboxState) -> None:
    """Register endpoint 13 on ``app``.

    Args:
        app: the Flask app.
        state: the sandbox state.
    """

    def compute(body: Any) -> Answer:
        now, limit = state.data_now(), state.limits.report_points
        return answer(parse_report(body), state.network, now, state.seed, max_points=limit)

    @app.post(REPORT_PATH)
    def report() -> Response:
        return answer_report(state, "apikey", "invalid apikey", compute)
