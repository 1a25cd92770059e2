"""Artifact storage: the ``ArtifactStore`` protocol, its two stores, and the key layout.

Everything that crosses a process boundary as bytes lives here and travels as an
:class:`ArtifactRef`. :func:`open_store` builds the store the settings ask for; the key layout
is :mod:`skillweave.storage.keys` (imported as a module: ``keys.run_input_key(...)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillweave.errors import (
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    InvalidKeyError,
    StorageError,
)
from skillweave.lazy import lazy_exports
from skillweave.storage import keys
from skillweave.storage.base import ArtifactRef, ArtifactStore, RecordLogStore

if TYPE_CHECKING:
    from skillweave.storage.local import LocalArtifactStore, WriteBehind, deferred_durability
    from skillweave.storage.opening import open_store
    from skillweave.storage.reachable import describe_store, not_up_yet, store_ready
    from skillweave.storage.s3 import S3ArtifactStore
    from skillweave.storage.store_id import store_identity

__all__ = [
    "ArtifactIntegrityError",
    "ArtifactNotFoundError",
    "ArtifactRef",
    "ArtifactStore",
    "InvalidKeyError",
    "LocalArtifactStore",
    "RecordLogStore",
    "S3ArtifactStore",
    "StorageError",
    "WriteBehind",
    "deferred_durability",
    "describe_store",
    "keys",
    "not_up_yet",
    "open_store",
    "store_identity",
    "store_ready",
]


# The S3 store pulls in the minio client (~0.15 s to import); processes that never touch S3,
# such as sandbox executors, should not pay for it. Neither store is imported by the agent
# loop, which only needs `ArtifactRef` (it runs in Temporal's workflow sandbox).
_EXPORTS: dict[str, str] = {
    "LocalArtifactStore": "local",
    "WriteBehind": "local",
    "deferred_durability": "local",
    "S3ArtifactStore": "s3",
    "open_store": "opening",
    "describe_store": "reachable",
    "not_up_yet": "reachable",
    "store_identity": "store_id",
    "store_ready": "reachable",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
