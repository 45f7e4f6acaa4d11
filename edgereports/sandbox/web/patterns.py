"""Patterns shared by the routes and the OpenAPI document, so that both say the same."""

from __future__ import annotations

import re

__all__ = ["URL", "URL_PATTERN"]

#: An http(s) URL as the sandbox takes it: printable ASCII only (RFC 3986: anything else is
#: percent-encoded), a host without ``/?#`` or brackets (no IPv6 literals), then a path, query
#: or fragment of printable ASCII. Written with explicit ranges so that Python's and ECMA's
#: regular expressions agree.
URL_PATTERN = r"^https?://[\x21\x22\x24-\x2e\x30-\x3e\x40-\x5a\x5c\x5e-\x7e]+([/?#][\x21-\x7e]*)?$"
URL = re.compile(URL_PATTERN)
