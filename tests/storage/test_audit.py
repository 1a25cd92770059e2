"""The audit log on the local store: the shared suite (tests/storage/audit_suite.py), writers
in separate processes, what an append costs, a store that fails or answers late, callers
cancelled and loops closed mid-write, listings that race appends, entries refused, the keys,
and the throughput of one busy writer.

The same suite runs on S3 in tests/integration/storage/test_s3_audit.py."""

from __future__ import annotations

import asyncio
import gc
import logging
import multiprocessing
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from skillweave.config import AuditSettings
from skillweave.errors import InvalidKeyError, StorageError
from skillweave.storage import ArtifactRef, LocalArtifactStore, keys
from skillweave.storage.audit import (
    CHECKPOINTS,
    MAX_DETAILS_BYTES,
    AuditEntry,
    AuditLog,
    AuditLogError,
    args_digest,
)
from tests.storage.audit_suite import *  # noqa: F403 - the shared suite runs here
from tests.storage.audit_suite import KEY, chain_keys, found, ordered


@pytest.fixture
def store(tmp_path: Path) -> LocalArtifactStore:
    return LocalArtifactStore(tmp_path / "store", fsync=False)


class Store(LocalArtifactStore):
    """The local store, counting calls, failing, delaying or holding writes on demand."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, fsync=False)
        self.calls = 0
        self.block_writes = 0
        self.fail_blocks = 0
        """Block writes still to fail (before anything is stored)."""
        self.lose_replies = 0
        """Block writes still to store and then fail, as a reply lost on the way back does."""
        self.fail_checkpoints = False
        self.hold_checkpoints: asyncio.Event | None = None
        """While set to an unset event, checkpoint writes wait for it."""
        self.delay = 0.0
        self.hold: asyncio.Event | None = None
        """While set to an unset event, block writes wait for it."""
        self.holding = asyncio.Event()

    async def put_if_absent(
        self, key: str, data: bytes, *, content_type: str = "application/octet-stream"
    ) -> ArtifactRef | None:
        self.calls += 1
        if key.startswith(keys.AUDIT_CHECKPOINTS_PREFIX) and self.fail_checkpoints:
            raise StorageError("the bucket refuses writes", key=key, code="AccessDenied")
        if key.startswith(keys.AUDIT_CHECKPOINTS_PREFIX) and self.hold_checkpoints is not None:
            await self.hold_checkpoints.wait()
        if key.startswith(keys.AUDIT_CHAINS_PREFIX):
            self.block_writes += 1
            if self.hold is not None:
                self.holding.set()
                await self.hold.wait()
            await asyncio.sleep(self.delay)
            if self.fail_blocks:
                self.fail_blocks -= 1
                raise StorageError("the disk is full", key=key, code="ENOSPC")
            if self.lose_replies:
                self.lose_replies -= 1
                await super().put_if_absent(key, data, content_type=content_type)
                raise StorageError("the connection was reset", key=key)
        return await super().put_if_absent(key, data, content_type=content_type)

    async def put_bytes(
        self, key: str, data: bytes, *, content_type: str = "application/octet-stream"
    ) -> ArtifactRef:
        self.calls += 1
        return await super().put_bytes(key, data, content_type=content_type)

    async def stat(self, key: str) -> ArtifactRef | None:
        self.calls += 1
        return await super().stat(key)

    async def get_bytes(self, ref: ArtifactRef) -> bytes:
        self.calls += 1
        return await super().get_bytes(ref)


# -- separate processes ------------------------------------------------------------------------


def _append_all(root: str, writer: int, count: int, start_at: float) -> None:
    """Append `count` records from a process of its own, starting at the same instant as the
    other writers, then close the log (its last checkpoint)."""

    async def append() -> None:
        log = AuditLog(LocalArtifactStore(Path(root), fsync=False), key=KEY, actor=f"p{writer}")
        await asyncio.sleep(max(0.0, start_at - time.time()))
        for n in range(count):
            await log.record("execution", skill="report", event_id=f"{writer}-{n}")
        await log.aclose()

    asyncio.run(append())


async def test_writers_in_separate_processes_all_land_and_verify(tmp_path: Path) -> None:
    root, writers, each = tmp_path / "shared", 4, 25
    context = multiprocessing.get_context("spawn")
    with context.Pool(writers) as pool:
        start_at = time.time() + 1.0  # after the spawned interpreters have imported everything
        await asyncio.to_thread(
            pool.starmap, _append_all, [(str(root), w, each, start_at) for w in range(writers)]
        )
    log = AuditLog(LocalArtifactStore(root, fsync=False), key=KEY)
    report = await log.verify()
    assert report.intact, report.problems
    assert (report.records, report.writers, report.unanchored) == (writers * each, writers, 0)
    ids = [record.details["event_id"] async for record in log.read()]
    assert sorted(ids) == sorted(f"{w}-{n}" for w in range(writers) for n in range(each))


# -- what an append costs ----------------------------------------------------------------------


class NoListing(Store):
    async def list(self, prefix: str) -> list[ArtifactRef]:
        raise AssertionError("appends never list the log")


async def test_an_append_is_one_write_and_a_new_writer_finds_the_head_in_log_time(
    tmp_path: Path,
) -> None:
    store = NoListing(tmp_path / "store")
    log = AuditLog(store, key=KEY, checkpoint_seconds=3600)
    costs = []
    for n in range(30):
        store.calls = 0
        await log.record("activation", skill="report", n=n)
        costs.append(store.calls)
    assert costs[0] == 3  # the block, a look for checkpoint 1, checkpoint 1
    assert set(costs[1:]) == {1}  # the block: nothing else until the next checkpoint
    busy = AuditLog(store, key=KEY, checkpoint_seconds=0)
    for n in range(200):
        await busy.record("activation", skill="report", n=n)
        await busy.aclose()  # its checkpoint is written aside: wait for it, one per record
    assert await store.stat(keys.audit_checkpoint_key(201)) is not None
    store.calls = 0
    await AuditLog(store, key=KEY).record("activation", skill="report")  # a fresh process
    assert store.calls <= 24  # O(log n) stats for the newest of 201 checkpoints, not 201


async def test_a_checkpoint_in_flight_holds_no_append(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    log = AuditLog(store, key=KEY, checkpoint_seconds=0)
    await log.record("activation", skill="report", n=0)  # the first block's own checkpoint
    store.hold_checkpoints = asyncio.Event()  # every later checkpoint hangs until released
    for n in range(1, 6):  # each block goes through while a checkpoint waits on the store
        await asyncio.wait_for(log.record("activation", skill="report", n=n), timeout=30)
    report = await log.verify()
    assert (report.records, report.checkpoints, report.unanchored) == (6, 1, 5)
    store.hold_checkpoints.set()
    await log.aclose()
    report = await log.verify()
    assert report.intact, report.problems
    assert report.unanchored == 0


async def test_a_checkpoint_that_cannot_be_written_never_fails_an_append(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = Store(tmp_path / "store")
    store.fail_checkpoints = True
    log = AuditLog(store, key=KEY, checkpoint_seconds=0)
    with caplog.at_level(logging.WARNING, logger="skillweave.storage.audit"):
        for n in range(3):
            assert await log.record("activation", skill="report", n=n) is not None
        await log.aclose()
    assert f"checkpoint of writer {log.writer} not written: the bucket refuses" in caplog.text
    report = await log.verify()
    assert report.intact, report.problems
    assert (report.records, report.checkpoints, report.unanchored) == (3, 0, 3)
    store.fail_checkpoints = False
    await log.aclose()  # the next checkpoint anchors them
    assert (await log.verify()).unanchored == 0


# -- a store that fails --------------------------------------------------------------------------


async def test_a_failed_block_fails_its_callers_and_the_next_append_starts_a_new_chain(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "store")
    log = AuditLog(store, key=KEY, checkpoint_seconds=3600)
    await log.record("install", skill="report")  # anchored: the chain's first block
    await log.record("install", skill="report")  # not anchored yet
    old = log.writer
    store.fail_blocks = 10**6
    store.block_writes = 0
    outcomes = await asyncio.gather(
        *(log.record("execution", skill="report", n=n) for n in range(5)),
        return_exceptions=True,
    )
    assert all(isinstance(outcome, AuditLogError) for outcome in outcomes), outcomes
    assert str(outcomes[0]) == "cannot write 5 audit record(s) to the store: the disk is full"
    assert store.block_writes == 4  # one block, tried with the same bytes, then given up
    store.fail_blocks = 0
    again = await log.record("enable", skill="report")
    assert again is not None
    assert (again.writer, again.seq) == (log.writer, 1)
    assert log.writer != old  # the failed block may land late: its place is never reused
    report = await log.verify()
    assert report.intact, report.problems
    # The chain left behind was anchored with the new one's first block.
    assert (report.records, report.writers, report.checkpoints) == (3, 2, 3)
    assert report.unanchored == 0
    # A failure that passes within the tries is no failure.
    store.fail_blocks = 3
    assert await log.record("enable", skill="report") is not None


async def test_a_lost_reply_finds_its_own_block_stored(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    log = AuditLog(store, key=KEY)
    store.lose_replies = 1
    records = await asyncio.gather(*(log.record("scan", skill="report", n=n) for n in range(3)))
    assert [record.seq for record in records if record is not None] == [1, 2, 3]
    assert await chain_keys(store, log.writer) == [keys.audit_block_key(log.writer, 1)]
    assert await log.record("scan", skill="report") is not None  # the same chain goes on
    report = await log.verify()
    assert report.intact, report.problems
    assert (report.records, report.writers) == (4, 1)


# -- callers cancelled, loops closed -------------------------------------------------------------


async def test_a_cancelled_caller_writes_nothing_unless_its_block_was_taken(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "store")
    log = AuditLog(store, key=KEY, checkpoint_seconds=3600)
    await log.record("install", skill="report", n=0)
    store.hold = asyncio.Event()
    taken = asyncio.create_task(log.record("activation", skill="report", n=1))
    await store.holding.wait()  # its block is being written
    queued = [asyncio.create_task(log.record("activation", skill="report", n=n)) for n in (2, 3)]
    await asyncio.sleep(0)  # both wait in the queue for the next block
    taken.cancel()
    queued[0].cancel()
    store.hold.set()
    third = await queued[1]
    assert third is not None
    for task in (taken, queued[0]):
        with pytest.raises(asyncio.CancelledError):
            await task
    written = [record.details["n"] async for record in log.read()]
    assert written == [0, 1, 3]  # 1 was in the block being written; 2 never joined one
    assert third.seq == 3
    assert (await log.verify()).intact


def test_a_loop_closed_mid_write_loses_no_confirmed_record_and_waits_for_nothing(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "store")
    log = AuditLog(store, key=KEY, checkpoint_seconds=3600)

    async def leave_a_write_in_flight() -> None:
        store.delay = 30.0
        asyncio.create_task(log.record("install", skill="report", n=0))  # noqa: RUF006
        await asyncio.sleep(0.05)

    first = log.writer
    asyncio.run(leave_a_write_in_flight())  # cancels the caller and the writer on the way out
    store.delay = 0.0

    async def go_on() -> None:
        await log.record("install", skill="report", n=1)
        await log.aclose()

    asyncio.run(go_on())
    assert log.writer != first  # the cancelled write might have landed: never reuse its place

    # A loop closed without cancelling anything: the next loop does not wait for it either.
    loop = asyncio.new_event_loop()
    store.delay = 30.0
    pending = loop.create_task(log.record("install", skill="report", n=2))
    loop.run_until_complete(asyncio.sleep(0.05))
    loop.close()
    before = log.writer
    store.delay = 0.0
    asyncio.run(go_on())
    assert log.writer != before
    del pending
    gc.collect()  # the abandoned writer is closed now: it must not touch the chain
    asyncio.run(go_on())
    report = asyncio.run(log.verify())
    assert report.intact, report.problems
    confirmed = asyncio.run(_details(log))
    assert confirmed == [1, 1, 1]  # 0 and 2 were abandoned before their blocks landed


async def _details(log: AuditLog) -> list[object]:
    return [record.details["n"] async for record in log.read()]


# -- listings that race appends ------------------------------------------------------------------


class RacingListing(LocalArtifactStore):
    """Listings that passed some keys' places before those were written."""

    hidden: frozenset[str] = frozenset()

    async def list(self, prefix: str) -> list[ArtifactRef]:
        return [ref for ref in await super().list(prefix) if ref.key not in self.hidden]


async def test_a_listing_that_raced_appends_is_no_removal(tmp_path: Path) -> None:
    store = RacingListing(tmp_path / "store", fsync=False)
    log = AuditLog(store, key=KEY, checkpoint_seconds=0)
    for n in range(6):
        await log.record("activation", skill="report", n=n)
        await log.aclose()  # its checkpoint is written aside: wait for it, one per record
    writer = log.writer
    # Block 3 and checkpoint 2 missed in the middle; checkpoints 5 and 6 after the end, where
    # record 6 names checkpoint 5.
    store.hidden = frozenset(
        [keys.audit_block_key(writer, 3), *map(keys.audit_checkpoint_key, (2, 5, 6))]
    )
    report = await log.verify()
    assert report.intact, report.problems
    assert report.records == 6
    await store.delete(keys.audit_block_key(writer, 3))  # now they are gone for real
    await store.delete(keys.audit_checkpoint_key(2))
    for seq in (5, 6):
        await store.delete(keys.audit_checkpoint_key(seq))
    assert found(await log.verify()) == ordered(
        [("removed", writer, 3), ("removed", CHECKPOINTS, 2), ("removed", CHECKPOINTS, 5)]
    )


# -- entries refused -----------------------------------------------------------------------------


async def test_malformed_entries_are_refused_before_anything_is_written(
    store: LocalArtifactStore,
) -> None:
    log = AuditLog(store, key=KEY)
    with pytest.raises(AuditLogError, match=r"details are .* bytes"):
        await log.record("scan", skill="report", blob="x" * MAX_DETAILS_BYTES)
    with pytest.raises(AuditLogError, match="small JSON"):
        await log.record("scan", skill="report", when=object())  # type: ignore[arg-type]
    with pytest.raises(AuditLogError, match="not a valid audit entry: event"):
        await log.append(AuditEntry(event="deleted", skill="report"))  # type: ignore[arg-type]
    with pytest.raises(AuditLogError, match="not a valid audit entry: skill"):
        await log.record("scan", skill="")
    with pytest.raises(AuditLogError, match="not a valid audit entry: actor"):
        await log.record("scan", skill="report", actor="a" * 256)
    with pytest.raises(AuditLogError, match="sequence of strings"):
        await log.record("execution", skill="report", args="--all")  # type: ignore[arg-type]
    assert await store.list("") == []
    # One malformed entry among good ones fails alone.
    outcomes = await asyncio.gather(
        log.record("scan", skill="report"),
        log.record("scan", skill=""),
        log.record("scan", skill="report"),
        return_exceptions=True,
    )
    assert [type(outcome).__name__ for outcome in outcomes] == [
        "AuditRecord",
        "AuditEntryError",
        "AuditRecord",
    ]
    assert (await log.verify()).records == 2


async def test_a_disabled_log_writes_nothing(store: LocalArtifactStore) -> None:
    log = AuditLog.from_settings(AuditSettings(enabled=False), store)
    assert not log.enabled
    assert await log.record("install", skill="report") is None
    await log.aclose()
    assert await store.list("") == []
    assert (await log.verify()).intact


def test_from_settings_takes_the_key() -> None:
    log = AuditLog.from_settings(AuditSettings(key=SecretStr("k")), store=None)  # type: ignore[arg-type]
    assert log.keyed
    assert log.enabled
    assert not AuditLog.from_settings(AuditSettings(), store=None).keyed  # type: ignore[arg-type]


async def test_args_digest_hides_the_arguments(store: LocalArtifactStore) -> None:
    plain = args_digest(["--token", "s3cret"])
    keyed = args_digest(["--token", "s3cret"], key=KEY)
    assert len(plain) == len(keyed) == 64
    assert plain != keyed
    assert args_digest(["--token", "s3cret"]) == plain
    assert args_digest(["--token s3cret"]) != plain  # the split between arguments counts
    with pytest.raises(AuditLogError):
        args_digest("--token s3cret")
    record = await AuditLog(store, key=KEY).record(
        "execution", skill="report", args=["--token", "s3cret"]
    )
    assert record is not None
    assert record.details == {"args_digest": keyed}
    assert b"s3cret" not in b"".join(
        [await store.get_bytes(ref) for ref in await store.list(keys.AUDIT_PREFIX)]
    )


# -- keys ----------------------------------------------------------------------------------------


def test_audit_keys_sort_in_sequence_order_and_parse_back() -> None:
    writer = "0123456789abcdef"
    assert keys.audit_block_key(writer, 42) == f"audit/chains/{writer}/000000000042.jsonl"
    assert keys.audit_block_place(f"audit/chains/{writer}/000000000042.jsonl") == (writer, 42)
    assert keys.audit_block_key(writer, 9) < keys.audit_block_key(writer, 10)
    assert keys.audit_checkpoint_key(7) == "audit/checkpoints/000000000007.json"
    assert keys.audit_checkpoint_seq("audit/checkpoints/000000000007.json") == 7
    assert keys.audit_checkpoint_key(9) < keys.audit_checkpoint_key(10)
    for bad in (
        f"audit/chains/{writer}/000000000000.jsonl",
        f"audit/chains/{writer}/42.jsonl",
        f"audit/chains/{writer.upper()}/000000000001.jsonl",
        f"audit/chains/{writer}0/000000000001.jsonl",
        f"audit/chains/{writer}/000000000001.json",
        f"audit/chains/{writer}/000000000001.jsonl/x",
        "audit/checkpoints/000000000001.json",
        7,
    ):
        assert keys.audit_block_place(bad) is None, bad  # type: ignore[arg-type]
    for bad in (
        "audit/checkpoints/000000000000.json",
        "audit/checkpoints/7.json",
        "audit/checkpoints/000000000007.jsonl",
        f"audit/chains/{writer}/000000000001.jsonl",
        None,
    ):
        assert keys.audit_checkpoint_seq(bad) is None, bad  # type: ignore[arg-type]
    for bad_seq in (0, -1, keys.MAX_AUDIT_SEQ + 1, True, "1"):
        with pytest.raises(InvalidKeyError):
            keys.audit_block_key(writer, bad_seq)  # type: ignore[arg-type]
        with pytest.raises(InvalidKeyError):
            keys.audit_checkpoint_key(bad_seq)  # type: ignore[arg-type]
    for bad_writer in ("0123", writer.upper(), "../../etc/passwd", "g" * 16, 1234):
        with pytest.raises(InvalidKeyError):
            keys.audit_block_key(bad_writer, 1)  # type: ignore[arg-type]


# -- throughput ----------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("fsync", [False, True], ids=["no-fsync", "fsync"])
async def test_one_busy_writer_throughput(
    tmp_path: Path, fsync: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    """1 writer x 32 concurrent tasks x 400 appends on the local store: printed, not asserted
    (beyond group commit doing its run)."""
    tasks, each = 32, 400
    store = LocalArtifactStore(tmp_path / "store", fsync=fsync)
    log = AuditLog(store, key=KEY, actor="bench")
    latencies: list[float] = []

    async def append(task: int) -> None:
        for n in range(each):
            began = time.perf_counter()
            await log.record("execution", skill="report", run=f"run-{task}", n=n)
            latencies.append(time.perf_counter() - began)

    began = time.perf_counter()
    await asyncio.gather(*(append(task) for task in range(tasks)))
    elapsed = time.perf_counter() - began
    await log.aclose()
    blocks = len(await chain_keys(store, log.writer))
    report = await log.verify()
    assert report.intact, report.problems
    assert report.records == tasks * each
    assert blocks < tasks * each / 8
    latencies.sort()
    with capsys.disabled():
        print(
            f"\naudit log, local store (fsync={fsync}): {tasks * each} appends from {tasks} "
            f"tasks in {elapsed:.2f} s = {tasks * each / elapsed:,.0f} appends/s, "
            f"{blocks} blocks, latency p50 {latencies[len(latencies) // 2] * 1000:.1f} ms, "
            f"p99 {latencies[int(len(latencies) * 0.99)] * 1000:.1f} ms, "
            f"{report.checkpoints} checkpoints"
        )
