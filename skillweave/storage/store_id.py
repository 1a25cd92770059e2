"""The identity of an artifact store: one id, written once by whoever uses the store first.

Every process of a deployment must share one store (runs' inputs, transcripts, packages and
outputs cross from the client to the workers and the managers through it). A process that is
pointed at another store does not fail where it is misconfigured but far away ("input …
does not exist" at a run's first script), so each process reads the store's id
(:func:`store_identity`), reports it, and a run carries the id of the store it was started
against: a worker whose store has another id refuses the run at its first step, naming both.

The id lives at :data:`keys.STORE_IDENTITY_KEY`, created with ``put_if_absent`` (of two
processes that find none at once, one writes it and both read that one). The S3 store that
creates its bucket (``STORAGE__S3_CREATE_BUCKET``) writes the id at once, to name it in its
warning; the record is :func:`new_identity`'s, read by :func:`identity_of`.
"""

from __future__ import annotations

import json
import secrets
import weakref
from datetime import UTC, datetime

from skillweave.errors import StorageError
from skillweave.storage import keys
from skillweave.storage.base import ArtifactStore

__all__ = ["identity_of", "new_identity", "store_identity"]

_ATTEMPTS = 3
_known: weakref.WeakKeyDictionary[ArtifactStore, str] = weakref.WeakKeyDictionary()
"""Ids already read, by store object (an id never changes)."""


def new_identity() -> tuple[str, bytes]:
    """A fresh store id and the record that holds it, as stored."""
    identity = secrets.token_hex(8)
    record = {"id": identity, "created_at": datetime.now(UTC).isoformat()}
    return identity, json.dumps(record).encode()


def identity_of(data: bytes) -> str:
    """The id a stored identity record holds.

    Raises:
        StorageError: `data` is not a store identity.
    """
    try:
        identity = json.loads(data)["id"]
    except (ValueError, KeyError, TypeError) as exc:
        raise StorageError(
            f"{keys.STORE_IDENTITY_KEY} is not a store identity ({exc}); remove it and "
            "let the next process make one"
        ) from None
    if not isinstance(identity, str) or not identity:
        raise StorageError(f"{keys.STORE_IDENTITY_KEY} holds no id")
    return identity


async def store_identity(store: ArtifactStore) -> str:
    """The store's id, made now if it has none.

    Raises:
        StorageError: the store cannot be read or written, or holds an unreadable identity.
    """
    cached = _known.get(store)
    if cached is not None:
        return cached
    for _ in range(_ATTEMPTS):
        ref = await store.stat(keys.STORE_IDENTITY_KEY)
        if ref is None:
            _, data = new_identity()
            await store.put_if_absent(
                keys.STORE_IDENTITY_KEY, data, content_type="application/json"
            )
            continue  # read back whichever was written first
        identity = identity_of(await store.get_bytes(ref))
        _known[store] = identity
        return identity
    raise StorageError(f"{keys.STORE_IDENTITY_KEY} could not be read after it was written")
