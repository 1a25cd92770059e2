"""Write-behind durability in the local store: a write inside ``deferred_durability`` is
published at once and fsynced (file and folder) in the background, ``flush`` waits for all of
them and reports a disk that failed; every other write is on disk before it returns.

``os.fsync`` is watched (the paths it was called on, read back from ``/proc/self/fd``), so what
is checked is which files reached the disk and when, on a real store in a temporary folder.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillweave.errors import StorageError
from skillweave.storage.local import LocalArtifactStore, WriteBehind, deferred_durability


class _Fsyncs:
    """The paths ``os.fsync`` was called on; paused while `gate` is clear; failing with
    `error` when set."""

    def __init__(self) -> None:
        self.paths: list[Path] = []
        self.gate = threading.Event()
        self.gate.set()
        self.error: OSError | None = None

    def __call__(self, fd: int) -> None:
        self.gate.wait(timeout=10)
        if self.error is not None:
            raise self.error
        self.paths.append(Path(os.readlink(f"/proc/self/fd/{fd}")))

    def files_in(self, folder: Path) -> int:
        """How many fsyncs were of files in `folder`."""
        return sum(path.parent == folder for path in self.paths)


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Fsyncs]:
    watched = _Fsyncs()
    monkeypatch.setattr(os, "fsync", watched)
    yield watched
    watched.gate.set()


async def test_a_write_outside_the_context_is_on_disk_when_it_returns(
    tmp_path: Path, fsyncs: _Fsyncs
) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    await store.put_bytes("runs/r1/transcript/00000000.json", b"{}")
    folder = store.root / "runs" / "r1" / "transcript"
    assert fsyncs.files_in(folder) == 1  # the data, before it was renamed onto its key
    assert folder in fsyncs.paths


async def test_a_deferred_write_is_published_at_once_and_on_disk_after_flush(
    tmp_path: Path, fsyncs: _Fsyncs
) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    behind = WriteBehind()
    fsyncs.gate.clear()  # the disk is slow: the write must not wait for it
    with deferred_durability(behind):
        ref = await asyncio.wait_for(
            store.put_bytes("runs/r1/transcript/00000000.json", b'{"a": 1}'), timeout=5
        )
    assert await store.get_bytes(ref) == b'{"a": 1}'  # every reader sees it already
    data = store.root / "runs" / "r1" / "transcript" / "00000000.json"
    assert data not in fsyncs.paths
    assert not behind.settled
    flushing = asyncio.create_task(behind.flush())
    await asyncio.sleep(0.05)
    assert not flushing.done()  # flush waits for the disk
    fsyncs.gate.set()
    await asyncio.wait_for(flushing, timeout=5)
    assert behind.settled
    assert data in fsyncs.paths
    assert data.parent in fsyncs.paths


async def test_writes_after_the_context_wait_for_the_disk_again(
    tmp_path: Path, fsyncs: _Fsyncs
) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    with deferred_durability(WriteBehind()):
        pass
    await store.put_bytes("runs/r1/result.json", b"{}")
    assert fsyncs.files_in(store.root / "runs" / "r1") == 1


async def test_a_disk_that_fails_is_reported_by_flush(tmp_path: Path, fsyncs: _Fsyncs) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    behind = WriteBehind()
    fsyncs.error = OSError(5, "Input/output error")
    with deferred_durability(behind):
        await store.put_bytes("runs/r1/transcript/00000000.json", b"{}")
    with pytest.raises(StorageError, match="cannot make a written file durable: Input/output"):
        await asyncio.wait_for(behind.flush(), timeout=5)


async def test_many_deferred_writes_all_reach_the_disk(tmp_path: Path, fsyncs: _Fsyncs) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    behind = WriteBehind()
    with deferred_durability(behind):
        for seq in range(30):
            await store.put_bytes(f"runs/r1/transcript/{seq:08d}.json", b"{}")
    await asyncio.wait_for(behind.flush(), timeout=10)
    folder = store.root / "runs" / "r1" / "transcript"
    assert {folder / f"{seq:08d}.json" for seq in range(30)} <= set(fsyncs.paths)


async def test_a_store_without_fsync_hands_nothing_behind(tmp_path: Path, fsyncs: _Fsyncs) -> None:
    store = LocalArtifactStore(tmp_path / "store", fsync=False)
    behind = WriteBehind()
    with deferred_durability(behind):
        await store.put_bytes("runs/r1/transcript/00000000.json", b"{}")
    await behind.flush()
    assert fsyncs.paths == []
