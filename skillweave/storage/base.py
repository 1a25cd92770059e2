"""The artifact store contract: :class:`ArtifactRef` and the :class:`ArtifactStore` protocol.

Everything that crosses a process boundary as bytes (skill packages, script inputs and outputs,
over-cap stdout, execution results, transcripts) lives in an artifact store and travels as an
``ArtifactRef``: the key, the size, the sha256 and the content type. Reads verify the hash, so a
ref names exact bytes. Two implementations: a local directory (the embedded default) and S3
(MinIO or AWS, on the ``minio`` client). The key layout is owned by ``keys``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ArtifactRef", "ArtifactStore", "RecordLogStore"]


class ArtifactRef(BaseModel):
    """A reference to exact bytes in the artifact store."""

    model_config = ConfigDict(frozen=True)

    key: str = Field(min_length=1, max_length=1024)
    size: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    content_type: str = "application/octet-stream"


@runtime_checkable
class ArtifactStore(Protocol):
    """Where artifacts live. Keys come from ``skillweave.storage.keys``; all methods are async
    (implementations over blocking clients run them in a worker thread)."""

    async def put_bytes(
        self, key: str, data: bytes, *, content_type: str = "application/octet-stream"
    ) -> ArtifactRef:
        """Store `data` under `key` (replacing it) and return its ref."""
        ...

    async def put_if_absent(
        self, key: str, data: bytes, *, content_type: str = "application/octet-stream"
    ) -> ArtifactRef | None:
        """Store `data` only if `key` does not exist; None when it already did."""
        ...

    async def put_file(
        self, key: str, path: str, *, content_type: str = "application/octet-stream"
    ) -> ArtifactRef:
        """Store the file at `path` (streamed, not read into memory) and return its ref."""
        ...

    async def get_bytes(self, ref: ArtifactRef) -> bytes:
        """The bytes of `ref`; raises ``ArtifactIntegrityError`` when they do not match it."""
        ...

    async def get_file(self, ref: ArtifactRef, path: str) -> None:
        """Write the bytes of `ref` to `path` (streamed), verifying size and hash."""
        ...

    def stream(self, ref: ArtifactRef) -> AsyncIterator[bytes]:
        """The bytes of `ref` in chunks (verified at the end)."""
        ...

    async def stat(self, key: str) -> ArtifactRef | None:
        """The ref of what is stored under `key`, or None."""
        ...

    async def list(self, prefix: str) -> list[ArtifactRef]:
        """Refs of every key under `prefix`, sorted by key."""
        ...

    async def delete(self, key: str) -> None:
        """Remove `key` (no error when it does not exist)."""
        ...


@runtime_checkable
class RecordLogStore(Protocol):
    """A store that keeps many small records in one append-only log (the local store: a
    run's transcript as one file, not a file a record). Other stores keep an object a record
    (``skillweave.engines.transcript`` chooses)."""

    async def append_records(self, log: str, records: Sequence[tuple[int, bytes]]) -> None:
        """Append `records` (seq and data each, in order) to the log `log` in one write
        (durable when it returns); the newest record of a seq is the one read back."""
        ...

    async def read_record(self, log: str, seq: int) -> bytes | None:
        """The newest record `seq` of `log`, verified; None when it has none."""
        ...
