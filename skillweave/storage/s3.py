"""The S3 artifact store (MinIO or AWS S3) on the ``minio`` client.

Each artifact is one object under its key in one bucket. Its sha256 travels as user metadata
(``x-amz-meta-sha256``) and its content type as the object's ``Content-Type``, so ``stat`` is a
single HEAD. Reads stream the object and verify size and sha256 against the caller's ref.

``put_if_absent`` is a conditional write: a PUT with ``If-None-Match: *``, which the server
refuses with ``412 PreconditionFailed`` when the key exists. AWS S3 (since 2024-08) and MinIO
decide it atomically, so exactly one of any number of concurrent callers wins. moto 5.x honours
the header too (412 on an existing key; one winner in 200 rounds of 10 concurrent claims), but
checks and writes without a lock, so on moto it is atomic in practice rather than by contract.
**It is only atomic on servers that support conditional writes**: a server that ignores the
header degrades it to "last writer wins" and every caller is told it won. The minio client has
no public parameter for the header (``put_object`` turns unknown headers into ``x-amz-meta-*``
metadata), so that one call goes through the client's ``_put_object``, which sends headers as
given; the integration tests against moto guard that this keeps working.

A missing bucket is created only when the store is told to (``create_bucket``, from
``STORAGE__S3_CREATE_BUCKET``), and then said in one WARNING line naming the bucket and the new
store's id (written at once: :mod:`skillweave.storage.store_id`); otherwise it is a
:class:`~skillweave.errors.BucketNotFoundError`, so a mistyped bucket is never silently a new,
empty store. The bucket is looked for again on the next call until it is found.

The HTTP pool is our own rather than minio's default: minio's retries every PUT on read errors
and 5xx, and a resent conditional PUT whose first attempt landed would come back 412 and make
the winner believe it lost. Here only connection failures (nothing was sent) are retried, plus
one read retry for GET and HEAD; anything else surfaces as ``StorageError`` and retrying is
decided once, at the activity boundary. Blocking client calls run in worker threads. Credentials
are handed to the client and never kept, shown in ``repr`` or put in an error message.

The store is the async face over collaborators beside it: the connection
(:mod:`~skillweave.storage._s3_connection`), the bucket (``_s3_bucket``), reads (``_s3_reader``),
writes (``_s3_writer``), the object's metadata (``_s3_objects``) and error mapping
(``_s3_errors``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

from minio import Minio
from minio.helpers import check_bucket_name

from skillweave.errors import ConfigError, StorageError
from skillweave.storage._integrity import Digest
from skillweave.storage._s3_bucket import S3Bucket
from skillweave.storage._s3_connection import http_pool, split_endpoint
from skillweave.storage._s3_objects import DEFAULT_CONTENT_TYPE, release
from skillweave.storage._s3_reader import S3Reader
from skillweave.storage._s3_writer import S3Writer
from skillweave.storage.base import ArtifactRef
from skillweave.storage.keys import STORE_IDENTITY_KEY
from skillweave.storage.store_id import identity_of, new_identity

__all__ = ["S3ArtifactStore"]

_log = logging.getLogger(__name__)


class S3ArtifactStore:
    """Artifacts as objects in one S3 bucket (MinIO or AWS S3).

    The bucket is looked for on first use; a missing one is created only with
    `create_bucket` (or explicitly, with :meth:`ensure_bucket`). Close the store with
    :meth:`aclose` to release its connections.

    Args:
        endpoint: ``host[:port]``; an ``http://`` or ``https://`` prefix is accepted and then
            decides `secure`.
        bucket: the bucket name.
        access_key: the access key id (plain string; settings hold it as ``SecretStr``).
        secret_key: the secret key.
        secure: use TLS.
        region: the bucket's region; None lets the client discover it (MinIO: ``us-east-1``).
        create_bucket: create the bucket when it is missing (said in one WARNING line); False:
            a missing bucket is :class:`~skillweave.errors.BucketNotFoundError`.

    Raises:
        ConfigError: the endpoint or the bucket name is malformed.
    """

    def __init__(
        self,
        *,
        endpoint: str,
        bucket: str,
        access_key: str,
        secret_key: str,
        secure: bool = False,
        region: str | None = None,
        create_bucket: bool = False,
    ) -> None:
        host, secure = split_endpoint(endpoint, secure)
        try:
            check_bucket_name(bucket, strict=True)
        except ValueError as exc:
            raise ConfigError(f"invalid S3 bucket name {bucket!r}: {exc}") from None
        self._endpoint = host
        self._url = f"{'https' if secure else 'http'}://{host}"
        self._http = http_pool()
        try:
            client = Minio(
                host,
                access_key=access_key or None,
                secret_key=secret_key or None,
                secure=secure,
                region=region,
                http_client=self._http,
            )
        except ValueError as exc:
            raise ConfigError(f"invalid S3 endpoint {host!r}: {exc}") from None
        self._bucket = S3Bucket(
            client, name=bucket, url=self._url, region=region, create=create_bucket
        )
        self._reader = S3Reader(client, bucket, self._ensure_bucket)
        self._writer = S3Writer(client, bucket, self._ensure_bucket)
        self._created: str | None = None

    @property
    def bucket(self) -> str:
        """The bucket the artifacts live in."""
        return self._bucket.name

    @property
    def created(self) -> str | None:
        """The WARNING line said when this store created its bucket; None when it did not
        (a CLI, which keeps library log lines quiet, shows it from here)."""
        return self._created

    def __repr__(self) -> str:
        return f"S3ArtifactStore(endpoint={self._endpoint!r}, bucket={self._bucket.name!r})"

    async def ensure_bucket(self) -> None:
        """Create the bucket if it does not exist (idempotent, safe to race), whatever
        `create_bucket` says: the caller asks for it by name."""
        await asyncio.to_thread(self._ensure_bucket, create=True)

    async def aclose(self) -> None:
        """Close the store's pooled HTTP connections."""
        self.close()

    def close(self) -> None:
        """Close the store's pooled HTTP connections (synchronous variant of :meth:`aclose`)."""
        self._http.clear()

    # -- the ArtifactStore protocol ------------------------------------------------------------

    async def put_bytes(
        self, key: str, data: bytes, *, content_type: str = DEFAULT_CONTENT_TYPE
    ) -> ArtifactRef:
        """Store `data` under `key` (replacing it) and return its ref."""
        return await asyncio.to_thread(self._writer.put_bytes, key, data, content_type)

    async def put_if_absent(
        self, key: str, data: bytes, *, content_type: str = DEFAULT_CONTENT_TYPE
    ) -> ArtifactRef | None:
        """Store `data` only if `key` does not exist; None when it already did.

        A conditional write (``If-None-Match: *``): atomic on servers that support conditional
        writes (AWS S3, MinIO, moto), last-writer-wins on servers that ignore the header.
        """
        return await asyncio.to_thread(self._writer.put_if_absent, key, data, content_type)

    async def put_file(
        self, key: str, path: str, *, content_type: str = DEFAULT_CONTENT_TYPE
    ) -> ArtifactRef:
        """Store the file at `path` and return its ref.

        The file is read twice, in chunks: once to hash it (the hash is sent as metadata before
        the body), once to upload it (multipart above 5 MiB, one part in memory at a time). If
        the file changed between the two reads the object is removed and ``StorageError``
        (code ``SourceChanged``) raised.
        """
        return await asyncio.to_thread(self._writer.put_file, key, Path(path), content_type)

    async def get_bytes(self, ref: ArtifactRef) -> bytes:
        """The bytes of `ref`, verified against its size and sha256."""
        return await asyncio.to_thread(self._reader.get_bytes, ref)

    async def get_file(self, ref: ArtifactRef, path: str) -> None:
        """Write the bytes of `ref` to `path` (streamed, verified, then renamed into place)."""
        await asyncio.to_thread(self._reader.get_file, ref, Path(path))

    async def stream(self, ref: ArtifactRef) -> AsyncIterator[bytes]:
        """The bytes of `ref` in chunks of up to 1 MiB; the hash is checked after the last one."""
        response = await asyncio.to_thread(self._reader.open, ref)
        try:
            digest = Digest()
            while True:
                chunk = await asyncio.to_thread(self._reader.read_chunk, response, ref.key)
                if not chunk:
                    break
                digest.update(chunk)
                yield chunk
            digest.verify(ref)
        finally:
            release(response)

    async def stat(self, key: str) -> ArtifactRef | None:
        """The ref of what is stored under `key`, or None.

        An object written by another tool without the sha256 metadata is hashed by reading it.
        """
        return await asyncio.to_thread(self._reader.stat, key)

    async def list(self, prefix: str) -> list[ArtifactRef]:
        """Refs of every key starting with `prefix` (a plain string prefix), sorted by key.

        Objects whose names are not valid keys (written by other tools) are skipped.
        """
        return await asyncio.to_thread(self._reader.list, prefix)

    async def delete(self, key: str) -> None:
        """Remove `key`; nothing happens when it does not exist."""
        await asyncio.to_thread(self._writer.delete, key)

    # -- the bucket (worker threads) -----------------------------------------------------------

    def _ensure_bucket(self, *, create: bool | None = None) -> None:
        """Find the bucket, once (:class:`S3Bucket`); announce it when this call created it."""
        if self._bucket.ensure(create=create):
            self._announce_created()

    def _announce_created(self) -> None:
        """Say loudly that this process made a new, empty store: the bucket and its id (written
        now, so that the line can name it; every process reads that one)."""
        try:
            identity, record = new_identity()
            if self._writer.put_if_absent(STORE_IDENTITY_KEY, record, "application/json") is None:
                stored = self._reader.stat_required(STORE_IDENTITY_KEY)
                identity = identity_of(self._reader.get_bytes(stored))
            which = f"id {identity}"
        except StorageError as exc:  # the first process to read the id will write it
            which = f"its id not written yet ({exc})"
        self._created = (
            f"created bucket {self._bucket.name!r} at {self._url} "
            f"(STORAGE__S3_CREATE_BUCKET=true): a new, empty store, {which}"
        )
        _log.warning("%s", self._created)
