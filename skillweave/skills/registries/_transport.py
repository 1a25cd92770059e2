"""Reading a registry over HTTP: https anywhere, plain http only to this machine (loopback),
a size cap, a timeout, and redirects followed only to such URLs (:func:`fetch_bytes`).

A registry's bytes are hostile: the body is read in chunks and refused once over the cap,
whatever ``Content-Length`` says; a redirect to another scheme (``file://``, ``http://`` to
another host) is refused, never followed. A bearer token goes only to the URL it was
configured with: a redirect to another origin drops it. Called by the index and api readers
(``_readers``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Final
from urllib.parse import urljoin, urlsplit

import httpx

from skillweave.errors import RegistryError

__all__ = ["TIMEOUT_SECONDS", "checked_url", "fetch_bytes", "is_http_url"]

TIMEOUT_SECONDS: Final = 20.0
"""How long one registry read may take (connect, each read, in all per request)."""
_MAX_REDIRECTS: Final = 3
_LOOPBACK_NAMES: Final = frozenset({"localhost"})


def is_http_url(location: str) -> bool:
    """Whether `location` is an http(s) URL rather than a path or ``file://``."""
    return location.lower().startswith(("https://", "http://"))


def checked_url(url: str, *, registry: str) -> str:
    """`url` when it may be read: https, or http to a loopback address.

    Raises:
        RegistryError: another scheme, no host, credentials in the URL, or http elsewhere.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise RegistryError(registry, f"{url[:200]}: not an https:// URL")
    if parts.username or parts.password:
        raise RegistryError(registry, "a URL with credentials in it: set the registry's token")
    if parts.scheme == "http" and not _loopback(parts.hostname):
        raise RegistryError(registry, f"{url[:200]}: plain http carries no integrity; use https://")
    return url


async def fetch_bytes(
    url: str,
    *,
    registry: str,
    max_bytes: int,
    headers: Mapping[str, str] | None = None,
    client: httpx.AsyncClient | None = None,
) -> bytes:
    """GET `url`'s body, at most `max_bytes`.

    Raises:
        RegistryError: a refused URL or redirect, no answer in time, a status other than
            200, or a body over the cap; one line.
    """
    checked_url(url, registry=registry)
    own = client is None
    http = client or httpx.AsyncClient(timeout=TIMEOUT_SECONDS, follow_redirects=False)
    try:
        origin = _origin(url)
        for _ in range(_MAX_REDIRECTS + 1):
            sent = dict(headers or {}) if _origin(url) == origin else {}
            async with http.stream("GET", url, headers=sent) as response:
                if response.is_redirect and "location" in response.headers:
                    url = checked_url(urljoin(url, response.headers["location"]), registry=registry)
                    continue
                if response.status_code != 200:
                    raise RegistryError(
                        registry,
                        f"{_shown(url)} answered HTTP {response.status_code}: check the URL"
                        " (and its token)",
                    )
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > max_bytes:
                        raise RegistryError(
                            registry, f"{_shown(url)} sent over {max_bytes} bytes; refused"
                        )
                return bytes(body)
        raise RegistryError(registry, f"{_shown(url)}: more than {_MAX_REDIRECTS} redirects")
    except httpx.HTTPError as exc:
        reason = type(exc).__name__
        raise RegistryError(
            registry, f"{_shown(url)} cannot be read ({reason}): is it up and reachable?"
        ) from None
    finally:
        if own:
            await http.aclose()


def _loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port


def _shown(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"[:200]
