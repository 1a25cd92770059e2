"""The audit log's behaviour on any ``ArtifactStore``: several writers' chains and the checkpoint
chain verifying, every kind of tampering found where it is, concurrent writers, reading.

Not collected on its own: ``tests/storage/test_audit.py`` runs it on the local store and
``tests/integration/storage/test_s3_audit.py`` on S3 against moto; each provides a ``store``
fixture (a fresh, empty store). Tampering goes through the store's own ``put_bytes`` and
``delete``, the way someone with write access to the bucket or the directory would.

Most tests start from :func:`scene`: two writers, A and B, whose blocks and checkpoints are laid
out exactly (a block is what one ``asyncio.gather`` of appends makes; a writer anchors its
first block, and then only when closed)::

    A: blocks 1 (records 1-2), 3 (3-5), 6 (6-7)      B: blocks 1 (record 1), 2 (2-3)
    checkpoints: 1 A@2, 2 B@1, 3 A@5, 4 B@3, 5 A@7
    seen: A's records 3-5 name checkpoint 1, 6-7 checkpoint 3; B's 2-3 checkpoint 2
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import SecretStr

from skillweave.storage import ArtifactStore, keys
from skillweave.storage.audit import (
    CHECKPOINTS,
    GENESIS,
    AuditLog,
    AuditLogError,
    AuditProblem,
    AuditRecord,
    AuditReport,
)

__all__ = [
    "test_a_block_added_over_filled_places_is_inserted",
    "test_a_block_moved_between_writers_is_reordered_and_removed",
    "test_a_block_removed_from_the_middle_is_removed",
    "test_a_chain_replaced_after_a_checkpoint_is_not_the_record_it_names",
    "test_a_clean_log_of_several_writers_verifies",
    "test_a_consistent_rollback_is_found_only_against_a_kept_head",
    "test_a_duplicated_line_is_inserted",
    "test_a_record_rewritten_without_the_key_is_a_forgery",
    "test_a_rewritten_checkpoint_is_found_by_the_next_and_by_records",
    "test_a_rewritten_record_breaks_the_next_link_without_a_key",
    "test_a_rolled_back_tail_is_removed_behind_its_checkpoint",
    "test_a_whole_chain_deleted_is_removed_once",
    "test_an_edited_byte_is_found_in_either_writer",
    "test_an_edited_checkpoint_is_edited",
    "test_an_empty_log_verifies",
    "test_garbage_keys_and_unreadable_blocks_are_reported_not_raised",
    "test_many_tasks_on_one_log_share_blocks_of_one_gapless_chain",
    "test_read_filters_across_writers_and_skips_damaged_records",
    "test_records_and_checkpoints_are_canonical_json_with_a_checkable_hash",
    "test_several_logs_at_once_each_write_their_own_chain",
    "test_swapped_records_are_reordered",
    "test_the_checkpoint_chain_cut_short_behind_a_record_is_removed",
    "test_verify_while_writers_append_finds_nothing_wrong",
]

KEY = SecretStr("audit-test-key")
KEYS = pytest.mark.parametrize("key", [KEY, None], ids=["hmac", "sha256"])
Found = tuple[str, str | None, int | None]


# -- helpers -------------------------------------------------------------------------------------


def found(report: AuditReport) -> list[Found]:
    """The report's problems as (kind, chain, seq), in a fixed order."""
    return ordered([(p.kind, p.chain, p.seq) for p in report.problems])


def ordered(problems: list[Found]) -> list[Found]:
    return sorted(problems, key=lambda p: (p[1] is None, p[1] or "", p[2] or 0, p[0]))


def canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def seal(body: dict[str, object], key: SecretStr | None, *, checkpoint: bool = False) -> str:
    """The hash the log gives `body` (without its ``hash``), computed here independently."""
    domain = b"skillweave-audit-checkpoint\x00" if checkpoint else b"skillweave-audit-record\x00"
    data = domain + canonical({k: v for k, v in body.items() if k != "hash"})
    if key is None:
        return hashlib.sha256(data).hexdigest()
    return hmac.new(key.get_secret_value().encode(), data, hashlib.sha256).hexdigest()


async def raw(store: ArtifactStore, key: str) -> bytes:
    ref = await store.stat(key)
    assert ref is not None, key
    return await store.get_bytes(ref)


async def lines(store: ArtifactStore, writer: str, first: int) -> list[bytes]:
    return (await raw(store, keys.audit_block_key(writer, first))).splitlines()


async def put_lines(store: ArtifactStore, writer: str, first: int, data: list[bytes]) -> None:
    await store.put_bytes(keys.audit_block_key(writer, first), b"".join(x + b"\n" for x in data))


async def block(log: AuditLog, size: int, **details: str) -> list[AuditRecord]:
    """`size` appends at once: one block."""
    written = await asyncio.gather(
        *(log.record("execution", skill="report", n=n, **details) for n in range(size))
    )
    assert all(record is not None for record in written)
    return [record for record in written if record is not None]


async def chain_keys(store: ArtifactStore, writer: str) -> list[str]:
    return [ref.key for ref in await store.list(f"{keys.AUDIT_CHAINS_PREFIX}{writer}/")]


@dataclass(frozen=True)
class Scene:
    a: str
    b: str


async def scene(store: ArtifactStore, key: SecretStr | None) -> Scene:
    """The log of the module docstring."""
    a = AuditLog(store, key=key, actor="a@host", checkpoint_seconds=3600)
    b = AuditLog(store, key=key, actor="b@host", checkpoint_seconds=3600)
    await block(a, 2)
    await block(b, 1)
    await block(a, 3)
    await a.aclose()
    await block(b, 2)
    await b.aclose()
    await block(a, 2)
    await a.aclose()
    return Scene(a.writer, b.writer)


async def verify(store: ArtifactStore, key: SecretStr | None, **kwargs: object) -> AuditReport:
    return await AuditLog(store, key=key).verify(**kwargs)  # type: ignore[arg-type]


# -- a clean log ---------------------------------------------------------------------------------


@KEYS
async def test_a_clean_log_of_several_writers_verifies(
    store: ArtifactStore, key: SecretStr | None
) -> None:
    s = await scene(store, key)
    assert await chain_keys(store, s.a) == [keys.audit_block_key(s.a, n) for n in (1, 3, 6)]
    assert await chain_keys(store, s.b) == [keys.audit_block_key(s.b, n) for n in (1, 2)]
    report = await verify(store, key)
    assert report.intact, report.problems
    assert (report.records, report.writers, report.checkpoints) == (10, 2, 5)
    assert report.keyed is (key is not None)
    assert report.unanchored == 0
    assert report.head is not None
    assert report.head.seq == 5
    newest = json.loads(await raw(store, keys.audit_checkpoint_key(5)))
    assert report.head.hash == newest["hash"]
    assert (newest["writer"], newest["record"]) == (s.a, 7)
    shown = [(record.writer, record.seq) async for record in AuditLog(store, key=key).read()]
    assert sorted(shown) == sorted([(s.a, n) for n in range(1, 8)] + [(s.b, n) for n in (1, 2, 3)])
    # Records not yet anchored are counted, not blamed.
    c = AuditLog(store, key=key, checkpoint_seconds=3600)
    await block(c, 1)
    await block(c, 2)
    report = await verify(store, key)
    assert report.intact, report.problems
    assert (report.records, report.writers, report.checkpoints, report.unanchored) == (13, 3, 6, 2)


async def test_an_empty_log_verifies(store: ArtifactStore) -> None:
    report = await AuditLog(store, key=KEY).verify()
    assert report.intact
    assert (report.records, report.writers, report.checkpoints, report.unanchored) == (0, 0, 0, 0)
    assert report.head is None


@KEYS
async def test_records_and_checkpoints_are_canonical_json_with_a_checkable_hash(
    store: ArtifactStore, key: SecretStr | None
) -> None:
    log = AuditLog(store, key=key, actor="api@host", checkpoint_seconds=3600)
    first = await log.record("upload", skill="report", version="v1", source="api")
    second, third = await asyncio.gather(
        log.record("enable", skill="report", actor="alice"),
        log.record("scan", skill="report", verdict="clean"),
    )
    assert first is not None
    assert second is not None
    assert third is not None
    [one] = await lines(store, log.writer, 1)
    two = await lines(store, log.writer, 2)
    assert len(two) == 2  # appended at once: one block
    bodies = [json.loads(line) for line in [one, *two]]
    for line, body in zip([one, *two], bodies, strict=True):
        assert line == canonical(body)
        assert set(body) == {
            "v", "writer", "seq", "time", "event", "skill", "version", "actor", "run",
            "details", "seen", "prev", "hash",
        }  # fmt: skip
        assert body["hash"] == seal(body, key)
        assert body["writer"] == log.writer
        assert body["time"].endswith("Z")
    assert [body["seq"] for body in bodies] == [1, 2, 3]
    assert bodies[0]["prev"] == GENESIS
    assert bodies[1]["prev"] == bodies[0]["hash"] == first.hash
    assert bodies[2]["prev"] == bodies[1]["hash"] == second.hash
    assert bodies[0]["actor"] == "api@host"
    assert bodies[1]["actor"] == "alice"
    assert bodies[0]["details"] == {"source": "api"}
    data = await raw(store, keys.audit_checkpoint_key(1))
    checkpoint = json.loads(data)
    assert data == canonical(checkpoint)
    assert set(checkpoint) == {"v", "seq", "time", "writer", "record", "head", "prev", "hash"}
    assert checkpoint["hash"] == seal(checkpoint, key, checkpoint=True)
    assert (checkpoint["seq"], checkpoint["prev"]) == (1, GENESIS)
    assert (checkpoint["writer"], checkpoint["record"], checkpoint["head"]) == (
        log.writer,
        1,
        first.hash,
    )
    assert bodies[0]["seen"] is None  # sealed before the first checkpoint existed
    assert bodies[1]["seen"] == {"seq": 1, "hash": checkpoint["hash"]}
    # A record can never pass for a checkpoint: the hashes are domain-separated.
    assert seal(bodies[0], key, checkpoint=True) != bodies[0]["hash"]


# -- tampering, per writer and across writers ------------------------------------------------------


@KEYS
async def test_an_edited_byte_is_found_in_either_writer(
    store: ArtifactStore, key: SecretStr | None
) -> None:
    s = await scene(store, key)
    a3 = await lines(store, s.a, 3)
    a3[1] = a3[1].replace(b'"skill":"report"', b'"skill":"rEport"')  # record 4
    await put_lines(store, s.a, 3, a3)
    b2 = await lines(store, s.b, 2)
    b2[1] = b2[1].replace(b'"actor":"b@host"', b'"actor":"b@hosT"')  # record 3
    await put_lines(store, s.b, 2, b2)
    report = await verify(store, key)
    assert found(report) == ordered([("edited", s.a, 4), ("edited", s.b, 3)])
    messages = {p.chain: p.message for p in report.problems}
    assert (
        messages[s.a] == f"record 4 of writer {s.a} was edited: its hash does not match its content"
    )


async def test_a_record_rewritten_without_the_key_is_a_forgery(store: ArtifactStore) -> None:
    s = await scene(store, KEY)
    a3 = await lines(store, s.a, 3)
    body = json.loads(a3[1])
    body["skill"] = "innocent"
    body["hash"] = seal(body, None)  # all one can do without AUDIT__KEY
    a3[1] = canonical(body)
    await put_lines(store, s.a, 3, a3)
    report = await verify(store, KEY)
    assert found(report) == [("edited", s.a, 4), ("reordered", s.a, 5)]
    assert "forged" in report.problems[0].message
    assert "does not follow record 4" in report.problems[1].message


async def test_a_rewritten_record_breaks_the_next_link_without_a_key(store: ArtifactStore) -> None:
    s = await scene(store, None)
    a3 = await lines(store, s.a, 3)
    body = json.loads(a3[1])
    body["skill"] = "innocent"
    body["hash"] = seal(body, None)
    a3[1] = canonical(body)
    await put_lines(store, s.a, 3, a3)
    report = await verify(store, None)
    assert found(report) == [("reordered", s.a, 5)]
    assert report.problems[0].message.startswith(f"record 5 of writer {s.a} does not follow")


@KEYS
async def test_swapped_records_are_reordered(store: ArtifactStore, key: SecretStr | None) -> None:
    s = await scene(store, key)
    a3 = await lines(store, s.a, 3)
    await put_lines(store, s.a, 3, [a3[1], a3[0], a3[2]])  # records 4, 3, 5
    report = await verify(store, key)
    assert found(report) == [("reordered", s.a, 3), ("reordered", s.a, 4), ("reordered", s.a, 5)]
    assert (
        report.problems[0].message
        == f"record 3 of writer {s.a} holds record 4 of writer {s.a}: moved"
    )


@KEYS
async def test_a_block_removed_from_the_middle_is_removed(
    store: ArtifactStore, key: SecretStr | None
) -> None:
    s = await scene(store, key)
    await store.delete(keys.audit_block_key(s.a, 3))
    report = await verify(store, key)
    assert found(report) == [("removed", s.a, 3)]
    assert report.problems[0].message.startswith(f"records 3 to 5 of writer {s.a} were removed")
    assert report.records == 7


@KEYS
async def test_a_duplicated_line_is_inserted(store: ArtifactStore, key: SecretStr | None) -> None:
    s = await scene(store, key)
    a3 = await lines(store, s.a, 3)
    await put_lines(store, s.a, 3, [a3[0], a3[1], a3[1], a3[2]])  # record 4 twice
    report = await verify(store, key)
    assert found(report) == [("inserted", s.a, 5)]
    assert report.problems[0].message == (
        f"a copy of record 4 of writer {s.a} follows record 4: inserted"
    )
    # A copy of an older record further on is a copy too.
    await put_lines(store, s.a, 3, [a3[0], a3[1], a3[2], a3[0]])
    assert found(await verify(store, key)) == [("inserted", s.a, 6)]


@KEYS
async def test_a_block_added_over_filled_places_is_inserted(
    store: ArtifactStore, key: SecretStr | None
) -> None:
    s = await scene(store, key)
    a3 = await raw(store, keys.audit_block_key(s.a, 3))
    await store.put_bytes(keys.audit_block_key(s.a, 4), a3)  # records 3-5 again, at place 4
    report = await verify(store, key)
    assert found(report) == [("inserted", s.a, 4)]
    assert report.problems[0].message == (
        f"block 4 of writer {s.a} holds places 4 to 5 again: inserted"
    )
    # Read shows each record once; the inserted ones are damaged.
    damaged: list[AuditProblem] = []
    records = AuditLog(store, key=key).read(on_damaged=damaged.append)
    shown = [(record.writer, record.seq) async for record in records]
    assert len(shown) == len(set(shown)) == 10
    assert [(p.kind, p.seq) for p in damaged] == [("inserted", 4)] * 3


@KEYS
async def test_a_block_moved_between_writers_is_reordered_and_removed(
    store: ArtifactStore, key: SecretStr | None
) -> None:
    s = await scene(store, key)
    moved = await raw(store, keys.audit_block_key(s.b, 2))  # B's records 2-3 ...
    await store.put_bytes(keys.audit_block_key(s.a, 8), moved)  # ... as A's 8-9
    await store.delete(keys.audit_block_key(s.b, 2))
    report = await verify(store, key)
    assert found(report) == ordered(
        [("reordered", s.a, 8), ("reordered", s.a, 9), ("removed", s.b, 2)]
    )
    messages = {(p.chain, p.seq): p.message for p in report.problems}
    assert messages[s.a, 8] == (
        f"record 8 of writer {s.a} is record 2 of writer {s.b}: moved between chains"
    )
    assert "rolled back: checkpoint 4 names record 3" in messages[s.b, 2]
    # From the middle of one chain to the middle of another: both places are found.
    moved = await raw(store, keys.audit_block_key(s.a, 3))
    await store.put_bytes(keys.audit_block_key(s.b, 2), moved)
    await store.delete(keys.audit_block_key(s.a, 3))
    await store.delete(keys.audit_block_key(s.a, 8))
    report = await verify(store, key)
    assert found(report) == ordered(
        [
            ("removed", s.a, 3),
            ("reordered", s.b, 2),
            ("reordered", s.b, 3),
            ("reordered", s.b, 4),
            ("edited", s.b, 3),  # not the record checkpoint 4 names
        ]
    )


@KEYS
async def test_a_rolled_back_tail_is_removed_behind_its_checkpoint(
    store: ArtifactStore, key: SecretStr | None
) -> None:
    s = await scene(store, key)
    await store.delete(keys.audit_block_key(s.a, 6))
    report = await verify(store, key)
    assert found(report) == [("removed", s.a, 6)]
    assert report.problems[0].message == (
        f"records 6 to 7 of writer {s.a} were removed: rolled back: checkpoint 5 names record 7"
    )


@KEYS
async def test_a_whole_chain_deleted_is_removed_once(
    store: ArtifactStore, key: SecretStr | None
) -> None:
    s = await scene(store, key)
    for first in (1, 2):
        await store.delete(keys.audit_block_key(s.b, first))
    report = await verify(store, key)
    assert found(report) == [("removed", s.b, 1)]  # named by checkpoints 2 and 4: said once
    assert "the whole chain is gone: checkpoint 4 names record 3" in report.problems[0].message
    assert report.writers == 1


@KEYS
async def test_a_chain_replaced_after_a_checkpoint_is_not_the_record_it_names(
    store: ArtifactStore, key: SecretStr | None
) -> None:
    """Someone who holds the key (or, without one, anyone) rewrites a chain's tail so that
    every hash and link checks: only the checkpoint naming its newest record tells."""
    s = await scene(store, key)
    a6 = [json.loads(line) for line in await lines(store, s.a, 6)]
    prev = a6[0]["prev"]
    for body in a6:
        body["skill"] = "innocent"
        body["prev"] = prev
        body["hash"] = prev = seal(body, key)
    await put_lines(store, s.a, 6, [canonical(body) for body in a6])
    report = await verify(store, key)
    assert found(report) == [("edited", s.a, 7)]
    assert report.problems[0].message == (
        f"record 7 of writer {s.a} is not the record checkpoint 5 names: the chain was "
        "replaced from there"
    )


@KEYS
async def test_the_checkpoint_chain_cut_short_behind_a_record_is_removed(
    store: ArtifactStore, key: SecretStr | None
) -> None:
    s = await scene(store, key)
    for seq in (3, 4, 5):
        await store.delete(keys.audit_checkpoint_key(seq))
    report = await verify(store, key)
    assert found(report) == [("removed", CHECKPOINTS, 3)]
    assert report.problems[0].message == (
        f"checkpoint 3 was removed: the checkpoint chain was rolled back: record 6 of writer "
        f"{s.a} names checkpoint 3"
    )
    assert report.unanchored == 7  # A's 3-7 and B's 2-3 are past their newest checkpoints now


@KEYS
async def test_an_edited_checkpoint_is_edited(store: ArtifactStore, key: SecretStr | None) -> None:
    await scene(store, key)
    data = await raw(store, keys.audit_checkpoint_key(2))
    body = json.loads(data)
    body["record"] = 3  # B's chain would then be anchored further
    await store.put_bytes(keys.audit_checkpoint_key(2), canonical(body))
    report = await verify(store, key)
    assert found(report) == [("edited", CHECKPOINTS, 2)]
    assert report.problems[0].message == (
        "checkpoint 2 was edited: its hash does not match its content"
    )


async def test_a_rewritten_checkpoint_is_found_by_the_next_and_by_records(
    store: ArtifactStore,
) -> None:
    s = await scene(store, None)
    body = json.loads(await raw(store, keys.audit_checkpoint_key(2)))
    body["time"] = "2000-01-01T00:00:00.000000Z"
    body["hash"] = seal(body, None, checkpoint=True)
    await store.put_bytes(keys.audit_checkpoint_key(2), canonical(body))
    report = await verify(store, None)
    assert found(report) == [("edited", CHECKPOINTS, 2), ("reordered", CHECKPOINTS, 3)]
    assert report.problems[0].message == (
        f"checkpoint 2 is not the checkpoint record 2 of writer {s.b} names: replaced"
    )
    assert report.problems[1].message.startswith("checkpoint 3 does not follow checkpoint 2")


@KEYS
async def test_a_consistent_rollback_is_found_only_against_a_kept_head(
    store: ArtifactStore, key: SecretStr | None
) -> None:
    await scene(store, key)
    before = await verify(store, key)
    snapshot = {ref.key for ref in await store.list(keys.AUDIT_PREFIX)}
    a = AuditLog(store, key=key, checkpoint_seconds=3600)
    await block(a, 2)
    await block(a, 1)
    await a.aclose()
    kept = (await verify(store, key)).head
    assert kept is not None
    assert before.head is not None
    assert kept.seq == before.head.seq + 2
    for ref in await store.list(keys.AUDIT_PREFIX):  # back to the snapshot: nothing dangles
        if ref.key not in snapshot:
            await store.delete(ref.key)
    report = await verify(store, key)
    assert report.intact, report.problems
    assert (report.records, report.checkpoints, report.head) == (10, 5, before.head)
    assert (await verify(store, key, expect=before.head)).intact
    report = await verify(store, key, expect=kept)
    assert found(report) == [("removed", CHECKPOINTS, 6)]
    assert report.problems[0].message == (
        "checkpoints 6 to 7 were removed: the checkpoint chain was rolled back: the head you "
        "kept names checkpoint 7"
    )
    # A log that grew again past the kept head is not it either.
    again = AuditLog(store, key=key, checkpoint_seconds=3600)
    await block(again, 1)
    await again.aclose()
    await block(AuditLog(store, key=key), 1)
    report = await verify(store, key, expect=kept)
    assert found(report) == [("edited", CHECKPOINTS, 7)]
    assert "not the checkpoint the head you kept names: replaced" in report.problems[0].message


@KEYS
async def test_garbage_keys_and_unreadable_blocks_are_reported_not_raised(
    store: ArtifactStore, key: SecretStr | None
) -> None:
    s = await scene(store, key)
    await put_lines(
        store,
        s.a,
        3,
        [b"\xff\xfe not text", b'{"seq": 4, "seq": 4}', b"[" * 5000 + b"]" * 5000],
    )
    await store.put_bytes(keys.audit_block_key(s.b, 2), b"x" * (2 * 1024 * 1024 + 1))
    await put_lines(store, s.b, 1, [b"{}"] * 129)
    await store.put_bytes(keys.audit_checkpoint_key(2), b'{"v": 2, "seq": "two"}')
    strays = [
        f"{keys.AUDIT_CHAINS_PREFIX}not-a-writer/000000000001.jsonl",
        f"{keys.AUDIT_CHAINS_PREFIX}{s.a}/1.jsonl",
        f"{keys.AUDIT_CHECKPOINTS_PREFIX}000000000000.json",
    ]
    for stray in strays:
        await store.put_bytes(stray, b"{}")
    report = await verify(store, key)
    assert found(report) == ordered(
        [
            ("unreadable", s.a, 3),
            ("unreadable", s.a, 4),
            ("unreadable", s.a, 5),
            ("unreadable", s.b, 1),
            ("unreadable", s.b, 2),
            ("unreadable", CHECKPOINTS, 2),
            ("unreadable", None, None),
            ("unreadable", None, None),
            ("unreadable", None, None),
        ]
    )
    messages = {(p.chain, p.seq): p.message for p in report.problems}
    assert "not UTF-8" in messages[s.a, 3]
    assert "twice" in messages[s.a, 4]
    assert "not JSON" in messages[s.a, 5]
    assert messages[s.b, 2].startswith(
        f"block 2 of writer {s.b} is unreadable: it is 2097153 bytes"
    )
    assert (
        messages[s.b, 1] == f"block 1 of writer {s.b} is unreadable: it holds 129 lines, over 128"
    )
    assert "is not a checkpoint" in messages[CHECKPOINTS, 2]
    assert sorted(p.message for p in report.problems if p.chain is None) == sorted(
        f"{stray!r} is in the audit log but no record's key" for stray in strays
    )
    damaged: list[AuditProblem] = []
    shown = [r async for r in AuditLog(store, key=key).read(on_damaged=damaged.append)]
    assert len(shown) == 4  # A's 1-2 and 6-7: nothing unreadable
    assert {(p.kind, p.chain, p.seq) for p in damaged} == {
        ("unreadable", s.b, 1),
        ("unreadable", s.a, 3),
        ("unreadable", s.a, 4),
        ("unreadable", s.a, 5),
        ("unreadable", s.b, 2),
    }


# -- concurrency ---------------------------------------------------------------------------------


async def test_many_tasks_on_one_log_share_blocks_of_one_gapless_chain(
    store: ArtifactStore,
) -> None:
    tasks, each = 48, 5
    log = AuditLog(store, key=KEY, actor="busy")

    async def append(task: int) -> None:
        for n in range(each):
            await log.record("activation", skill="report", event_id=f"{task}-{n}")

    await asyncio.gather(*(append(task) for task in range(tasks)))
    await log.aclose()
    report = await log.verify()
    assert report.intact, report.problems
    assert (report.records, report.writers, report.unanchored) == (tasks * each, 1, 0)
    blocks = await chain_keys(store, log.writer)
    assert len(blocks) < tasks * each / 4  # group commit: one write carries many appends
    records = [record async for record in log.read()]
    assert sorted(r.seq for r in records) == list(range(1, tasks * each + 1))
    ids = sorted(str(r.details["event_id"]) for r in records)
    assert ids == sorted(f"{t}-{n}" for t in range(tasks) for n in range(each))


async def test_several_logs_at_once_each_write_their_own_chain(store: ArtifactStore) -> None:
    writers, each = 8, 6
    logs = [AuditLog(store, key=KEY, actor=f"w{w}", checkpoint_seconds=0) for w in range(writers)]

    async def append(w: int) -> None:
        for n in range(each):
            await logs[w].record("execution", skill="report", event_id=f"{w}-{n}")
        await logs[w].aclose()

    await asyncio.gather(*(append(w) for w in range(writers)))
    report = await AuditLog(store, key=KEY).verify()
    assert report.intact, report.problems
    assert (report.records, report.writers, report.unanchored) == (writers * each, writers, 0)
    assert report.checkpoints >= writers  # every writer anchored, none lost a race for good
    records = [record async for record in AuditLog(store, key=KEY).read()]
    assert {r.writer for r in records} == {log.writer for log in logs}
    ids = sorted(str(r.details["event_id"]) for r in records)
    assert ids == sorted(f"{w}-{n}" for w in range(writers) for n in range(each))


async def test_verify_while_writers_append_finds_nothing_wrong(store: ArtifactStore) -> None:
    """Listings race appends (blocks and checkpoints land while verify reads): never a problem."""
    done = asyncio.Event()

    async def append(w: int) -> None:
        log = AuditLog(store, key=KEY, actor=f"w{w}", checkpoint_seconds=0)
        for n in range(30):
            await asyncio.gather(*(log.record("activation", skill="s", n=n) for _ in range(w + 1)))
        await log.aclose()

    async def appenders() -> None:
        try:
            await asyncio.gather(*(append(w) for w in range(4)))
        finally:
            done.set()

    reports: list[AuditReport] = []
    writing = asyncio.create_task(appenders())
    while not done.is_set():
        reports.append(await AuditLog(store, key=KEY).verify())
    await writing
    final = await AuditLog(store, key=KEY).verify()
    assert final.intact, final.problems
    assert (final.records, final.writers) == (30 * (1 + 2 + 3 + 4), 4)
    assert reports
    assert [r.problems for r in reports if not r.intact] == []


# -- reading -------------------------------------------------------------------------------------


async def test_read_filters_across_writers_and_skips_damaged_records(store: ArtifactStore) -> None:
    start = datetime(2030, 1, 1, tzinfo=UTC)
    hours = iter(range(100))

    def clock() -> datetime:
        return start + timedelta(hours=next(hours))

    one = AuditLog(store, key=KEY, clock=clock, checkpoint_seconds=3600)
    two = AuditLog(store, key=KEY, clock=clock, checkpoint_seconds=3600)
    await one.record("install", skill="alpha")  # 00:00 (its checkpoint 01:00)
    await two.record("install", skill="beta")  # 02:00 (03:00)
    await one.record("activation", skill="alpha", run="j1")  # 04:00
    await two.record("execution", skill="alpha", run="j1", script="a.py", args=["--pin", "1"])
    await one.record("disable", skill="alpha")  # 06:00

    async def shown(**filters: object) -> list[tuple[str, int]]:
        records = one.read(**filters)  # type: ignore[arg-type]
        return [("one" if r.writer == one.writer else "two", r.seq) async for r in records]

    everything = [("one", 1), ("two", 1), ("one", 2), ("two", 2), ("one", 3)]
    assert await shown() == everything  # time order across writers
    assert await shown(skill="alpha") == [("one", 1), ("one", 2), ("two", 2), ("one", 3)]
    assert await shown(event="install") == [("one", 1), ("two", 1)]
    assert await shown(since=start + timedelta(hours=4)) == everything[2:]
    assert await shown(skill="alpha", limit=2) == [("one", 1), ("one", 2)]
    [execution] = [record async for record in one.read(event="execution")]
    assert "--pin" not in json.dumps(execution.details)
    assert set(execution.details) == {"script", "args_digest"}

    [line] = await lines(store, one.writer, 2)
    await put_lines(store, one.writer, 2, [line.replace(b'"j1"', b'"j2"')])
    damaged: list[AuditProblem] = []
    records = one.read(skill="alpha", on_damaged=damaged.append)
    assert [(r.writer, r.seq) async for r in records] == [
        (one.writer, 1),
        (two.writer, 2),
        (one.writer, 3),
    ]
    assert [(p.kind, p.chain, p.seq) for p in damaged] == [("edited", one.writer, 2)]
    with pytest.raises(AuditLogError, match="aware"):
        await anext(one.read(since=datetime(2030, 1, 1)))
