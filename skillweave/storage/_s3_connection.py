"""The S3 store's connection: the endpoint as a host and a scheme, and the HTTP pool the
minio client runs on (our own, so that only requests that sent nothing are retried). Used by
:class:`~skillweave.storage.s3.S3ArtifactStore` when it is built."""

from __future__ import annotations

import ssl
from typing import Final
from urllib.parse import urlsplit

import certifi
import urllib3

from skillweave.errors import ConfigError

__all__ = [
    "CONNECT_TIMEOUT_SECONDS",
    "LIST_STAT_WORKERS",
    "READ_TIMEOUT_SECONDS",
    "http_pool",
    "split_endpoint",
]

CONNECT_TIMEOUT_SECONDS: Final = 10.0
READ_TIMEOUT_SECONDS: Final = 120.0
LIST_STAT_WORKERS: Final = 8
"""HEADs a listing sends at once (the pool keeps a connection for each, and two more)."""


def split_endpoint(endpoint: str, secure: bool) -> tuple[str, bool]:
    """``host[:port]`` and whether to use TLS, from `endpoint` (a scheme, when given, decides).

    Raises:
        ConfigError: the endpoint is malformed.
    """
    if "://" not in endpoint:
        if not endpoint or "/" in endpoint:
            raise ConfigError(f"invalid S3 endpoint {endpoint!r}: expected host[:port]")
        return endpoint, secure
    parts = urlsplit(endpoint)
    if parts.scheme not in {"http", "https"} or not parts.netloc or parts.path not in {"", "/"}:
        raise ConfigError(f"invalid S3 endpoint {endpoint!r}: expected http(s)://host[:port]")
    return parts.netloc, parts.scheme == "https"


def http_pool() -> urllib3.PoolManager:
    """The pool a store's client sends through: connection failures retried, one read retry
    for GET and HEAD, nothing else (retrying is decided at the activity boundary)."""
    # Trust certifi's bundle (what minio uses) plus the system store, which also honours
    # SSL_CERT_FILE for a private CA in front of MinIO.
    context = ssl.create_default_context(cafile=certifi.where())
    context.load_default_certs()
    return urllib3.PoolManager(
        timeout=urllib3.Timeout(connect=CONNECT_TIMEOUT_SECONDS, read=READ_TIMEOUT_SECONDS),
        maxsize=LIST_STAT_WORKERS + 2,
        ssl_context=context,
        retries=urllib3.Retry(
            total=3,
            connect=2,
            read=1,
            status=0,
            other=0,
            allowed_methods=frozenset({"GET", "HEAD"}),
            respect_retry_after_header=False,
        ),
    )
