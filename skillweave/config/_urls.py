"""The http(s) URL check that URL settings' validators share (``WORKFLOW__UI_URL``,
``SANDBOX__MANAGER_URL``); the sections of :mod:`skillweave.config` call it."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["http_url"]


def http_url(url: str, *, example: str) -> str:
    """`url` when it is an http(s) URL with a host; else the error a setting's validator
    raises, saying the accepted form."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"expected an http(s) URL with a host, e.g. {example}")
    try:
        _ = parts.port  # a port that is not a number raises
    except ValueError:
        raise ValueError(f"the port is not a number; expected e.g. {example}") from None
    return url
