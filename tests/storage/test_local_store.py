"""LocalArtifactStore: the shared store suite, plus what only a directory can get wrong."""

from __future__ import annotations

import asyncio
import hashlib
import multiprocessing
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from skillweave.errors import InvalidKeyError, StorageError
from skillweave.storage import ArtifactRef, LocalArtifactStore, _local_files, keys
from skillweave.storage import local as local_module
from tests.storage.store_suite import *  # noqa: F403 - the shared suite runs here
from tests.storage.store_suite import Corrupt


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def store(root: Path) -> LocalArtifactStore:
    return LocalArtifactStore(root)


@pytest.fixture
def corrupt(root: Path) -> Corrupt:
    async def edit_in_place(key: str, data: bytes) -> None:
        with (root / key).open("r+b") as handle:
            handle.write(data)
            handle.truncate()

    return edit_in_place


# -- escaping the root -------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["../outside", "a/../../outside", "/tmp/outside", "..\\outside"])
async def test_crafted_keys_cannot_escape_the_root(
    store: LocalArtifactStore, root: Path, key: str
) -> None:
    with pytest.raises(InvalidKeyError):
        await store.put_bytes(key, b"x")
    assert not (root.parent / "outside").exists()


async def test_symlinks_cannot_lead_outside_the_root(
    store: LocalArtifactStore, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(b"do not read")
    await store.put_bytes("runs/r1/inputs/ok", b"fine")
    (root / "runs" / "r1" / "link").symlink_to(outside, target_is_directory=True)
    (root / "runs" / "r1" / "inputs" / "file-link").symlink_to(outside / "secret")

    with pytest.raises(InvalidKeyError, match="outside"):
        await store.put_bytes("runs/r1/link/planted", b"x")
    assert not (outside / "planted").exists()
    with pytest.raises(InvalidKeyError, match="outside"):
        await store.stat("runs/r1/link/secret")
    with pytest.raises(InvalidKeyError, match="outside"):
        await store.get_bytes(ref_of("runs/r1/inputs/file-link", b"do not read"))
    assert [r.key for r in await store.list("runs/")] == ["runs/r1/inputs/ok"]


def ref_of(key: str, data: bytes) -> ArtifactRef:
    return ArtifactRef(key=key, size=len(data), sha256=hashlib.sha256(data).hexdigest())


@pytest.mark.parametrize("key", [".meta/x", ".meta", "runs/r1/.sw-tmp-123", ".sw-tmp-x/y"])
async def test_reserved_names_are_refused(store: LocalArtifactStore, key: str) -> None:
    with pytest.raises(InvalidKeyError, match="reserved"):
        await store.put_bytes(key, b"x")


async def test_list_does_not_show_metadata(store: LocalArtifactStore) -> None:
    await store.put_bytes("a", b"1")
    assert [r.key for r in await store.list("")] == ["a"]
    assert await store.list(".meta/") == []


# -- interrupted and half-finished writes -------------------------------------------------------


async def test_a_crashed_write_leaves_no_visible_artifact(
    store: LocalArtifactStore, root: Path
) -> None:
    await store.put_bytes("runs/r1/inputs/keep", b"keep")
    # What a process killed mid-write leaves behind: a temp file that was never renamed.
    leftover = root / "runs" / "r1" / "inputs" / f"{_local_files.TEMP_PREFIX}deadbeef"
    leftover.write_bytes(b"half of somethi")
    assert await store.stat("runs/r1/inputs/new") is None
    assert [r.key for r in await store.list("")] == ["runs/r1/inputs/keep"]
    assert [r.key for r in await store.list("runs/r1/inputs/")] == ["runs/r1/inputs/keep"]


async def test_a_failed_rename_publishes_nothing_and_cleans_up(
    store: LocalArtifactStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = await store.put_bytes("runs/r1/inputs/x", b"old")

    def broken_replace(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(local_module.os, "replace", broken_replace)
    with pytest.raises(StorageError) as caught:
        await store.put_bytes("runs/r1/inputs/x", b"new bytes")
    assert caught.value.code == "ENOSPC"
    with pytest.raises(StorageError):
        await store.put_bytes("runs/r1/inputs/y", b"new")
    monkeypatch.undo()

    assert await store.stat("runs/r1/inputs/x") == old
    assert await store.get_bytes(old) == b"old"
    assert await store.stat("runs/r1/inputs/y") is None
    leftovers = [p.name for p in root.rglob("*") if p.name.startswith(_local_files.TEMP_PREFIX)]
    assert leftovers == []


async def test_stat_without_sidecar_hashes_the_data(store: LocalArtifactStore, root: Path) -> None:
    """A crash between the data rename and the sidecar write loses only the content type."""
    ref = await store.put_bytes("runs/r1/inputs/x", b"payload", content_type="text/plain")
    assert await store.stat(ref.key) == ref  # the sidecar is written by then
    (root / _local_files.META_DIR / "runs" / "r1" / "inputs" / "x").unlink()
    found = await store.stat(ref.key)
    assert found == ref.model_copy(update={"content_type": "application/octet-stream"})
    assert await store.get_bytes(ref) == b"payload"


async def test_a_failed_sidecar_write_does_not_undo_a_won_claim(
    store: LocalArtifactStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_space(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store._sidecars, "write", no_space)
    won = await store.put_if_absent("claims/x", b"mine", content_type="text/plain")
    assert won is not None
    assert await store.put_if_absent("claims/x", b"theirs") is None
    monkeypatch.undo()
    found = await store.stat("claims/x")
    assert found == won.model_copy(update={"content_type": "application/octet-stream"})


async def test_stat_sees_a_file_replaced_behind_its_back(
    store: LocalArtifactStore, root: Path
) -> None:
    ref = await store.put_bytes("runs/r1/inputs/x", b"payload", content_type="text/plain")
    fresh = root / "runs" / "r1" / "inputs" / "fresh"
    fresh.write_bytes(b"PAYLOAD")
    os.replace(fresh, root / ref.key)  # new inode: the sidecar's fingerprint no longer matches
    found = await store.stat(ref.key)
    assert found is not None
    assert found.sha256 == hashlib.sha256(b"PAYLOAD").hexdigest()
    assert found.content_type == "text/plain"


async def test_key_conflicts_with_prefixes_are_storage_errors(store: LocalArtifactStore) -> None:
    await store.put_bytes("a/b", b"file")
    with pytest.raises(StorageError, match="parent"):
        await store.put_bytes("a/b/c", b"x")
    await store.put_bytes("d/e/f", b"x")
    with pytest.raises(StorageError, match="prefix"):
        await store.put_bytes("d/e", b"x")
    with pytest.raises(StorageError, match="prefix"):
        await store.put_if_absent("d/e", b"x")
    assert await store.stat("d/e") is None


# -- put_if_absent across processes ------------------------------------------------------------


def _claim_all(root: str, names: list[str], start_at: float) -> list[str]:
    """Claim every name in order, starting at the same wall-clock instant as the other workers
    so that they contend for the same key at the same time."""

    async def claim() -> list[str]:
        store = LocalArtifactStore(Path(root), fsync=False)
        await asyncio.sleep(max(0.0, start_at - time.time()))
        won = []
        for name in names:
            if await store.put_if_absent(name, str(os.getpid()).encode()) is not None:
                won.append(name)
        return won

    return asyncio.run(claim())


async def test_put_if_absent_is_atomic_across_processes(root: Path) -> None:
    workers = 4
    names = [keys.execution_claim_key(f"wf/{n}") for n in range(300)]
    context = multiprocessing.get_context("spawn")
    with context.Pool(workers) as pool:
        start_at = time.time() + 1.0  # after the spawned interpreters have imported everything
        results = pool.starmap(_claim_all, [(str(root), names, start_at)] * workers)
    won = [name for result in results for name in result]
    assert sorted(won) == sorted(names)  # every key claimed exactly once


def test_repr_and_root(root: Path) -> None:
    store = LocalArtifactStore(root)
    assert store.root == root.resolve()
    assert str(root.resolve()) in repr(store)
    assert not root.exists()  # nothing is created before the first write


async def test_a_put_returns_once_its_data_is_published_and_stat_waits_for_the_sidecar(
    store: LocalArtifactStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sidecar is written after the caller has its ref; this store's own stat, list and
    delete of the key wait for it, so they see the content type."""
    release = threading.Event()
    write_meta = store._sidecars.write

    def slow_meta(*args: Any) -> None:
        release.wait(10)
        write_meta(*args)

    monkeypatch.setattr(store._sidecars, "write", slow_meta)
    ref = await asyncio.wait_for(
        store.put_bytes("runs/r1/outputs/a.csv", b"a,b\n", content_type="text/csv"), 5
    )
    assert (root / "runs" / "r1" / "outputs" / "a.csv").read_bytes() == b"a,b\n"
    assert not (root / _local_files.META_DIR / "runs" / "r1" / "outputs" / "a.csv").exists()

    stat = asyncio.ensure_future(store.stat(ref.key))
    listed = asyncio.ensure_future(store.list("runs/r1/"))
    await asyncio.sleep(0.05)
    assert not stat.done()
    assert not listed.done()
    release.set()
    assert await stat == ref
    assert await listed == [ref]
    await store.aclose()
