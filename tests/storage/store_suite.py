"""The one behaviour suite every ``ArtifactStore`` must pass.

Not collected on its own: a test module imports these functions and provides two fixtures,

* ``store``: a fresh, empty store;
* ``corrupt``: ``async (key, data) -> None`` that replaces the stored bytes of `key` behind the
  store's back (no metadata update), the way a disk error or a stray tool would.

``tests/storage/test_local_store.py`` runs it on ``LocalArtifactStore`` and
``tests/integration/storage/test_s3_store.py`` on ``S3ArtifactStore`` against moto.
"""

from __future__ import annotations

import asyncio
import contextlib
import filecmp
import hashlib
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from skillweave.engines import read_transcript_record
from skillweave.engines.transcript import TranscriptRecorder
from skillweave.errors import (
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    InvalidKeyError,
    StorageError,
)
from skillweave.llm import Message
from skillweave.storage import ArtifactRef, ArtifactStore, RecordLogStore, keys

Corrupt = Callable[[str, bytes], Awaitable[None]]

__all__ = [
    "test_a_transcript_reads_back_the_newest_record_of_each_seq",
    "test_concurrent_put_if_absent_has_exactly_one_winner",
    "test_delete_is_idempotent",
    "test_empty_artifact",
    "test_get_file_refuses_corrupt_bytes_and_leaves_nothing",
    "test_get_missing_raises_not_found",
    "test_integrity_error_on_changed_bytes",
    "test_integrity_error_on_changed_size",
    "test_invalid_keys_are_refused",
    "test_is_an_artifact_store",
    "test_list_by_prefix_is_sorted",
    "test_list_prefix_isolation",
    "test_list_rejects_bad_prefixes",
    "test_nested_keys",
    "test_overwrite",
    "test_put_file_get_file_streams_a_large_file",
    "test_put_file_missing_source",
    "test_put_get_round_trip",
    "test_put_if_absent_keeps_the_first_bytes",
    "test_ref_fields",
    "test_stat_missing_is_none",
    "test_stream_can_be_abandoned",
    "test_stream_yields_bounded_chunks",
]

CHUNK = 1024 * 1024


async def read_stream(store: ArtifactStore, ref: ArtifactRef) -> list[bytes]:
    async with contextlib.aclosing(store.stream(ref)) as chunks:
        return [chunk async for chunk in chunks]


def sha256_of_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def test_is_an_artifact_store(store: ArtifactStore) -> None:
    assert isinstance(store, ArtifactStore)


async def test_put_get_round_trip(store: ArtifactStore) -> None:
    ref = await store.put_bytes("runs/r1/inputs/a.txt", b"hello artifacts")
    assert await store.get_bytes(ref) == b"hello artifacts"
    assert await store.stat(ref.key) == ref


async def test_ref_fields(store: ArtifactStore) -> None:
    data = b'{"answer": 42}'
    ref = await store.put_bytes("runs/r1/inputs/a.json", data, content_type="application/json")
    assert ref == ArtifactRef(
        key="runs/r1/inputs/a.json",
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        content_type="application/json",
    )
    assert await store.stat("runs/r1/inputs/a.json") == ref
    plain = await store.put_bytes("runs/r1/inputs/b.bin", b"\x00\xff")
    assert plain.content_type == "application/octet-stream"
    assert (await store.stat(plain.key)) == plain


async def test_overwrite(store: ArtifactStore) -> None:
    first = await store.put_bytes("k/v", b"first", content_type="text/plain")
    second = await store.put_bytes("k/v", b"second!", content_type="text/markdown")
    assert second.sha256 != first.sha256
    assert await store.stat("k/v") == second
    assert await store.get_bytes(second) == b"second!"
    with pytest.raises(ArtifactIntegrityError):
        await store.get_bytes(first)  # a ref names exact bytes, not "whatever is there now"


async def test_stat_missing_is_none(store: ArtifactStore) -> None:
    assert await store.stat("runs/r1/inputs/missing.txt") is None
    await store.put_bytes("runs/r1/inputs/present.txt", b"x")
    assert await store.stat("runs/r1/inputs/missing.txt") is None
    assert await store.stat("runs/r1/inputs") is None  # a prefix is not an artifact


async def test_get_missing_raises_not_found(store: ArtifactStore, tmp_path: Path) -> None:
    ghost = ArtifactRef(key="runs/r1/inputs/ghost", size=1, sha256="0" * 64)
    with pytest.raises(ArtifactNotFoundError) as caught:
        await store.get_bytes(ghost)
    assert caught.value.key == ghost.key
    with pytest.raises(ArtifactNotFoundError):
        await store.get_file(ghost, str(tmp_path / "ghost"))
    assert not (tmp_path / "ghost").exists()
    with pytest.raises(ArtifactNotFoundError):
        await read_stream(store, ghost)


async def test_integrity_error_on_changed_bytes(store: ArtifactStore, corrupt: Corrupt) -> None:
    ref = await store.put_bytes("runs/r1/inputs/data.csv", b"a,b\n1,2\n")
    await corrupt(ref.key, b"a,b\n6,6\n")  # same size: only the hash can tell
    with pytest.raises(ArtifactIntegrityError) as caught:
        await store.get_bytes(ref)
    assert caught.value.key == ref.key
    assert caught.value.expected == ref.sha256
    assert caught.value.actual == hashlib.sha256(b"a,b\n6,6\n").hexdigest()
    with pytest.raises(ArtifactIntegrityError):
        await read_stream(store, ref)


async def test_integrity_error_on_changed_size(store: ArtifactStore, corrupt: Corrupt) -> None:
    ref = await store.put_bytes("runs/r1/inputs/data.csv", b"a,b\n1,2\n")
    await corrupt(ref.key, b"a,b\n1,2\n3,4\n")
    with pytest.raises(ArtifactIntegrityError) as caught:
        await store.get_bytes(ref)
    assert (caught.value.expected, caught.value.actual) == ("8 bytes", "12 bytes")
    with pytest.raises(ArtifactIntegrityError):
        await read_stream(store, ref)


async def test_get_file_refuses_corrupt_bytes_and_leaves_nothing(
    store: ArtifactStore, corrupt: Corrupt, tmp_path: Path
) -> None:
    ref = await store.put_bytes("runs/r1/inputs/x", b"0123456789")
    await corrupt(ref.key, b"9876543210")
    target = tmp_path / "out" / "x"
    with pytest.raises(ArtifactIntegrityError):
        await store.get_file(ref, str(target))
    assert not target.exists()
    assert not list((tmp_path / "out").iterdir())  # no partial download left behind


async def test_list_by_prefix_is_sorted(store: ArtifactStore) -> None:
    for name in ["b.txt", "a.txt", "dir/c.txt", "A.txt", "a.txt.bak"]:
        await store.put_bytes(f"runs/r1/inputs/{name}", name.encode())
    await store.put_bytes("runs/r2/inputs/a.txt", b"other run")
    refs = await store.list("runs/r1/")
    assert [ref.key for ref in refs] == [
        "runs/r1/inputs/A.txt",
        "runs/r1/inputs/a.txt",
        "runs/r1/inputs/a.txt.bak",
        "runs/r1/inputs/b.txt",
        "runs/r1/inputs/dir/c.txt",
    ]
    assert refs[0] == await store.stat("runs/r1/inputs/A.txt")
    assert [r.key for r in await store.list("runs/r1/inputs/a")] == [
        "runs/r1/inputs/a.txt",
        "runs/r1/inputs/a.txt.bak",
    ]
    assert len(await store.list("")) == 6
    assert await store.list("runs/r3/") == []
    assert await store.list("nothing-here") == []


async def test_list_prefix_isolation(store: ArtifactStore) -> None:
    await store.put_bytes("runs/a/inputs/x", b"a")
    await store.put_bytes("runs/ab/inputs/x", b"ab")
    assert [r.key for r in await store.list(keys.run_prefix("a"))] == ["runs/a/inputs/x"]
    assert [r.key for r in await store.list(keys.run_prefix("ab"))] == ["runs/ab/inputs/x"]
    # Without the slash it is a plain string prefix, as in S3.
    assert [r.key for r in await store.list("runs/a")] == ["runs/a/inputs/x", "runs/ab/inputs/x"]


@pytest.mark.parametrize("prefix", ["/", "/runs/", "../", "runs/../", "runs//", "a\\b"])
async def test_list_rejects_bad_prefixes(store: ArtifactStore, prefix: str) -> None:
    with pytest.raises(InvalidKeyError):
        await store.list(prefix)


async def test_delete_is_idempotent(store: ArtifactStore) -> None:
    ref = await store.put_bytes("runs/r1/inputs/x", b"x")
    keep = await store.put_bytes("runs/r1/inputs/y", b"y")
    await store.delete(ref.key)
    assert await store.stat(ref.key) is None
    with pytest.raises(ArtifactNotFoundError):
        await store.get_bytes(ref)
    await store.delete(ref.key)  # again: no error
    await store.delete("runs/r1/inputs/never-existed")
    assert [r.key for r in await store.list("runs/")] == [keep.key]
    again = await store.put_bytes(ref.key, b"x")  # the key can be used again
    assert again == ref


async def test_put_if_absent_keeps_the_first_bytes(store: ArtifactStore) -> None:
    key = keys.execution_claim_key("wf-1/act-1")
    first = await store.put_if_absent(key, b"first", content_type="application/json")
    assert first is not None
    assert first.content_type == "application/json"
    assert first.sha256 == hashlib.sha256(b"first").hexdigest()
    assert await store.put_if_absent(key, b"second") is None
    assert await store.stat(key) == first
    assert await store.get_bytes(first) == b"first"
    await store.put_bytes("plain", b"exists")
    assert await store.put_if_absent("plain", b"new") is None


async def test_concurrent_put_if_absent_has_exactly_one_winner(store: ArtifactStore) -> None:
    for round_ in range(3):
        key = keys.execution_claim_key(f"wf-{round_}/act")
        results = await asyncio.gather(
            *(store.put_if_absent(key, f"claimant {n}".encode()) for n in range(10))
        )
        winners = [ref for ref in results if ref is not None]
        assert len(winners) == 1, results
        assert await store.stat(key) == winners[0]
        assert await store.get_bytes(winners[0]) == f"claimant {results.index(winners[0])}".encode()


async def test_put_file_get_file_streams_a_large_file(store: ArtifactStore, tmp_path: Path) -> None:
    source = tmp_path / "big.bin"
    block = os.urandom(CHUNK)
    with source.open("wb") as out:
        for n in range(20):
            out.write(block[n:] + block[:n])  # 20 MiB, no two chunks alike
        out.write(b"tail")
    expected = sha256_of_file(source)
    ref = await store.put_file("runs/r1/inputs/big.bin", str(source), content_type="x/big")
    assert (ref.size, ref.sha256, ref.content_type) == (20 * CHUNK + 4, expected, "x/big")
    assert await store.stat(ref.key) == ref
    target = tmp_path / "down" / "big.bin"
    await store.get_file(ref, str(target))
    assert filecmp.cmp(source, target, shallow=False)


async def test_put_file_missing_source(store: ArtifactStore, tmp_path: Path) -> None:
    with pytest.raises(StorageError):
        await store.put_file("runs/r1/inputs/x", str(tmp_path / "no-such-file"))
    assert await store.stat("runs/r1/inputs/x") is None


async def test_stream_yields_bounded_chunks(store: ArtifactStore) -> None:
    data = os.urandom(3 * CHUNK + 5)
    ref = await store.put_bytes("runs/r1/transcript/00000001.json", data)
    chunks = await read_stream(store, ref)
    assert b"".join(chunks) == data
    assert len(chunks) >= 4
    assert all(0 < len(chunk) <= CHUNK for chunk in chunks)


async def test_stream_can_be_abandoned(store: ArtifactStore) -> None:
    ref = await store.put_bytes("runs/r1/inputs/x", os.urandom(2 * CHUNK + 1))
    async with contextlib.aclosing(store.stream(ref)) as chunks:
        first = await anext(chunks)
    assert len(first) <= CHUNK
    assert await store.get_bytes(ref)  # nothing left open or locked


async def test_empty_artifact(store: ArtifactStore, tmp_path: Path) -> None:
    empty_sha = hashlib.sha256(b"").hexdigest()
    ref = await store.put_bytes("runs/r1/inputs/empty", b"")
    assert (ref.size, ref.sha256) == (0, empty_sha)
    assert await store.stat(ref.key) == ref
    assert await store.get_bytes(ref) == b""
    assert await read_stream(store, ref) == []
    source = tmp_path / "empty-source"
    source.write_bytes(b"")
    from_file = await store.put_file("runs/r1/inputs/empty2", str(source))
    assert (from_file.size, from_file.sha256) == (0, empty_sha)
    await store.get_file(from_file, str(tmp_path / "empty-copy"))
    assert (tmp_path / "empty-copy").read_bytes() == b""
    claimed = await store.put_if_absent("runs/r1/inputs/empty3", b"")
    assert claimed is not None
    assert claimed.size == 0


async def test_nested_keys(store: ArtifactStore) -> None:
    exec_id = "wf-9/activity-12"
    deep = keys.execution_output_key("r9", exec_id, "reports/2024/q1/summary.md")
    log = keys.execution_log_key("r9", exec_id, "stdout")
    ref = await store.put_bytes(deep, b"# Q1", content_type="text/markdown")
    log_ref = await store.put_bytes(log, b"done\n", content_type="text/plain")
    assert await store.get_bytes(ref) == b"# Q1"
    listed = await store.list(keys.run_prefix("r9"))
    assert listed == sorted([ref, log_ref], key=lambda r: r.key)
    outputs = f"runs/r9/executions/{keys.execution_digest(exec_id)}/outputs/"
    assert [r.key for r in await store.list(outputs)] == [deep]


@pytest.mark.parametrize("key", ["../escape", "/abs/key", "a//b", "a/./b", "a\\b", "a\x00b", ""])
async def test_invalid_keys_are_refused(store: ArtifactStore, key: str) -> None:
    with pytest.raises(InvalidKeyError):
        await store.put_bytes(key, b"x")
    with pytest.raises(InvalidKeyError):
        await store.put_if_absent(key, b"x")
    with pytest.raises(InvalidKeyError):
        await store.stat(key)
    with pytest.raises(InvalidKeyError):
        await store.delete(key)


async def test_a_transcript_reads_back_the_newest_record_of_each_seq(store: ArtifactStore) -> None:
    # The local store keeps it as one record log, S3 as an object a record: the same answers.
    recorder = TranscriptRecorder(store)
    for seq in range(5):
        await recorder.store_message("t1", seq, Message(role="user", text=f"message {seq}"))
    await recorder.store_message("t1", 2, Message(role="user", text="the step ran again"))

    fresh = TranscriptRecorder(store)  # another worker: nothing in its cache
    assert [(await fresh.load("t1", seq)).message.text for seq in range(5)] == [
        "message 0",
        "message 1",
        "the step ran again",
        "message 3",
        "message 4",
    ]
    assert await read_transcript_record(store, "t1", 5) is None
    assert await read_transcript_record(store, "t2", 0) is None
    listed = [ref.key for ref in await store.list(keys.run_prefix("t1"))]
    if isinstance(store, RecordLogStore):  # one log, never a key
        assert listed == []
    else:  # an object a record
        assert listed == [keys.transcript_key("t1", seq) for seq in range(5)]
