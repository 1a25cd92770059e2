"""Artifact storage: the ``ArtifactStore`` protocol, its two stores, and the key layout.

Everything that crosses a process boundary as bytes lives here and travels as an
:class:`ArtifactRef`. :func:`open_store` builds the store the settings ask for; the key layout
is :mod:`skillweave.storage.keys` (imported as a module: ``keys.run_input_key(...)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillweave.config import StorageSettings
from skillweave.errors import (
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    ConfigError,
    InvalidKeyError,
    StorageError,
)
from skillweave.lazy import lazy_exports
from skillweave.storage import keys
from skillweave.storage.base import ArtifactRef, ArtifactStore

if TYPE_CHECKING:
    from skillweave.storage.local import LocalArtifactStore
    from skillweave.storage.s3 import S3ArtifactStore

__all__ = [
    "ArtifactIntegrityError",
    "ArtifactNotFoundError",
    "ArtifactRef",
    "ArtifactStore",
    "InvalidKeyError",
    "LocalArtifactStore",
    "S3ArtifactStore",
    "StorageError",
    "keys",
    "open_store",
]


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


# The S3 store pulls in the minio client (~0.15 s to import); processes that never touch S3,
# such as sandbox executors, should not pay for it. Neither store is imported by the agent
# loop, which only needs `ArtifactRef` (it runs in Temporal's workflow sandbox).
_EXPORTS: dict[str, str] = {
    "LocalArtifactStore": "local",
    "S3ArtifactStore": "s3",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
