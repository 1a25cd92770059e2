"""Opening the artifact store the settings ask for: :func:`open_store`.

Each store is imported only when it is the one asked for: the S3 store pulls in the minio
client, which a process on the local store (or a sandbox executor) never needs. Called by every
process that opens a store from settings (the CLI's composition, the worker, the API, the
manager).
"""

from __future__ import annotations

from skillweave.config import StorageSettings
from skillweave.errors import ConfigError
from skillweave.storage.base import ArtifactStore

__all__ = ["open_store"]


def open_store(settings: StorageSettings) -> ArtifactStore:
    """The artifact store `settings` describe.

    ``local`` opens a directory (``local_dir``, ``~`` expanded); ``s3`` an S3 or MinIO bucket.
    Nothing is contacted or created here: the S3 bucket is checked on first use (and created
    if missing only with ``s3_create_bucket``), the local directory on the first write.

    Raises:
        ConfigError: ``s3`` without both access and secret keys, or a malformed endpoint/bucket.
    """
    match settings.backend:
        case "local":
            from skillweave.storage.local import LocalArtifactStore

            return LocalArtifactStore(settings.local_dir.expanduser())
        case "s3":
            if settings.s3_access_key is None or settings.s3_secret_key is None:
                raise ConfigError(
                    "storage backend 's3' needs credentials: set STORAGE__S3_ACCESS_KEY and "
                    "STORAGE__S3_SECRET_KEY (or use STORAGE__BACKEND=local)"
                )
            from skillweave.storage.s3 import S3ArtifactStore

            return S3ArtifactStore(
                endpoint=settings.s3_endpoint,
                bucket=settings.s3_bucket,
                access_key=settings.s3_access_key.get_secret_value(),
                secret_key=settings.s3_secret_key.get_secret_value(),
                secure=settings.s3_secure,
                region=settings.s3_region,
                create_bucket=settings.s3_create_bucket,
            )
