"""The one exception tree of edgereports, its warnings, and :func:`redact` for secrets.

Every error the package raises is an :class:`EdgeReportsError`; every warning it emits is an
:class:`EdgeReportsWarning`::

    EdgeReportsError
    ├── InputError (also ValueError)        bad arguments, caught before any network call
    │   ├── QueryError                      an invalid report request; names the field
    │   └── ConfigError                     missing or malformed settings or job files
    ├── TransportError                      connection failures, timeouts, broken bodies
    ├── ApiError                            a non-2xx answer; .status_code, .body_excerpt, .url
    │   ├── AuthError                       401 / 403
    │   ├── NotFoundError                   404
    │   └── RateLimitError                  429 after retries ran out; .retry_after
    ├── SchemaError                         a payload that matches no known shape; .where
    ├── PartialFailure                      some parts failed; .failures, .frame (the rest)
    ├── SyncTimeout (also TimeoutError)     content still not synced; .pending
    └── ExportLocked                        another run holds the export's lock; .holder

    EdgeReportsWarning (a UserWarning)
    ├── VocabularyWarning                   a name outside the known vocabulary
    ├── TopTalkerWarning                    grouped by a dimension that no filter pins
    ├── PartialBucketWarning                a range that covers its first or last bucket in part
    └── EmptyResultWarning                  a part or report that returned no rows (and why)

Every error pickles and unpickles to an equal message and attributes (process pools pass
them). Messages never contain an API key, a token, an app key or a URL's password: anything
that may carry one (URLs, bodies, chained causes) goes through :func:`redact` first (it lives
in :mod:`edgereports.redaction`, which says which forms of a secret it removes).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
from typing import Any

from .redaction import redact

__all__ = [
    "ApiError",
    "AuthError",
    "ConfigError",
    "EdgeReportsError",
    "EdgeReportsWarning",
    "EmptyResultWarning",
    "ExportLocked",
    "InputError",
    "NotFoundError",
    "PartialBucketWarning",
    "PartialFailure",
    "QueryError",
    "RateLimitError",
    "SchemaError",
    "SyncTimeout",
    "TopTalkerWarning",
    "TransportError",
    "VocabularyWarning",
    "redact",
]

#: The package's folder: frames of files under it are the library's own.
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _rebuild(cls: type[EdgeReportsError], args: tuple[Any, ...], state: dict[str, Any]) -> Any:
    """Unpickle an error: its args and attributes, without calling ``__init__`` again."""
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


class EdgeReportsError(Exception):
    """Base of every error raised by edgereports.

    Example:
        >>> import pickle
        >>> e = pickle.loads(pickle.dumps(ApiError("boom", status_code=500)))
        >>> (str(e), e.status_code)
        ('boom', 500)
    """

    def __reduce__(self) -> tuple[Any, ...]:
        # keyword-only attributes (status_code, failures, pending...) are not in self.args,
        # so the default reduction (cls(*args)) would fail: rebuild from args and __dict__
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


class InputError(EdgeReportsError, ValueError):
    """Bad arguments, caught before any network call.

    Example:
        >>> issubclass(QueryError, InputError) and issubclass(InputError, ValueError)
        True
    """


class QueryError(InputError):
    """An invalid report request; the message names the field and what is allowed.

    Example:
        >>> error = QueryError("granularity must be DAY or HOUR", field="granularity")
        >>> (error.field, isinstance(error, ValueError))
        ('granularity', True)
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class ConfigError(InputError):
    """Missing or malformed settings or job files.

    Example:
        >>> from edgereports import Settings
        >>> Settings(reporting_url="ftp://x")
        Traceback (most recent call last):
        edgereports.errors.ConfigError: reporting_url must be an http(s) URL ...
    """


class TransportError(EdgeReportsError):
    """A connection failure, a timeout or a broken body.

    Attributes:
        unreachable: nothing listens at the address (the connection was refused): the address
            is wrong or the service is not running. Such a request is not retried.

    Example:
        >>> import edgereports as er
        >>> client = er.ReportingClient("my-key", "http://127.0.0.1:9")  # nothing listens there
        >>> try:
        ...     client.fetch(er.presets.time_usage_enterprise(
        ...         account_id="A", start="2022-07-01", end="2022-07-02"))
        ... except TransportError as error:
        ...     print(error.unreachable, "start a local sandbox" in str(error))
        True True
    """

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


class ApiError(EdgeReportsError):
    """A non-2xx answer from the service.

    Attributes:
        status_code: the HTTP status.
        body_excerpt: at most 200 characters of the body, redacted.
        url: the request URL, redacted.

    Example:
        >>> try:
        ...     er.ReportingClient("not-the-key", sandbox_url, retries=0).fetch(report)
        ... except ApiError as e:
        ...     print(type(e).__name__, e.status_code)
        AuthError 401
    """

    def __init__(
        self, message: str, *, status_code: int, body_excerpt: str = "", url: str = ""
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body_excerpt = body_excerpt
        self.url = url


class AuthError(ApiError):
    """401 or 403: the key is missing, wrong or not allowed.

    Example:
        >>> issubclass(AuthError, ApiError)
        True
    """


class NotFoundError(ApiError):
    """404: no such resource.

    Example:
        >>> NotFoundError("no such content", status_code=404).status_code
        404
    """


class RateLimitError(ApiError):
    """429 after the retries ran out.

    Attributes:
        retry_after: seconds the service asked to wait, when it said.

    Example:
        >>> RateLimitError("slow down", retry_after=2.0).retry_after
        2.0
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int = 429,
        body_excerpt: str = "",
        url: str = "",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, status_code=status_code, body_excerpt=body_excerpt, url=url)
        self.retry_after = retry_after


class SchemaError(EdgeReportsError):
    """A payload that matches no known shape; says where and why.

    Attributes:
        where: the path inside the payload, e.g. ``result[1][7].time_stamp``.

    Example:
        >>> import edgereports as er
        >>> er.to_frame({"unexpected": 1})
        Traceback (most recent call last):
        edgereports.errors.SchemaError: object matches no known answer shape ...
    """

    def __init__(self, message: str, *, where: str = "") -> None:
        super().__init__(message)
        self.where = where


class PartialFailure(EdgeReportsError):
    """Some windows or requests failed.

    Attributes:
        failures: one entry per failed part (which report, which window, which error).
        frame: the frame of the parts that succeeded.

    Example:
        >>> try:
        ...     df = client.fetch(report)
        ... except PartialFailure as e:
        ...     df = e.frame  # the rows of the parts that succeeded
        ...     print([str(f) for f in e.failures])
        >>> len(df)  # no part failed: the whole frame
        21
    """

    def __init__(self, message: str, *, failures: Sequence[Any], frame: Any = None) -> None:
        super().__init__(message)
        self.failures = list(failures)
        self.frame = frame


class SyncTimeout(EdgeReportsError, TimeoutError):
    """Content still not synced to the edge when the wait ran out.

    Attributes:
        pending: the content ids still in progress.

    Example:
        >>> SyncTimeout("still syncing", pending=["c1"]).pending
        ['c1']
    """

    def __init__(self, message: str, *, pending: Sequence[str]) -> None:
        super().__init__(message)
        self.pending = list(pending)


class ExportLocked(EdgeReportsError):
    """Another run holds the export's lock.

    Attributes:
        holder: what the lock file says of its holder (pid, host, start time).

    Example:
        >>> ExportLocked("another run holds the lock", holder="pid 42").holder
        'pid 42'
    """

    def __init__(self, message: str, *, holder: str = "") -> None:
        super().__init__(message)
        self.holder = holder


class EdgeReportsWarning(UserWarning):
    """Base of every warning edgereports emits.

    Example:
        >>> import warnings
        >>> from edgereports import Report
        >>> with warnings.catch_warnings():  # every warning of edgereports an error, here
        ...     warnings.simplefilter("error", EdgeReportsWarning)
        ...     Report(account_id="A").metric("new_metric", "MAX")
        Traceback (most recent call last):
        edgereports.errors.VocabularyWarning: metrics[0].name 'new_metric' is not a known name ...
    """


def caller_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning name the first caller outside edgereports.

    Called by the function that calls :func:`warnings.warn`; however deep in the package the
    warning is raised (``er.fetch`` → ``client.fetch`` → ...), it names the user's line.
    """
    frame = inspect.currentframe()
    frame = frame.f_back if frame is not None else None  # the function warning
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level


class VocabularyWarning(EdgeReportsWarning):
    """A name outside the known vocabulary was used; it is sent as given.

    Example:
        >>> import warnings
        >>> from edgereports import Report
        >>> with warnings.catch_warnings(record=True) as seen:
        ...     warnings.simplefilter("always")
        ...     report = Report(account_id="A").now().metric("new_metric", "MAX")
        >>> print(seen[0].message)
        metrics[0].name 'new_metric' is not a known name (known: ...); sending it as given
    """


class TopTalkerWarning(EdgeReportsWarning):
    """A report groups by a dimension that no filter pins to values.

    The service then answers one row labelled with one member (the top talker): COUNT totals
    the whole scope ("total (top talker X)"); MAX, MIN and AVG are that member's own values
    ("X only", other members not shown), never a total. Pass the dimension's values to get
    one row each.

    Example:
        >>> import warnings
        >>> import edgereports as er
        >>> with warnings.catch_warnings(record=True) as seen:
        ...     warnings.simplefilter("always")
        ...     df = er.fetch("concurrent_online_ues", sandbox=True)
        >>> print([str(w.message) for w in seen if w.category is TopTalkerWarning][0])
        grouped by customer_site_id, which no filter pins: ...
    """


class PartialBucketWarning(EdgeReportsWarning):
    """A range starts or ends inside a bucket: the frame keeps that bucket, whole.

    Buckets are aligned in UTC, so a range that starts or ends off the grid (a local day in
    ``+05:30``, a range from 09:50) holds buckets that reach outside it: their values count
    time outside the range. ``df.attrs["partial_buckets"]`` lists them with the share inside the
    range; ``partial="drop"`` keeps whole buckets only.

    Example:
        >>> import warnings
        >>> import edgereports as er
        >>> with warnings.catch_warnings(record=True) as seen:
        ...     warnings.simplefilter("always")
        ...     df = er.fetch("time_usage_enterprise", start="2022-07-01T09:50:00+05:30",
        ...                   end="2022-07-04T09:50:00+05:30", sandbox=True)
        >>> print([str(w.message) for w in seen if w.category is PartialBucketWarning][0])
        the range covers 2 DAY buckets only in part (2022-07-01T00:00Z: 82%, ...); ...
        >>> [bucket["start"] for bucket in df.attrs["partial_buckets"]]
        ['2022-07-01T00:00:00+00:00', '2022-07-04T00:00:00+00:00']
    """


class EmptyResultWarning(EdgeReportsWarning):
    """A report, or one fan-out value of it, returned no rows over its whole range.

    Example:
        >>> import warnings
        >>> import edgereports as er
        >>> with warnings.catch_warnings(record=True) as seen:  # a subscriber not on the account
        ...     warnings.simplefilter("always")
        ...     df = er.fetch("byte_usage_subscriber", msisdn=["910000000000"],
        ...                   start="2022-07-01", end="2022-07-02", sandbox=True)
        >>> print([str(w.message) for w in seen if w.category is EmptyResultWarning][0])
        no rows for account_id=..., msisdn=910000000000 from 2022-07-01T00:00:00+00:00 to ...
        >>> df.attrs["empty"][0]["msisdn"]
        '910000000000'
    """
