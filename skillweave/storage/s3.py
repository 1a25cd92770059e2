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
store's id (written at once: :mod:`skillweave.storage.identity`); otherwise it is a
:class:`~skillweave.errors.BucketNotFoundError`, so a mistyped bucket is never silently a new,
empty store. The bucket is looked for again on the next call until it is found.

The HTTP pool is our own rather than minio's default: minio's retries every PUT on read errors
and 5xx, and a resent conditional PUT whose first attempt landed would come back 412 and make
the winner believe it lost. Here only connection failures (nothing was sent) are retried, plus
one read retry for GET and HEAD; anything else surfaces as ``StorageError`` and retrying is
decided once, at the activity boundary. Blocking client calls run in worker threads. Credentials
are handed to the client and never kept, shown in ``repr`` or put in an error message.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import re
import ssl
import threading
import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import BinaryIO, Final
from urllib.parse import urlsplit

import certifi
import urllib3
from minio import Minio
from minio.error import InvalidResponseError, MinioException, S3Error, ServerError
from minio.helpers import check_bucket_name
from urllib3.response import BaseHTTPResponse

from skillweave.atomic_write import atomic_file
from skillweave.errors import (
    ArtifactNotFoundError,
    BucketNotFoundError,
    ConfigError,
    InvalidKeyError,
    StorageError,
)
from skillweave.storage._integrity import (
    CHUNK_SIZE,
    Digest,
    check_size,
    digest_of,
)
from skillweave.storage.base import ArtifactRef
from skillweave.storage.identity import identity_of, new_identity
from skillweave.storage.keys import STORE_IDENTITY_KEY, validate_key, validate_prefix

__all__ = ["S3ArtifactStore"]

SHA256_METADATA: Final = "sha256"
"""User-metadata name of the hash; on the wire ``x-amz-meta-sha256``."""

MAX_CONDITIONAL_PUT_BYTES: Final = 5 * 1024**3
"""A conditional write is one PUT, and S3 caps a single PUT at 5 GiB."""

CONNECT_TIMEOUT_SECONDS: Final = 10.0
READ_TIMEOUT_SECONDS: Final = 120.0
LIST_STAT_WORKERS: Final = 8

_DEFAULT_CONTENT_TYPE: Final = "application/octet-stream"
_META_HEADER: Final = f"x-amz-meta-{SHA256_METADATA}"
_NOT_FOUND_CODES: Final = frozenset({"NoSuchKey", "NoSuchObject", "ResourceNotFound"})
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
# AWS answers 409 to a conditional write racing another one on the same key: try again.
_CONFLICT_RETRIES: Final = 4
_CONFLICT_BACKOFF_SECONDS: Final = 0.05

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
        host, secure = _split_endpoint(endpoint, secure)
        try:
            check_bucket_name(bucket, strict=True)
        except ValueError as exc:
            raise ConfigError(f"invalid S3 bucket name {bucket!r}: {exc}") from None
        self._endpoint = host
        self._url = f"{'https' if secure else 'http'}://{host}"
        self._bucket = bucket
        self._create_bucket = create_bucket
        self._region = region
        self._http = _http_pool()
        try:
            self._client = Minio(
                host,
                access_key=access_key or None,
                secret_key=secret_key or None,
                secure=secure,
                region=region,
                http_client=self._http,
            )
        except ValueError as exc:
            raise ConfigError(f"invalid S3 endpoint {host!r}: {exc}") from None
        self._bucket_ready = False
        self._bucket_lock = threading.Lock()
        self._created: str | None = None

    @property
    def bucket(self) -> str:
        """The bucket the artifacts live in."""
        return self._bucket

    @property
    def created(self) -> str | None:
        """The WARNING line said when this store created its bucket; None when it did not
        (a CLI, which keeps library log lines quiet, shows it from here)."""
        return self._created

    def __repr__(self) -> str:
        return f"S3ArtifactStore(endpoint={self._endpoint!r}, bucket={self._bucket!r})"

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
        self, key: str, data: bytes, *, content_type: str = _DEFAULT_CONTENT_TYPE
    ) -> ArtifactRef:
        """Store `data` under `key` (replacing it) and return its ref."""
        return await asyncio.to_thread(self._put_bytes, key, data, content_type)

    async def put_if_absent(
        self, key: str, data: bytes, *, content_type: str = _DEFAULT_CONTENT_TYPE
    ) -> ArtifactRef | None:
        """Store `data` only if `key` does not exist; None when it already did.

        A conditional write (``If-None-Match: *``): atomic on servers that support conditional
        writes (AWS S3, MinIO, moto), last-writer-wins on servers that ignore the header.
        """
        return await asyncio.to_thread(self._put_if_absent, key, data, content_type)

    async def put_file(
        self, key: str, path: str, *, content_type: str = _DEFAULT_CONTENT_TYPE
    ) -> ArtifactRef:
        """Store the file at `path` and return its ref.

        The file is read twice, in chunks: once to hash it (the hash is sent as metadata before
        the body), once to upload it (multipart above 5 MiB, one part in memory at a time). If
        the file changed between the two reads the object is removed and ``StorageError``
        (code ``SourceChanged``) raised.
        """
        return await asyncio.to_thread(self._put_file, key, Path(path), content_type)

    async def get_bytes(self, ref: ArtifactRef) -> bytes:
        """The bytes of `ref`, verified against its size and sha256."""
        return await asyncio.to_thread(self._get_bytes, ref)

    async def get_file(self, ref: ArtifactRef, path: str) -> None:
        """Write the bytes of `ref` to `path` (streamed, verified, then renamed into place)."""
        await asyncio.to_thread(self._get_file, ref, Path(path))

    async def stream(self, ref: ArtifactRef) -> AsyncIterator[bytes]:
        """The bytes of `ref` in chunks of up to 1 MiB; the hash is checked after the last one."""
        response = await asyncio.to_thread(self._open, ref)
        try:
            digest = Digest()
            while True:
                chunk = await asyncio.to_thread(self._read_chunk, response, ref.key)
                if not chunk:
                    break
                digest.update(chunk)
                yield chunk
            digest.verify(ref)
        finally:
            _release(response)

    async def stat(self, key: str) -> ArtifactRef | None:
        """The ref of what is stored under `key`, or None.

        An object written by another tool without the sha256 metadata is hashed by reading it.
        """
        return await asyncio.to_thread(self._stat, key)

    async def list(self, prefix: str) -> list[ArtifactRef]:
        """Refs of every key starting with `prefix` (a plain string prefix), sorted by key.

        Objects whose names are not valid keys (written by other tools) are skipped.
        """
        return await asyncio.to_thread(self._list, prefix)

    async def delete(self, key: str) -> None:
        """Remove `key`; nothing happens when it does not exist."""
        await asyncio.to_thread(self._delete, key)

    # -- blocking implementations (worker threads) ---------------------------------------------

    def _ensure_bucket(self, *, create: bool | None = None) -> None:
        """Find the bucket, once; create it when missing if `create` (default: the store's
        `create_bucket`) says so, else raise :class:`BucketNotFoundError`."""
        if self._bucket_ready:
            return
        with self._bucket_lock:
            if self._bucket_ready:
                return
            created = False
            with _s3_errors("create bucket", self._bucket):
                if not self._client.bucket_exists(self._bucket):
                    if not (self._create_bucket if create is None else create):
                        raise BucketNotFoundError(self._bucket, url=self._url)
                    try:
                        self._client.make_bucket(self._bucket, location=self._region)
                        created = True
                    except S3Error as exc:
                        # Lost a creation race: fine if the bucket is ours now.
                        if exc.code != "BucketAlreadyOwnedByYou" and not (
                            exc.code == "BucketAlreadyExists"
                            and self._client.bucket_exists(self._bucket)
                        ):
                            raise
            self._bucket_ready = True
        if created:
            self._announce_created()

    def _announce_created(self) -> None:
        """Say loudly that this process made a new, empty store: the bucket and its id (written
        now, so that the line can name it; every process reads that one)."""
        try:
            identity, record = new_identity()
            if self._put_if_absent(STORE_IDENTITY_KEY, record, "application/json") is None:
                identity = identity_of(self._get_bytes(self._stat_required(STORE_IDENTITY_KEY)))
            which = f"id {identity}"
        except StorageError as exc:  # the first process to read the id will write it
            which = f"its id not written yet ({exc})"
        self._created = (
            f"created bucket {self._bucket!r} at {self._url} (STORAGE__S3_CREATE_BUCKET=true): "
            f"a new, empty store, {which}"
        )
        _log.warning("%s", self._created)

    def _stat_required(self, key: str) -> ArtifactRef:
        ref = self._stat(key)
        if ref is None:
            raise ArtifactNotFoundError(key)
        return ref

    def _put_bytes(self, key: str, data: bytes, content_type: str) -> ArtifactRef:
        validate_key(key)
        self._ensure_bucket()
        digest = digest_of(data)
        with _s3_errors("put", key):
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

    def _put_if_absent(self, key: str, data: bytes, content_type: str) -> ArtifactRef | None:
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
            _META_HEADER: digest.sha256,
            "If-None-Match": "*",
        }
        for attempt in range(_CONFLICT_RETRIES):
            try:
                with _s3_errors(
                    "put if absent",
                    key,
                    passthrough=frozenset({"PreconditionFailed", "ConditionalRequestConflict"}),
                ):
                    self._client._put_object(self._bucket, key, data, headers=headers)
            except S3Error as exc:
                if exc.code == "PreconditionFailed":
                    return None
                if attempt + 1 == _CONFLICT_RETRIES:
                    raise _storage_error("put if absent", key, exc) from exc
                time.sleep(_CONFLICT_BACKOFF_SECONDS * 2**attempt)
            else:
                return digest.ref(key, content_type)
        raise AssertionError("unreachable")  # pragma: no cover

    def _put_file(self, key: str, source: Path, content_type: str) -> ArtifactRef:
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
            with _s3_errors("put", key):
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
                self._delete(key)
            raise StorageError(
                f"{str(source)!r} changed while it was being stored as {key!r}",
                key=key,
                code="SourceChanged",
            )
        return expected.ref(key, content_type)

    def _open(self, ref: ArtifactRef) -> BaseHTTPResponse:
        validate_key(ref.key)
        self._ensure_bucket()
        with _s3_errors("get", ref.key, missing_is_not_found=True):
            response = self._client.get_object(self._bucket, ref.key)
        try:
            length = response.headers.get("Content-Length")
            if length is not None:
                check_size(ref, int(length))
        except BaseException:
            _release(response)
            raise
        return response

    @staticmethod
    def _read_chunk(response: BaseHTTPResponse, key: str) -> bytes:
        with _s3_errors("read", key):
            return response.read(CHUNK_SIZE)

    def _chunks(self, response: BaseHTTPResponse, key: str) -> Iterator[bytes]:
        while chunk := self._read_chunk(response, key):
            yield chunk

    def _get_bytes(self, ref: ArtifactRef) -> bytes:
        response = self._open(ref)
        try:
            digest = Digest()
            parts = []
            for chunk in self._chunks(response, ref.key):
                digest.update(chunk)
                parts.append(chunk)
        finally:
            _release(response)
        digest.verify(ref)
        return b"".join(parts)

    def _get_file(self, ref: ArtifactRef, dest: Path) -> None:
        response = self._open(ref)
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            # A download can be fetched again: atomic (never a part at `dest`), not fsynced.
            with atomic_file(dest, durable=False) as out:
                digest = Digest()
                for chunk in self._chunks(response, ref.key):
                    digest.update(chunk)
                    out.write(chunk)
                digest.verify(ref)
        finally:
            _release(response)

    def _stat(self, key: str) -> ArtifactRef | None:
        validate_key(key)
        self._ensure_bucket()
        try:
            with _s3_errors("stat", key, passthrough=_NOT_FOUND_CODES):
                info = self._client.stat_object(self._bucket, key)
        except S3Error:
            return None  # only the not-found codes pass through
        content_type = info.content_type or _DEFAULT_CONTENT_TYPE
        sha256 = (info.metadata or {}).get(_META_HEADER)
        if sha256 is not None and _SHA256_HEX.fullmatch(sha256) and info.size is not None:
            return ArtifactRef(key=key, size=info.size, sha256=sha256, content_type=content_type)
        return self._hash_object(key, content_type)

    def _hash_object(self, key: str, content_type: str) -> ArtifactRef | None:
        """The ref of an object stored without our metadata, by reading it."""
        try:
            with _s3_errors("get", key, missing_is_not_found=True):
                response = self._client.get_object(self._bucket, key)
        except ArtifactNotFoundError:
            return None
        try:
            digest = Digest()
            for chunk in self._chunks(response, key):
                digest.update(chunk)
        finally:
            _release(response)
        return digest.ref(key, content_type)

    def _list(self, prefix: str) -> list[ArtifactRef]:
        validate_prefix(prefix)
        self._ensure_bucket()
        with _s3_errors("list", prefix):
            names = sorted(
                obj.object_name
                for obj in self._client.list_objects(
                    self._bucket, prefix=prefix or None, recursive=True
                )
                if obj.object_name is not None and not obj.is_dir
            )
        keys = [name for name in names if _is_valid_key(name)]
        if not keys:
            return []
        # One HEAD per object (list results carry no user metadata on AWS): a few in parallel.
        with ThreadPoolExecutor(max_workers=min(LIST_STAT_WORKERS, len(keys))) as pool:
            refs = list(pool.map(self._stat, keys))
        return [ref for ref in refs if ref is not None]

    def _delete(self, key: str) -> None:
        validate_key(key)
        self._ensure_bucket()
        with _s3_errors("delete", key):
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


def _split_endpoint(endpoint: str, secure: bool) -> tuple[str, bool]:
    if "://" not in endpoint:
        if not endpoint or "/" in endpoint:
            raise ConfigError(f"invalid S3 endpoint {endpoint!r}: expected host[:port]")
        return endpoint, secure
    parts = urlsplit(endpoint)
    if parts.scheme not in {"http", "https"} or not parts.netloc or parts.path not in {"", "/"}:
        raise ConfigError(f"invalid S3 endpoint {endpoint!r}: expected http(s)://host[:port]")
    return parts.netloc, parts.scheme == "https"


def _http_pool() -> urllib3.PoolManager:
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


def _is_valid_key(name: str) -> bool:
    try:
        validate_key(name)
    except InvalidKeyError:
        return False
    return True


def _release(response: BaseHTTPResponse) -> None:
    response.close()
    response.release_conn()


def _storage_error(op: str, key: str, exc: Exception) -> StorageError:
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
def _s3_errors(
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
        if missing_is_not_found and exc.code in _NOT_FOUND_CODES:
            raise ArtifactNotFoundError(key) from exc
        raise _storage_error(op, key, exc) from exc
    except (MinioException, urllib3.exceptions.HTTPError) as exc:
        raise _storage_error(op, key, exc) from exc
