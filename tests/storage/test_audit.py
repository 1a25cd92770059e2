"""The audit log on the local store: the shared suite (tests/storage/audit_suite.py), appenders
in separate processes, the cost of an append, a failing store, entries refused, and the keys.

The same suite runs on S3 in tests/integration/storage/test_s3_audit.py."""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from skillweave.config import AuditSettings
from skillweave.errors import InvalidKeyError, StorageError
from skillweave.storage import ArtifactRef, LocalArtifactStore, keys
from skillweave.storage.audit import (
    MAX_DETAILS_BYTES,
    AuditEntry,
    AuditLog,
    AuditLogError,
    args_digest,
)
from tests.storage.audit_suite import *  # noqa: F403 - the shared suite runs here
from tests.storage.audit_suite import KEY


@pytest.fixture
def store(tmp_path: Path) -> LocalArtifactStore:
    return LocalArtifactStore(tmp_path / "store", fsync=False)


# -- separate processes ------------------------------------------------------------------------


def _append_all(root: str, writer: int, count: int, start_at: float) -> None:
    """Append `count` records from a process of its own, starting at the same instant as the
    other writers so that they race for the same places."""

    async def append() -> None:
        log = AuditLog(LocalArtifactStore(Path(root), fsync=False), key=KEY, actor=f"p{writer}")
        await asyncio.sleep(max(0.0, start_at - time.time()))
        for n in range(count):
            await log.record("execution", skill="report", event_id=f"{writer}-{n}")

    asyncio.run(append())


async def test_appenders_in_separate_processes_form_one_chain(tmp_path: Path) -> None:
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
    assert report.records == writers * each
    ids = [record.details["event_id"] async for record in log.read()]
    assert sorted(ids) == sorted(f"{w}-{n}" for w in range(writers) for n in range(each))


# -- what an append costs ----------------------------------------------------------------------


class CountingStore(LocalArtifactStore):
    """The local store, counting calls (and failing writes on demand)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, fsync=False)
        self.calls = 0
        self.broken = False

    async def put_if_absent(
        self, key: str, data: bytes, *, content_type: str = "application/octet-stream"
    ) -> ArtifactRef | None:
        self.calls += 1
        if self.broken:
            raise StorageError("the disk is full", key=key, code="ENOSPC")
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

    async def list(self, prefix: str) -> list[ArtifactRef]:
        raise AssertionError("appends never list the log")


async def test_an_append_costs_the_same_however_long_the_log(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "store")
    log = AuditLog(store, key=KEY)
    costs = []
    for n in range(60):
        store.calls = 0
        await log.record("activation", skill="report", n=n)
        costs.append(store.calls)
    assert max(costs[1:]) == 4  # the record, then the anchor: stat, read, write
    store.calls = 0
    await AuditLog(store, key=KEY).record("activation", skill="report")  # a fresh process
    assert store.calls <= 10  # anchor, its record, one probe past it, its head, then an append


async def test_a_failed_append_raises_one_clear_error(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "store")
    log = AuditLog(store, key=KEY)
    await log.record("install", skill="report")
    store.broken = True
    with pytest.raises(AuditLogError, match=r"cannot append 'upload' of skill 'report'.*full"):
        await log.record("upload", skill="report")


class RacingListing(LocalArtifactStore):
    """A listing that passed record 3's place before it was written, and saw record 4."""

    async def list(self, prefix: str) -> list[ArtifactRef]:
        return [ref for ref in await super().list(prefix) if ref.key != keys.audit_record_key(3)]


async def test_a_listing_that_raced_an_append_is_no_removal(tmp_path: Path) -> None:
    store = RacingListing(tmp_path / "store", fsync=False)
    log = AuditLog(store, key=KEY)
    for n in range(5):
        await log.record("activation", skill="report", n=n)
    report = await log.verify()
    assert report.intact, report.problems
    assert report.records == 5
    await store.delete(keys.audit_record_key(3))  # now it is gone for real
    assert [(p.kind, p.seq) for p in (await log.verify()).problems] == [("removed", 3)]


# -- entries refused ---------------------------------------------------------------------------


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
    assert await store.list("") == []


async def test_a_disabled_log_writes_nothing(store: LocalArtifactStore) -> None:
    log = AuditLog.from_settings(AuditSettings(enabled=False), store)
    assert await log.record("install", skill="report") is None
    assert await store.list("") == []
    assert (await log.verify()).intact


def test_from_settings_takes_the_key() -> None:
    log = AuditLog.from_settings(AuditSettings(key=SecretStr("k")), store=None)  # type: ignore[arg-type]
    assert log.keyed
    assert log.enabled


def test_args_digest_hides_the_arguments() -> None:
    plain = args_digest(["--token", "s3cret"])
    keyed = args_digest(["--token", "s3cret"], key=KEY)
    assert len(plain) == len(keyed) == 64
    assert plain != keyed
    assert args_digest(["--token", "s3cret"]) == plain
    assert args_digest(["--token s3cret"]) != plain  # the split between arguments counts
    with pytest.raises(AuditLogError):
        args_digest("--token s3cret")


# -- keys --------------------------------------------------------------------------------------


def test_audit_keys_sort_in_sequence_order() -> None:
    assert keys.audit_record_key(42) == "audit/log/000000000042.json"
    assert keys.audit_record_seq("audit/log/000000000042.json") == 42
    assert keys.audit_record_key(9) < keys.audit_record_key(10)
    for bad in ("audit/log/000000000000.json", "audit/log/42.json", "audit/head.json", 7):
        assert keys.audit_record_seq(bad) is None  # type: ignore[arg-type]
    for bad_seq in (0, -1, keys.MAX_AUDIT_SEQ + 1, True, "1"):
        with pytest.raises(InvalidKeyError):
            keys.audit_record_key(bad_seq)  # type: ignore[arg-type]
