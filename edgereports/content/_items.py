"""The result types and column list of the content client, the content_id check, redaction."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from .._content_campaigns.records import Kind
from ..errors import EdgeReportsError, InputError, redact

__all__ = [
    "CONTENT_COLUMNS",
    "AppKey",
    "OnboardingItem",
    "PlaybackUrl",
    "WhitelistChange",
    "check_content_id",
    "check_content_ids",
    "redact_from",
]

#: The columns of :meth:`ContentClient.list`, in their documented order, with their kinds.
CONTENT_COLUMNS: Final[tuple[tuple[str, Kind], ...]] = (
    ("id", "int"),
    ("partner_name", "string"),
    ("content_id", "string"),
    ("content_url", "string"),
    ("partner_content_url", "string"),
    ("partner_cloud_url", "string"),
    ("createdAt", "timestamp"),
    ("updatedAt", "timestamp"),
    ("content_upload_status", "string"),
    ("content_access", "string"),
    ("publish_access", "string"),
    ("content_status_message", "string"),
    ("partner_content_file_name", "string"),
    ("content_size", "int"),
)


@dataclass(frozen=True)
class OnboardingItem:
    """One item of the answer to ``content/add``.

    Attributes:
        content_id: the identifier assigned to the content (use it for get-url and waiting).
        url: the submitted URL.
        status: ``INPROGRESS`` on acceptance.
        message: the service's progress text.
    """

    content_id: str
    url: str
    status: str
    message: str


@dataclass(frozen=True)
class WhitelistChange:
    """The answer to adding or deleting a whitelist domain.

    Attributes:
        domain: the origin that was sent.
        status: ``SUCCESS``.
        message: the service's confirmation text.
    """

    domain: str
    status: str
    message: str


@dataclass(frozen=True)
class AppKey:
    """An app key; its repr never shows the value.

    Attributes:
        value: the key itself; pass the ``AppKey`` to :meth:`ContentClient.signed_url`.
    """

    value: str = field(repr=False)

    def __repr__(self) -> str:
        return "AppKey('***')"

    def __str__(self) -> str:
        return "***"


class PlaybackUrl(str):
    """A playback URL with the API key at its end; its repr is redacted.

    It is a ``str``, so it can be handed to a player or to ``requests`` as it is; ``repr()``
    (what notebooks and tracebacks show) and :attr:`redacted` hide the key.
    """

    __slots__ = ()

    @property
    def redacted(self) -> str:
        """The URL with the key replaced by ``***``."""
        return redact(str.__str__(self))

    def __repr__(self) -> str:
        return f"PlaybackUrl({self.redacted!r})"


def check_content_id(value: object, what: str = "content_id") -> str:
    """Check a content_id, refusing what looks like the row ``id`` of get-all."""
    if isinstance(value, OnboardingItem):
        return value.content_id
    hint = (
        "use the content_id column of list() (or OnboardingItem.content_id), not the row id: "
        "the service documents id as an internal row identifier"
    )
    if isinstance(value, int) and not isinstance(value, bool):
        raise InputError(f"{what} {value} is an integer, which looks like a row id; {hint}")
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{what} must be a non-empty string, got {value!r}")
    if value.strip().isdigit():
        raise InputError(f"{what} {value!r} is purely numeric, which looks like a row id; {hint}")
    return value.strip()


def check_content_ids(values: object) -> list[str]:
    items: list[object]
    if isinstance(values, str | OnboardingItem):
        items = [values]
    elif isinstance(values, Iterable):
        items = list(values)
    else:
        items = [values]
    if not items:
        raise InputError("content_ids is empty; give at least one content_id")
    ids = [check_content_id(v, f"content_ids[{i}]") for i, v in enumerate(items)]
    return list(dict.fromkeys(ids))


def redact_from(exc: EdgeReportsError, secret: str) -> EdgeReportsError:
    """Return ``exc`` with ``secret`` (an app key the service may echo) redacted everywhere."""
    exc.args = tuple(redact(a, [secret]) if isinstance(a, str) else a for a in exc.args)
    for name in ("body_excerpt", "url"):
        if isinstance(getattr(exc, name, None), str):
            setattr(exc, name, redact(getattr(exc, name), [secret]))
    return exc
