"""The data converter: large payloads go to the artifact store by reference, small stay inline."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from pydantic import BaseModel
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import PydanticPayloadConverter, pydantic_data_converter
from temporalio.converter import (
    DataConverter,
    StorageDriverStoreContext,
    WorkflowSerializationContext,
)

from skillweave.engines.converter import data_converter
from skillweave.errors import ArtifactIntegrityError, InvalidKeyError, StorageError
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore


class Note(BaseModel):
    title: str
    body: str


BIG = Note(title="big", body="x" * 10_000)
SMALL = Note(title="small", body="short")


@pytest.fixture
def store(tmp_path: Path) -> LocalArtifactStore:
    return LocalArtifactStore(tmp_path / "store", fsync=False)


async def test_a_large_value_travels_as_a_reference_and_round_trips(
    store: LocalArtifactStore,
) -> None:
    converter = data_converter(store, threshold=1024)
    [payload] = await converter.encode([BIG])
    assert payload.ByteSize() < 1024
    [stored] = await store.list("payloads/")
    assert stored.size > 10_000
    assert stored.key == keys.payload_key(stored.sha256)
    assert await converter.decode([payload], [Note]) == [BIG]


async def test_a_small_value_stays_inline(store: LocalArtifactStore) -> None:
    converter = data_converter(store, threshold=1024)
    [payload] = await converter.encode([SMALL])
    assert await store.list("payloads/") == []
    assert payload == (await pydantic_data_converter.encode([SMALL]))[0]
    assert await converter.decode([payload], [Note]) == [SMALL]


async def test_the_same_payload_is_stored_once(store: LocalArtifactStore) -> None:
    converter = data_converter(store, threshold=1024)
    first = await converter.encode([BIG])
    second = await converter.encode([BIG, BIG])
    assert first[0] == second[0] == second[1]
    assert len(await store.list("payloads/")) == 1


async def test_a_tampered_payload_fails_to_decode(store: LocalArtifactStore) -> None:
    converter = data_converter(store, threshold=1024)
    [payload] = await converter.encode([BIG])
    [stored] = await store.list("payloads/")
    forged = Payload(metadata={"encoding": b"json/plain"}, data=b'{"title":"evil","body":""}')
    (store.root / stored.key).write_bytes(forged.SerializeToString().ljust(stored.size, b" "))
    with pytest.raises(ArtifactIntegrityError, match=stored.key):
        await converter.decode([payload], [Note])


async def test_a_damaged_object_is_rewritten_when_stored_again(
    store: LocalArtifactStore,
) -> None:
    converter = data_converter(store, threshold=1024)
    [payload] = await converter.encode([BIG])
    [stored] = await store.list("payloads/")
    (store.root / stored.key).write_bytes(b"garbage")
    await converter.encode([BIG])
    assert await converter.decode([payload], [Note]) == [BIG]


async def test_a_claim_naming_another_artifact_is_refused(store: LocalArtifactStore) -> None:
    converter = data_converter(store, threshold=1024)
    [payload] = await converter.encode([BIG])
    secret = await store.put_bytes("runs/r1/inputs/secret.txt", b"secret")
    reference = json.loads(payload.data)
    reference["claimData"] = {"key": secret.key, "sha256": secret.sha256, "size": "6"}
    payload.data = json.dumps(reference).encode()
    with pytest.raises(StorageError, match=r"secret\.txt' is not 'payloads/"):
        await converter.decode([payload], [Note])


def test_without_a_store_the_converter_is_the_pydantic_one() -> None:
    assert data_converter() is pydantic_data_converter


def test_payload_key_is_content_addressed_and_validated() -> None:
    digest = hashlib.sha256(b"x").hexdigest()
    assert keys.payload_key(digest) == f"payloads/{digest}.bin"
    for bad in ["", digest.upper(), digest[:-1], f"../{digest[3:]}", digest + "0"]:
        with pytest.raises(InvalidKeyError):
            keys.payload_key(bad)


def _inner(converter: DataConverter) -> object:
    """The payload converter a data converter wraps (the SDK wraps each for its own types)."""
    wrapped = converter.payload_converter
    return getattr(wrapped, "_inner_payload_converter", wrapped)


async def test_a_converter_derived_for_a_context_shares_the_payload_converter(
    store: LocalArtifactStore,
) -> None:
    # The SDK derives a converter per payload it visits in a workflow task; building a fresh
    # payload converter each time (and its type-adapter cache) was a measurable share of a
    # busy worker's CPU.
    converter = data_converter(store, threshold=1024)
    derived = converter._with_contexts(
        WorkflowSerializationContext(namespace="default", workflow_id="wf"),
        StorageDriverStoreContext(),
    )
    assert derived is not converter  # the external storage takes the store context
    assert _inner(derived) is _inner(converter)
    assert _inner(data_converter(store)) is _inner(converter)
    [payload] = await derived.encode([BIG])
    assert await derived.decode([payload], [Note]) == [BIG]


async def test_a_converter_built_from_its_class_shares_the_payload_converter(
    store: LocalArtifactStore,
) -> None:
    # The SDK builds a data converter from the classes of the worker's twice for every
    # workflow activation (to decode it and to encode its completion): a new pydantic payload
    # converter each time started with an empty cache of type adapters.
    converter = data_converter(store)
    built = DataConverter(
        payload_converter_class=converter.payload_converter_class,
        failure_converter_class=converter.failure_converter_class,
    )
    assert _inner(built) is _inner(converter)
    shared = _inner(converter)
    assert isinstance(shared, PydanticPayloadConverter)
    [payload] = await built.encode([SMALL])
    assert payload.metadata["encoding"] == b"json/plain"  # what pydantic's writes, unchanged
    assert await converter.decode([payload], [Note]) == [SMALL]
    assert await pydantic_data_converter.decode([payload], [Note]) == [SMALL]
