"""The local store's record logs: a run's transcript records appended to one file."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from pathlib import Path

import pytest

from skillweave.engines import TranscriptRecord, read_transcript_record
from skillweave.engines.transcript import TranscriptRecorder
from skillweave.errors import ArtifactNotFoundError, InvalidKeyError
from skillweave.llm import Message
from skillweave.storage import LocalArtifactStore, WriteBehind, deferred_durability, keys
from skillweave.storage._local_record_logs import frame, read_log

LOG = "runs/r1/transcript"


def _record(text: str) -> bytes:
    return TranscriptRecord(message=Message(role="user", text=text)).model_dump_json().encode()


async def test_records_are_read_back_by_seq_from_one_file(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    for seq in range(50):
        await store.append_record(LOG, seq, _record(f"message {seq}"))

    assert await store.read_record(LOG, 7) == _record("message 7")
    assert await store.read_record(LOG, 49) == _record("message 49")
    assert await store.read_record(LOG, 50) is None
    assert await store.read_record("runs/r2/transcript", 0) is None  # no log at all
    # Fifty records, one file: no file (no inode) a record.
    assert os.listdir(store.root / "runs" / "r1") == [".sw-log-transcript"]


async def test_records_appended_together_are_one_write_and_each_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    await store.append_record(LOG, 0, _record("alone"))
    flushes: list[int] = []
    real_fdatasync = os.fdatasync
    monkeypatch.setattr(os, "fdatasync", lambda fd: (flushes.append(fd), real_fdatasync(fd)))

    await store.append_records(LOG, [(1, _record("one")), (2, _record("two")), (3, _record("3"))])

    assert len(flushes) == 1  # one flush for the three
    assert [await store.read_record(LOG, seq) for seq in range(4)] == [
        _record("alone"),
        _record("one"),
        _record("two"),
        _record("3"),
    ]
    await store.append_records(LOG, [])  # nothing to append: no write, no flush
    assert len(flushes) == 1


async def test_a_batch_a_crash_cut_short_keeps_its_whole_frames(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    batch = frame(0, _record("whole")) + frame(1, _record("cut short"))
    path = store.log_path(LOG)
    path.parent.mkdir(parents=True)
    path.write_bytes(batch[: len(batch) - 10])  # the crash, in the second frame

    assert await store.read_record(LOG, 0) == _record("whole")
    assert await store.read_record(LOG, 1) is None
    await store.append_records(LOG, [(1, _record("again")), (2, _record("next"))])
    assert read_log(path) == {0: _record("whole"), 1: _record("again"), 2: _record("next")}


async def test_the_newest_record_of_a_seq_wins_even_once_read(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    await store.append_record(LOG, 3, _record("first try"))
    assert await store.read_record(LOG, 3) == _record("first try")  # indexed now

    await store.append_record(LOG, 3, _record("the retry"))  # the step ran again
    assert await store.read_record(LOG, 3) == _record("the retry")
    assert await LocalArtifactStore(tmp_path / "store").read_record(LOG, 3) == _record("the retry")


async def test_a_frame_a_crash_cut_short_is_skipped_and_the_next_writers_frames_are_read(
    tmp_path: Path,
) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    await store.append_record(LOG, 0, _record("before the crash"))
    path = store.log_path(LOG)
    with open(path, "ab") as log:  # the crash: half a frame, never finished
        log.write(frame(1, _record("cut short"))[:30])
    assert await store.read_record(LOG, 1) is None

    await store.append_record(LOG, 1, _record("written again"))
    await store.append_record(LOG, 2, _record("after it"))

    assert await store.read_record(LOG, 0) == _record("before the crash")
    assert await store.read_record(LOG, 1) == _record("written again")
    assert await store.read_record(LOG, 2) == _record("after it")
    fresh = LocalArtifactStore(tmp_path / "store")  # a reader that never saw it whole
    assert await fresh.read_record(LOG, 1) == _record("written again")
    assert read_log(path) == {
        0: _record("before the crash"),
        1: _record("written again"),
        2: _record("after it"),
    }


async def test_a_frame_still_being_written_is_read_once_it_is_whole(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    await store.append_record(LOG, 0, _record("done"))
    whole = frame(1, _record("on its way"))
    with open(store.log_path(LOG), "ab", buffering=0) as log:
        log.write(whole[:2])  # not even its magic yet
        assert await store.read_record(LOG, 1) is None
        log.write(whole[2:60])
        assert await store.read_record(LOG, 1) is None
        log.write(whole[60:])
    assert await store.read_record(LOG, 1) == _record("on its way")
    assert await store.read_record(LOG, 0) == _record("done")


async def test_a_damaged_frame_is_never_read(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    for seq in range(3):
        await store.append_record(LOG, seq, _record(f"message {seq}"))
    path = store.log_path(LOG)
    data = bytearray(path.read_bytes())
    middle = data.index(b"message 1")
    data[middle] ^= 0x01  # a bit flipped on the disk
    path.write_bytes(bytes(data))

    fresh = LocalArtifactStore(tmp_path / "store")
    assert await fresh.read_record(LOG, 1) is None
    assert await fresh.read_record(LOG, 0) == _record("message 0")
    assert await fresh.read_record(LOG, 2) == _record("message 2")

    # Damaged after it was indexed, in place: indexed again, and still never read.
    indexed = LocalArtifactStore(tmp_path / "other")
    await indexed.append_record(LOG, 0, _record("message 0"))
    assert await indexed.read_record(LOG, 0) == _record("message 0")
    other = indexed.log_path(LOG)
    changed = bytearray(other.read_bytes())
    changed[changed.index(b"message 0")] ^= 0x01
    with open(other, "r+b") as log:  # same file, same size: written in place
        log.write(changed)
    assert await indexed.read_record(LOG, 0) is None


async def test_a_log_replaced_by_another_file_is_indexed_again(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    await store.append_record(LOG, 0, _record("old"))
    assert await store.read_record(LOG, 0) == _record("old")
    store.log_path(LOG).unlink()
    await store.append_record(LOG, 1, _record("new"))
    assert await store.read_record(LOG, 0) is None
    assert await store.read_record(LOG, 1) == _record("new")


async def test_a_log_is_never_a_key(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    await store.append_record(LOG, 0, _record("hidden"))
    await store.put_bytes("runs/r1/run.json", b"{}")

    assert [ref.key for ref in await store.list("runs/")] == ["runs/r1/run.json"]
    with pytest.raises(InvalidKeyError, match="reserved"):
        await store.put_bytes("runs/r1/.sw-log-transcript", b"overwritten")
    with pytest.raises(InvalidKeyError, match="reserved"):
        await store.stat("runs/r1/.sw-log-transcript")
    with pytest.raises(InvalidKeyError):
        await store.append_record("transcript", 0, b"{}")  # a log lives in a folder
    with pytest.raises(InvalidKeyError):
        await store.append_record("runs/../../etc/transcript", 0, b"{}")


def _append_many(root: str, writer: int, count: int) -> None:
    async def append() -> None:
        store = LocalArtifactStore(Path(root))
        for n in range(count):
            await store.append_record(LOG, writer * count + n, _record(f"{writer}:{n} " * 50))

    asyncio.run(append())


async def test_appends_from_many_processes_at_once_never_interleave(tmp_path: Path) -> None:
    root = str(tmp_path / "store")
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_append_many, args=(root, w, 150)) for w in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(120)
        assert writer.exitcode == 0

    found = read_log(LocalArtifactStore(Path(root)).log_path(LOG))
    assert sorted(found) == list(range(600))
    for writer in range(4):
        assert found[writer * 150 + 7] == _record(f"{writer}:7 " * 50)


class _Syncs:
    def __init__(self) -> None:
        self.data: list[str] = []
        self.full: list[str] = []


@pytest.fixture
def syncs(monkeypatch: pytest.MonkeyPatch) -> _Syncs:
    seen = _Syncs()
    real_fdatasync, real_fsync = os.fdatasync, os.fsync

    def fdatasync(fd: int) -> None:
        seen.data.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fdatasync(fd)

    def fsync(fd: int) -> None:
        seen.full.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fdatasync", fdatasync)
    monkeypatch.setattr(os, "fsync", fsync)
    return seen


async def test_an_append_is_on_disk_when_it_returns(tmp_path: Path, syncs: _Syncs) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    await store.append_record(LOG, 0, _record("first"))
    path = str(store.log_path(LOG))
    folder = str(store.log_path(LOG).parent)
    assert syncs.data == [path]
    assert folder in syncs.full  # it made the file: its name is on disk too

    syncs.full.clear()
    await store.append_record(LOG, 1, _record("second"))
    assert syncs.data == [path, path]
    assert folder not in syncs.full  # the name was there already


async def test_a_deferred_append_is_read_at_once_and_on_disk_after_flush(
    tmp_path: Path, syncs: _Syncs
) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    behind = WriteBehind()
    with deferred_durability(behind):
        await store.append_record(LOG, 0, _record("quick"))
    assert syncs.data == []
    assert await store.read_record(LOG, 0) == _record("quick")
    await behind.flush()
    assert str(store.log_path(LOG)) in syncs.full


async def test_a_store_without_fsync_syncs_nothing(tmp_path: Path, syncs: _Syncs) -> None:
    store = LocalArtifactStore(tmp_path / "store", fsync=False)
    await store.append_record(LOG, 0, _record("x"))
    assert syncs.data == syncs.full == []


async def test_the_transcript_goes_to_the_log_and_reads_an_earlier_releases_objects(
    tmp_path: Path,
) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    # Records 0 and 1 as an earlier release stored them: an object each.
    for seq in (0, 1):
        await store.put_bytes(keys.transcript_key("r1", seq), _record(f"object {seq}"))
    recorder = TranscriptRecorder(store)
    await recorder.store_message("r1", 2, Message(role="user", text="in the log"))
    await recorder.store_message("r1", 1, Message(role="user", text="run again"))

    assert await read_transcript_record(store, "r1", 2) == _record("in the log")
    assert await read_transcript_record(store, "r1", 1) == _record(
        "run again"
    )  # the log's is newer
    assert await read_transcript_record(store, "r1", 0) == _record("object 0")
    fresh = TranscriptRecorder(store)
    assert (await fresh.load("r1", 0)).message.text == "object 0"
    assert (await fresh.load("r1", 1)).message.text == "run again"
    with pytest.raises(ArtifactNotFoundError):
        await fresh.load("r1", 3)
    assert (await recorder.load("r1", 1)).message.text == "run again"  # its cache, too
