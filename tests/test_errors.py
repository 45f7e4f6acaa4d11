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


def test_warnings_share_one_base() -> None:
    assert issubclass(er.EdgeReportsWarning, UserWarning)
    for cls in (er.VocabularyWarning, er.TopTalkerWarning, er.EmptyResultWarning):
        assert issubclass(cls, er.EdgeReportsWarning)


def _every_error() -> list[er.EdgeReportsError]:
    failure = er.Failure(0, {"metrics": []}, None, {"msisdn": "91"}, None, OSError("down"))
    return [
        er.EdgeReportsError("base"),
        er.InputError("bad input"),
        er.QueryError("bad field", field="granularity"),
        er.ConfigError("no key"),
        er.TransportError("refused"),
        er.ApiError("boom", status_code=500, body_excerpt="oops", url="https://h/r?apikey=***"),
        er.AuthError("no", status_code=401, url="https://h/r"),
        er.NotFoundError("gone", status_code=404),
        er.RateLimitError("slow down", retry_after=2.5),
        er.SchemaError("not a shape", where="result[0]"),
        er.PartialFailure("1 of 2 failed", failures=[failure], frame=None),
        er.SyncTimeout("still syncing", pending=["c1", "c2"]),
        er.ExportLocked("locked", holder="pid 7"),
    ]


@pytest.mark.parametrize("error", _every_error(), ids=lambda e: type(e).__name__)
def test_every_error_pickles_to_an_equal_message_and_attributes(
    error: er.EdgeReportsError,
) -> None:
    import pickle

    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error) and copy.args == error.args
    mine = {k: v for k, v in vars(error).items() if k != "failures"}
    assert {k: v for k, v in vars(copy).items() if k != "failures"} == mine
    if isinstance(error, er.PartialFailure):
        assert [str(f) for f in copy.failures] == [str(f) for f in error.failures]


def test_every_error_class_is_covered_by_the_pickle_test() -> None:
    import edgereports.errors as errors

    classes = {
        c
        for c in vars(errors).values()
        if isinstance(c, type) and issubclass(c, er.EdgeReportsError)
    }
    assert classes == {type(e) for e in _every_error()}
