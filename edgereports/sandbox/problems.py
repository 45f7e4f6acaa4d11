"""Error answers of the sandbox: every failure is a JSON body, never a traceback.

Body shape (all routes): ``{"status": 400, "error": "Bad Request", "message": "...",
"field": "metrics[0].name"}``; ``field`` names the offending input when there is one.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

__all__ = ["ApiProblem", "problem_body"]


def problem_body(status: int, message: str, field: str | None = None) -> dict[str, Any]:
    """Return the JSON error body for ``status``.

    Args:
        status: the HTTP status code.
        message: what is wrong, for a human.
        field: the request field at fault, if any.

    Returns:
        The body as a dict.
    """
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    body: dict[str, Any] = {"status": status, "error": phrase, "message": message}
    if field is not None:
        body["field"] = field
    return body


class ApiProblem(Exception):
    """An error the sandbox answers with a JSON body (raised inside request handlers).

    Args:
        status: HTTP status code (4xx or 5xx).
        message: what is wrong.
        field: the request field at fault, if any.
        headers: extra response headers (e.g. ``Retry-After``).
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        field: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        """Return the JSON error body."""
        return problem_body(self.status, self.message, self.field)
