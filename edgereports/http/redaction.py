"""A logging filter that removes credentials from the records of our loggers and urllib3's."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from ..errors import redact

__all__ = ["REDACTED_LOGGERS", "install_log_redaction"]

#: The loggers whose records are redacted (with every child logger existing at install time).
REDACTED_LOGGERS = ("urllib3", "requests", "edgereports")


class _RedactingFilter(logging.Filter):
    """Rewrites every record with its credentials replaced by ``***``."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()
        self._lock = threading.Lock()

    def add(self, secrets: Sequence[str | None]) -> None:
        with self._lock:
            self.secrets.update(s for s in secrets if s)

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = sorted(self.secrets, key=len, reverse=True)
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave it to logging's own error handling
            return True
        clean = redact(message, secrets)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info), secrets)
        return True


def install_log_redaction(secrets: Sequence[str | None] = ()) -> None:
    """Redact credentials from the records of the urllib3, requests and edgereports loggers.

    Idempotent: one filter per logger, which learns ``secrets`` on every call.

    Args:
        secrets: literal values to remove besides the ``apikey=``-style patterns.
    """
    names = {n for n in logging.Logger.manager.loggerDict if n.split(".")[0] in REDACTED_LOGGERS}
    for name in sorted(names | set(REDACTED_LOGGERS)):
        log = logging.getLogger(name)
        found = next((f for f in log.filters if isinstance(f, _RedactingFilter)), None)
        if found is None:
            found = _RedactingFilter()
            log.addFilter(found)
        found.add(secrets)
