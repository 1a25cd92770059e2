"""The S3 store's bucket: looked for once, created when missing only when told to, and a
lost creation race taken as found. Used by :class:`~skillweave.storage.s3.S3ArtifactStore`
before its first call that touches an object (it announces a bucket it created)."""

from __future__ import annotations

import threading

from minio import Minio
from minio.error import S3Error

from skillweave.errors import BucketNotFoundError
from skillweave.storage._s3_errors import s3_errors

__all__ = ["S3Bucket"]


class S3Bucket:
    """One bucket on one server, found (or created) once per store.

    Args:
        client: the store's client.
        name: the bucket's name.
        url: the server's URL, for errors.
        region: where to create the bucket; None: the client's default.
        create: create it when missing; False: a missing bucket is
            :class:`~skillweave.errors.BucketNotFoundError`.
    """

    def __init__(
        self, client: Minio, *, name: str, url: str, region: str | None, create: bool
    ) -> None:
        self._client = client
        self.name = name
        self._url = url
        self._region = region
        self._create = create
        self._ready = False
        self._lock = threading.Lock()

    def ensure(self, *, create: bool | None = None) -> bool:
        """Find the bucket, once; create it when missing if `create` (default: the store's
        `create_bucket`) says so, else raise :class:`BucketNotFoundError`. Whether this call
        created it (blocking: run in a worker thread)."""
        if self._ready:
            return False
        with self._lock:
            if self._ready:
                return False
            created = False
            with s3_errors("create bucket", self.name):
                if not self._client.bucket_exists(self.name):
                    if not (self._create if create is None else create):
                        raise BucketNotFoundError(self.name, url=self._url)
                    try:
                        self._client.make_bucket(self.name, location=self._region)
                        created = True
                    except S3Error as exc:
                        # Lost a creation race: fine if the bucket is ours now.
                        if exc.code != "BucketAlreadyOwnedByYou" and not (
                            exc.code == "BucketAlreadyExists"
                            and self._client.bucket_exists(self.name)
                        ):
                            raise
            self._ready = True
        return created
