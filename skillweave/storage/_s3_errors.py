"""How the S3 store's failures read: minio and urllib3 errors mapped to ``StorageError`` (or
``ArtifactNotFoundError``), with the S3 code and never a credential. Used by every part of
:class:`~skillweave.storage.s3.S3ArtifactStore` around each client call."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Final

import urllib3
from minio.error import InvalidResponseError, MinioException, S3Error, ServerError

from skillweave.errors import ArtifactNotFoundError, StorageError

__all__ = ["NOT_FOUND_CODES", "s3_errors", "storage_error"]

NOT_FOUND_CODES: Final = frozenset({"NoSuchKey", "NoSuchObject", "ResourceNotFound"})
"""The S3 codes that say an object is not there."""


def storage_error(op: str, key: str, exc: Exception) -> StorageError:
    """The ``StorageError`` for `exc`, raised by S3 operation `op` on `key`."""
    if isinstance(exc, S3Error):
        code = exc.code or "S3Error"
        detail = exc.message or code
    elif isinstance(exc, ServerError):
        code = f"HTTP{exc.status_code}"
        detail = f"server error {exc.status_code}"
    elif isinstance(exc, InvalidResponseError):
        code = "InvalidResponse"
        detail = "the server sent a response that is not S3"
    else:
        code = "ConnectionError"
        detail = f"{type(exc).__name__}: {exc}"
    return StorageError(f"S3 {op} of {key!r} failed: {code}: {detail}", key=key, code=code)


@contextlib.contextmanager
def s3_errors(
    op: str,
    key: str,
    *,
    missing_is_not_found: bool = False,
    passthrough: frozenset[str] = frozenset(),
) -> Iterator[None]:
    """Map minio and urllib3 errors to ``StorageError``; S3 codes in `passthrough` stay raw."""
    try:
        yield
    except S3Error as exc:
        if exc.code in passthrough:
            raise
        if missing_is_not_found and exc.code in NOT_FOUND_CODES:
            raise ArtifactNotFoundError(key) from exc
        raise storage_error(op, key, exc) from exc
    except (MinioException, urllib3.exceptions.HTTPError) as exc:
        raise storage_error(op, key, exc) from exc
