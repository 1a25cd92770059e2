"""The Temporal data converter: pydantic payloads, and large ones kept in the artifact store.

The worker and every client (the Temporal engine, the CLI, the API) build their converter with
:func:`data_converter`, so they all read what the others wrote. Values are pydantic models
(``temporalio.contrib.pydantic``). Transcripts already travel by reference (the runtime stores
tool outputs and model replies and only sizes and summaries cross the activity boundary), so
history stays small by design; the external storage here is the safety net for whatever still
grows past the threshold (a huge task, a long catalog, a wide state carried over
continue-as-new): Temporal's own ``ExternalStorage`` swaps such a payload for a reference and
:class:`ArtifactStoreDriver` keeps its bytes at ``payloads/{sha256}.bin``. Only the transport
of bytes is written here; selecting, referencing and resolving payloads is the SDK's.

The SDK builds a data converter for every workflow activation, and with external storage set
derives one for every payload a workflow task visits (three passes each way, each payload with
its command's context); each builds a new payload converter from its class, and pydantic's
starts with a new schema serializer and an empty cache of type adapters, so every activation
built the adapter of every type it decoded again. :class:`_SharedPayloadConverter` is built
once: every converter the SDK makes shares it. Building them was 4 % of a busy worker's CPU
for the derived ones, and then 4.7 % of its Python time for the activations' (issue 47,
docs/BENCHMARKS.md).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from typing import ClassVar, Final

from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import PydanticPayloadConverter, pydantic_data_converter
from temporalio.converter import (
    DataConverter,
    ExternalStorage,
    StorageDriver,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
)

from skillweave.errors import StorageError
from skillweave.storage import ArtifactRef, ArtifactStore, keys

__all__ = ["DRIVER_NAME", "PAYLOAD_THRESHOLD", "ArtifactStoreDriver", "data_converter"]

DRIVER_NAME: Final = "skillweave-artifact-store"
"""Written into every reference in workflow history: never rename it."""

PAYLOAD_THRESHOLD: Final = 256 * 1024
"""Payloads this large (serialized bytes) or larger go to the store, not into history."""

_CONTENT_TYPE: Final = "application/x-protobuf"


class ArtifactStoreDriver(StorageDriver):
    """Keeps Temporal payloads in an :class:`ArtifactStore`, content-addressed.

    A payload is stored as its serialized protobuf under ``keys.payload_key(sha256)``; the
    claim in history names the key, the sha256 and the size, and the store verifies both
    when the payload is read back (``ArtifactIntegrityError`` on a mismatch). The same payload
    stored twice (an activity retried, a state carried over again) is written once.

    Args:
        store: where the payloads live; the worker's and the clients' must be the same store.
    """

    def __init__(self, store: ArtifactStore) -> None:
        self._store = store

    def name(self) -> str:
        return DRIVER_NAME

    async def store(
        self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
    ) -> list[StorageDriverClaim]:
        return list(await asyncio.gather(*(self._store_one(p) for p in payloads)))

    async def retrieve(
        self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]
    ) -> list[Payload]:
        return list(await asyncio.gather(*(self._retrieve_one(c) for c in claims)))

    async def _store_one(self, payload: Payload) -> StorageDriverClaim:
        data = payload.SerializeToString()
        digest = hashlib.sha256(data).hexdigest()
        key = keys.payload_key(digest)
        existing = await self._store.stat(key)
        # A damaged object under the key is replaced: the key promises these exact bytes.
        if existing is None or existing.sha256 != digest:
            await self._store.put_bytes(key, data, content_type=_CONTENT_TYPE)
        return StorageDriverClaim(claim_data={"key": key, "sha256": digest, "size": str(len(data))})

    async def _retrieve_one(self, claim: StorageDriverClaim) -> Payload:
        ref = _ref_of(claim.claim_data)
        return Payload.FromString(await self._store.get_bytes(ref))


def _ref_of(claim: Mapping[str, str]) -> ArtifactRef:
    """The ref a claim names, refusing one whose key is not its digest's payload key (a claim
    comes from history, and must not be a way to read other artifacts)."""
    try:
        digest = claim["sha256"]
        ref = ArtifactRef(
            key=keys.payload_key(digest),
            size=int(claim["size"]),
            sha256=digest,
            content_type=_CONTENT_TYPE,
        )
    except (KeyError, ValueError) as exc:
        raise StorageError(f"malformed payload claim {dict(claim)!r}: {exc}") from exc
    if claim.get("key") != ref.key:
        raise StorageError(
            f"payload claim key {claim.get('key')!r} is not {ref.key!r}", key=claim.get("key")
        )
    return ref


class _SharedPayloadConverter(PydanticPayloadConverter):
    """pydantic's payload converter, built once per process: every instance is that one (see
    the module docstring). It holds no per-context state, and its type-adapter cache is an
    ``lru_cache``, safe across the worker's activation threads."""

    _built: ClassVar[_SharedPayloadConverter | None] = None

    def __new__(cls) -> _SharedPayloadConverter:
        built = cls._built
        if built is None:
            built = super().__new__(cls)
            PydanticPayloadConverter.__init__(built)
            cls._built = built
        return built

    def __init__(self) -> None:
        """Nothing: the one instance was built in ``__new__``."""


def data_converter(
    store: ArtifactStore | None = None, *, threshold: int = PAYLOAD_THRESHOLD
) -> DataConverter:
    """The pydantic data converter, with payloads of `threshold` bytes or more kept in `store`.

    Args:
        store: the artifact store for large payloads; None keeps every payload inline (tests,
            and clients that only read small results).
        threshold: the smallest serialized payload that goes to the store.
    """
    if store is None:
        return pydantic_data_converter
    storage = ExternalStorage(
        drivers=[ArtifactStoreDriver(store)], payload_size_threshold=threshold
    )
    return DataConverter(
        payload_converter_class=_SharedPayloadConverter,
        failure_converter_class=pydantic_data_converter.failure_converter_class,
        external_storage=storage,
    )
