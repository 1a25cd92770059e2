"""How one artifact is one S3 object: its sha256 as user metadata, its content type as the
object's ``Content-Type``, and a streamed response released once read. Shared by the S3
store's reader and writer (:mod:`skillweave.storage._s3_reader`, ``_s3_writer``)."""

from __future__ import annotations

from typing import Final

from urllib3.response import BaseHTTPResponse

__all__ = ["DEFAULT_CONTENT_TYPE", "SHA256_HEADER", "SHA256_METADATA", "release"]

SHA256_METADATA: Final = "sha256"
"""User-metadata name of the hash; on the wire ``x-amz-meta-sha256``."""

SHA256_HEADER: Final = f"x-amz-meta-{SHA256_METADATA}"
"""The header that carries the hash (sent as is by a conditional PUT, read back by HEAD)."""

DEFAULT_CONTENT_TYPE: Final = "application/octet-stream"


def release(response: BaseHTTPResponse) -> None:
    """Close `response` and give its connection back to the pool."""
    response.close()
    response.release_conn()
