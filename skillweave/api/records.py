"""Reading the API's records (agents, runs) from the store while they may be rewritten."""

from __future__ import annotations

from typing import Final

from skillweave.errors import ArtifactIntegrityError, ArtifactNotFoundError
from skillweave.storage import ArtifactStore

__all__ = ["read_record"]

_ATTEMPTS: Final = 5


async def read_record(store: ArtifactStore, key: str) -> bytes | None:
    """The bytes under `key`, or None when there are none. A record replaced between the stat
    and the read (the ref no longer matches) is read again."""
    for _ in range(_ATTEMPTS):
        ref = await store.stat(key)
        if ref is None:
            return None
        try:
            return await store.get_bytes(ref)
        except ArtifactNotFoundError:
            return None
        except ArtifactIntegrityError:
            continue  # rewritten meanwhile
    raise ArtifactIntegrityError(key, "a stable record", "one rewritten on every read")
