"""Reading the S3 store's objects: streamed GETs checked against the caller's ref, the ref of
a key from one HEAD (or by hashing an object another tool wrote), and listings. Blocking calls
for :class:`~skillweave.storage.s3.S3ArtifactStore`, which runs them in worker threads."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from minio import Minio
from minio.error import S3Error
from urllib3.response import BaseHTTPResponse

from skillweave.atomic_write import atomic_file
from skillweave.errors import ArtifactNotFoundError, InvalidKeyError
from skillweave.storage._integrity import CHUNK_SIZE, Digest, check_size
from skillweave.storage._s3_connection import LIST_STAT_WORKERS
from skillweave.storage._s3_errors import NOT_FOUND_CODES, s3_errors
from skillweave.storage._s3_objects import DEFAULT_CONTENT_TYPE, SHA256_HEADER, release
from skillweave.storage.base import ArtifactRef
from skillweave.storage.keys import validate_key, validate_prefix

__all__ = ["S3Reader"]

_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


class S3Reader:
    """Reads objects of one bucket.

    Args:
        client: the store's client.
        bucket: the bucket's name.
        ensure_bucket: finds the bucket before the first call (the store's).
    """

    def __init__(self, client: Minio, bucket: str, ensure_bucket: Callable[[], None]) -> None:
        self._client = client
        self._bucket = bucket
        self._ensure_bucket = ensure_bucket

    def open(self, ref: ArtifactRef) -> BaseHTTPResponse:
        """The response streaming the object of `ref`, its length checked (the caller
        releases it)."""
        validate_key(ref.key)
        self._ensure_bucket()
        with s3_errors("get", ref.key, missing_is_not_found=True):
            response = self._client.get_object(self._bucket, ref.key)
        try:
            length = response.headers.get("Content-Length")
            if length is not None:
                check_size(ref, int(length))
        except BaseException:
            release(response)
            raise
        return response

    @staticmethod
    def read_chunk(response: BaseHTTPResponse, key: str) -> bytes:
        """The next chunk of `response` (empty at the end)."""
        with s3_errors("read", key):
            return response.read(CHUNK_SIZE)

    def _chunks(self, response: BaseHTTPResponse, key: str) -> Iterator[bytes]:
        while chunk := self.read_chunk(response, key):
            yield chunk

    def get_bytes(self, ref: ArtifactRef) -> bytes:
        """The bytes of `ref`, verified."""
        response = self.open(ref)
        try:
            digest = Digest()
            parts = []
            for chunk in self._chunks(response, ref.key):
                digest.update(chunk)
                parts.append(chunk)
        finally:
            release(response)
        digest.verify(ref)
        return b"".join(parts)

    def get_file(self, ref: ArtifactRef, dest: Path) -> None:
        """The bytes of `ref` written to `dest`, verified before they are renamed into place."""
        response = self.open(ref)
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
            release(response)

    def stat(self, key: str) -> ArtifactRef | None:
        """The ref of `key` from its metadata (or by hashing it), or None."""
        validate_key(key)
        self._ensure_bucket()
        try:
            with s3_errors("stat", key, passthrough=NOT_FOUND_CODES):
                info = self._client.stat_object(self._bucket, key)
        except S3Error:
            return None  # only the not-found codes pass through
        content_type = info.content_type or DEFAULT_CONTENT_TYPE
        sha256 = (info.metadata or {}).get(SHA256_HEADER)
        if sha256 is not None and _SHA256_HEX.fullmatch(sha256) and info.size is not None:
            return ArtifactRef(key=key, size=info.size, sha256=sha256, content_type=content_type)
        return self._hash_object(key, content_type)

    def stat_required(self, key: str) -> ArtifactRef:
        """:meth:`stat`, a missing key being :class:`ArtifactNotFoundError`."""
        ref = self.stat(key)
        if ref is None:
            raise ArtifactNotFoundError(key)
        return ref

    def _hash_object(self, key: str, content_type: str) -> ArtifactRef | None:
        """The ref of an object stored without our metadata, by reading it."""
        try:
            with s3_errors("get", key, missing_is_not_found=True):
                response = self._client.get_object(self._bucket, key)
        except ArtifactNotFoundError:
            return None
        try:
            digest = Digest()
            for chunk in self._chunks(response, key):
                digest.update(chunk)
        finally:
            release(response)
        return digest.ref(key, content_type)

    def list(self, prefix: str) -> list[ArtifactRef]:
        """Refs of the valid keys starting with `prefix`, sorted by key."""
        validate_prefix(prefix)
        self._ensure_bucket()
        with s3_errors("list", prefix):
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
            refs = list(pool.map(self.stat, keys))
        return [ref for ref in refs if ref is not None]


def _is_valid_key(name: str) -> bool:
    try:
        validate_key(name)
    except InvalidKeyError:
        return False
    return True
