"""A real local store whose audit log cannot be written while a test says so: the doors that
record a change must refuse it then, and change nothing (issue 42, item 2)."""

from __future__ import annotations

from skillweave.errors import StorageError
from skillweave.storage.base import ArtifactRef
from skillweave.storage.local import LocalArtifactStore

AUDIT_PREFIX = "audit/"
_OCTETS = "application/octet-stream"


class AuditWritesFail(LocalArtifactStore):
    """:class:`LocalArtifactStore`, except that while :attr:`failing` is set every write of a
    key under ``audit/`` raises :class:`StorageError` (code ``SlowDown``), as an S3 store
    refusing writes does; every other key is stored as usual.

    Attributes:
        failing: refuse the audit log's writes now.
        refused: how many writes were refused so far.
    """

    failing: bool = False
    refused: int = 0

    def _refuse(self, key: str) -> None:
        if self.failing and key.startswith(AUDIT_PREFIX):
            self.refused += 1
            raise StorageError(
                f"the store refuses writes of {key!r} for now", key=key, code="SlowDown"
            )

    async def put_bytes(self, key: str, data: bytes, *, content_type: str = _OCTETS) -> ArtifactRef:
        self._refuse(key)
        return await super().put_bytes(key, data, content_type=content_type)

    async def put_if_absent(
        self, key: str, data: bytes, *, content_type: str = _OCTETS
    ) -> ArtifactRef | None:
        self._refuse(key)
        return await super().put_if_absent(key, data, content_type=content_type)


async def everything_but_the_log(store: LocalArtifactStore) -> dict[str, str]:
    """Every key of `store` outside the audit log, with its sha256: what a refused change must
    leave as it was (an ``audit`` file that stands in the log's way is the log's too)."""
    return {
        ref.key: ref.sha256
        for ref in await store.list("")
        if not (ref.key.startswith(AUDIT_PREFIX) or ref.key == AUDIT_PREFIX.rstrip("/"))
    }
