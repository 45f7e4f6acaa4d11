"""The error tree and redact()."""

from __future__ import annotations

import pytest

import edgereports as er
from edgereports.errors import redact

KEY = "k3y-abcdef123456"


@pytest.mark.parametrize(
    "text",
    [
        f"https://r.example/connectivity/v1/report?apikey={KEY}",
        f"https://r.example/x?a=1&apikey={KEY}&b=2",
        f"https://edge.example/v.m3u8?sig=1&api_key={KEY}",
        f"{{'api_key': '{KEY}', 'Accept': 'x'}}",
        f'{{"app_key": "{KEY}"}}',
        f"api_key: {KEY}",
        f"POST /report?apikey={KEY} HTTP/1.1",
    ],
)
def test_redact_removes_keys(text: str) -> None:
    out = redact(text)
    assert KEY not in out
    assert "***" in out


def test_redact_removes_literal_secrets_and_keeps_the_rest() -> None:
    assert redact(f"the key {KEY} leaked", secrets=[KEY]) == "the key *** leaked"
    assert redact("https://r.example/report?x=1") == "https://r.example/report?x=1"


def test_tree() -> None:
    assert issubclass(er.QueryError, er.InputError)
    assert issubclass(er.InputError, ValueError)
    assert issubclass(er.ConfigError, er.InputError)
    for cls in (er.AuthError, er.NotFoundError, er.RateLimitError):
        assert issubclass(cls, er.ApiError)
    assert issubclass(er.SyncTimeout, TimeoutError)
    for cls in (
        er.TransportError,
        er.ApiError,
        er.SchemaError,
        er.PartialFailure,
        er.SyncTimeout,
        er.ExportLocked,
        er.InputError,
    ):
        assert issubclass(cls, er.EdgeReportsError)
    err = er.RateLimitError("slow down", url="https://x", retry_after=3.0)
    assert (err.status_code, err.retry_after) == (429, 3.0)
