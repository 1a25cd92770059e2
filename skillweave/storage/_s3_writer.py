"""Writing the S3 store's objects: plain PUTs, the conditional PUT (``If-None-Match: *``)
behind ``put_if_absent``, file uploads checked against a file that changes while it is sent,
and deletes. Blocking calls for :class:`~skillweave.storage.s3.S3ArtifactStore`, which runs
them in worker threads (see its module docstring for why the conditional PUT goes through
the client's ``_put_object``)."""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, Final

from minio import Minio
from minio.error import S3Error

from skillweave.errors import StorageError
from skillweave.storage._integrity import CHUNK_SIZE, Digest, digest_of
from skillweave.storage._s3_errors import s3_errors, storage_error
from skillweave.storage._s3_objects import SHA256_HEADER, SHA256_METADATA
from skillweave.storage.base import ArtifactRef
from skillweave.storage.keys import validate_key

__all__ = ["MAX_CONDITIONAL_PUT_BYTES", "S3Writer"]

MAX_CONDITIONAL_PUT_BYTES: Final = 5 * 1024**3
"""A conditional write is one PUT, and S3 caps a single PUT at 5 GiB."""

# AWS answers 409 to a conditional write racing another one on the same key: try again.
_CONFLICT_RETRIES: Final = 4
_CONFLICT_BACKOFF_SECONDS: Final = 0.05


class S3Writer:
    """Writes and deletes objects of one bucket.

    Args:
        client: the store's client.
        bucket: the bucket's name.
        ensure_bucket: finds the bucket before the first call (the store's).
    """

    def __init__(self, client: Minio, bucket: str, ensure_bucket: Callable[[], None]) -> None:
        self._client = client
        self._bucket = bucket
        self._ensure_bucket = ensure_bucket

    def put_bytes(self, key: str, data: bytes, content_type: str) -> ArtifactRef:
        """Store `data` under `key`, replacing it."""
        validate_key(key)
        self._ensure_bucket()
        digest = digest_of(data)
        with s3_errors("put", key):
            self._client.put_object(
                self._bucket,
                key,
                io.BytesIO(data),
                len(data),
                content_type=content_type,
                metadata={SHA256_METADATA: digest.sha256},
                num_parallel_uploads=1,
            )
        return digest.ref(key, content_type)

    def put_if_absent(self, key: str, data: bytes, content_type: str) -> ArtifactRef | None:
        """Store `data` with a conditional PUT; None when `key` exists."""
        validate_key(key)
        if len(data) > MAX_CONDITIONAL_PUT_BYTES:
            raise StorageError(
                f"cannot put {key!r} if absent: {len(data)} bytes is over the "
                f"{MAX_CONDITIONAL_PUT_BYTES}-byte limit of a single PUT",
                key=key,
                code="EntityTooLarge",
            )
        self._ensure_bucket()
        digest = digest_of(data)
        headers = {
            "Content-Type": content_type,
            SHA256_HEADER: digest.sha256,
            "If-None-Match": "*",
        }
        for attempt in range(_CONFLICT_RETRIES):
            try:
                with s3_errors(
                    "put if absent",
                    key,
                    passthrough=frozenset({"PreconditionFailed", "ConditionalRequestConflict"}),
                ):
                    self._client._put_object(self._bucket, key, data, headers=headers)
            except S3Error as exc:
                if exc.code == "PreconditionFailed":
                    return None
                if attempt + 1 == _CONFLICT_RETRIES:
                    raise storage_error("put if absent", key, exc) from exc
                time.sleep(_CONFLICT_BACKOFF_SECONDS * 2**attempt)
            else:
                return digest.ref(key, content_type)
        raise AssertionError("unreachable")  # pragma: no cover

    def put_file(self, key: str, source: Path, content_type: str) -> ArtifactRef:
        """Store the file at `source`: hashed, then uploaded; removed again (and
        ``SourceChanged``) when what was uploaded is not what was hashed."""
        validate_key(key)
        try:
            handle = open(source, "rb")  # noqa: SIM115 - closed by the with below
        except OSError as exc:
            raise StorageError(
                f"cannot read {str(source)!r} to store it as {key!r}: {exc.strerror}",
                key=key,
                code="SourceUnreadable",
            ) from exc
        with handle:
            expected = Digest()
            while chunk := handle.read(CHUNK_SIZE):
                expected.update(chunk)
            handle.seek(0)
            self._ensure_bucket()
            reader = _HashingReader(handle)
            with s3_errors("put", key):
                self._client.put_object(
                    self._bucket,
                    key,
                    reader,
                    expected.size,
                    content_type=content_type,
                    metadata={SHA256_METADATA: expected.sha256},
                    # minio queues parts for parallel upload without bound: one at a time keeps
                    # memory at one part (5 MiB) whatever the file size.
                    num_parallel_uploads=1,
                )
        if reader.digest.size != expected.size or reader.digest.sha256 != expected.sha256:
            with contextlib.suppress(StorageError):
                self.delete(key)
            raise StorageError(
                f"{str(source)!r} changed while it was being stored as {key!r}",
                key=key,
                code="SourceChanged",
            )
        return expected.ref(key, content_type)

    def delete(self, key: str) -> None:
        """Remove `key` (nothing happens when it does not exist)."""
        validate_key(key)
        self._ensure_bucket()
        with s3_errors("delete", key):
            self._client.remove_object(self._bucket, key)


class _HashingReader:
    """A read-only file wrapper that hashes what the uploader actually reads."""

    def __init__(self, handle: BinaryIO) -> None:
        self._handle = handle
        self.digest = Digest()

    def read(self, size: int = -1) -> bytes:
        chunk = self._handle.read(size)
        self.digest.update(chunk)
        return chunk
