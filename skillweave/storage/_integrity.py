"""Hashing while streaming, and the size + sha256 check every read ends with (both stores)."""

from __future__ import annotations

import hashlib
from typing import Final

from skillweave.errors import ArtifactIntegrityError
from skillweave.storage.base import ArtifactRef

CHUNK_SIZE: Final = 1024 * 1024
"""Bytes per read or write when streaming a file or an object."""


class Digest:
    """sha256 and byte count of a stream, fed chunk by chunk."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.size = 0

    def update(self, chunk: bytes) -> None:
        self._hash.update(chunk)
        self.size += len(chunk)

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()

    def ref(self, key: str, content_type: str) -> ArtifactRef:
        return ArtifactRef(key=key, size=self.size, sha256=self.sha256, content_type=content_type)

    def verify(self, ref: ArtifactRef) -> None:
        """Raise ``ArtifactIntegrityError`` unless the bytes seen are exactly those of `ref`."""
        check_size(ref, self.size)
        if self.sha256 != ref.sha256:
            raise ArtifactIntegrityError(ref.key, ref.sha256, self.sha256)


def digest_of(data: bytes) -> Digest:
    digest = Digest()
    digest.update(data)
    return digest


def check_size(ref: ArtifactRef, size: int) -> None:
    """Fail fast, before hashing anything, when the stored size already disagrees with `ref`."""
    if size != ref.size:
        raise ArtifactIntegrityError(ref.key, f"{ref.size} bytes", f"{size} bytes")
