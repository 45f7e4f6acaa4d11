"""Error answers of the sandbox: every failure is a JSON body, never a traceback.

Body shape (all routes): ``{"status": 400, "error": "Bad Request", "message": "...",
"field": "metrics[0].name"}``; ``field`` names the offending input when there is one.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

__all__ = ["ApiProblem", "bad"]


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
        try:
            phrase = HTTPStatus(self.status).phrase
        except ValueError:
            phrase = "Error"
        body: dict[str, Any] = {"status": self.status, "error": phrase, "message": self.message}
        if self.field is not None:
            body["field"] = self.field
        return body


def bad(message: str, field: str | None = None) -> ApiProblem:
    """Return a 400 problem naming ``field``."""
    return ApiProblem(400, message, field=field)
