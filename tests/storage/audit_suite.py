"""The audit log's behaviour on any ``ArtifactStore``: the chain, tampering, races, reading.

Not collected on its own: ``tests/storage/test_audit.py`` runs it on the local store and
``tests/integration/storage/test_s3_audit.py`` on S3 against moto; each provides a ``store``
fixture (a fresh, empty store). Tampering goes through the store's own ``put_bytes`` and
``delete``, the way someone with write access to the bucket or the directory would.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import SecretStr

from skillweave.storage import ArtifactStore, keys
from skillweave.storage.audit import (
    GENESIS,
    AuditLog,
    AuditLogError,
    AuditProblem,
    AuditReport,
)

__all__ = [
    "test_a_clean_chain_verifies",
    "test_a_fresh_instance_continues_the_chain_from_the_anchor",
    "test_a_missing_anchor_is_reported_and_appends_still_find_the_head",
    "test_a_record_rewritten_without_the_key_is_a_forgery",
    "test_a_replaced_tail_is_not_the_record_the_anchor_names",
    "test_a_rewritten_record_breaks_the_next_link_without_a_key",
    "test_an_edited_byte_is_detected",
    "test_an_empty_log_verifies",
    "test_concurrent_appenders_form_one_gapless_chain",
    "test_garbage_in_the_store_is_reported_not_raised",
    "test_read_filters_and_skips_damaged_records",
    "test_records_are_canonical_json_with_a_checkable_hash",
    "test_removed_middle_records_are_detected",
    "test_removed_newest_records_are_detected_through_the_anchor",
    "test_swapped_records_are_reordered",
]

KEY = SecretStr("audit-test-key")


def problems(report: AuditReport) -> list[tuple[str, int | None]]:
    return [(problem.kind, problem.seq) for problem in report.problems]


async def filled(store: ArtifactStore, count: int, *, key: SecretStr | None = KEY) -> AuditLog:
    log = AuditLog(store, key=key, actor="tests@here")
    for n in range(1, count + 1):
        await log.record("execution", skill="report", version="d" * 64, job=f"job-{n}", n=n)
    return log


async def stored(store: ArtifactStore, seq: int) -> bytes:
    ref = await store.stat(keys.audit_record_key(seq))
    assert ref is not None
    return await store.get_bytes(ref)


async def replace(store: ArtifactStore, seq: int, data: bytes) -> None:
    await store.put_bytes(keys.audit_record_key(seq), data)


@pytest.mark.parametrize("key", [KEY, None], ids=["hmac", "sha256"])
async def test_a_clean_chain_verifies(store: ArtifactStore, key: SecretStr | None) -> None:
    log = await filled(store, 5, key=key)
    report = await AuditLog(store, key=key).verify()
    assert report.intact, report.problems
    assert report.records == 5
    assert report.keyed is (key is not None)
    assert report.head is not None
    assert report.head.seq == 5
    assert report.first_bad_seq is None
    last = [record async for record in log.read()][-1]
    assert report.head.hash == last.hash


async def test_an_empty_log_verifies(store: ArtifactStore) -> None:
    report = await AuditLog(store, key=KEY).verify()
    assert report.intact
    assert report.records == 0
    assert report.head is None


async def test_records_are_canonical_json_with_a_checkable_hash(store: ArtifactStore) -> None:
    log = AuditLog(store, key=KEY, actor="api@host")
    first = await log.record("upload", skill="report", version="v1", source="api")
    second = await log.record("enable", skill="report", actor="alice")
    assert first is not None
    assert second is not None
    data = await stored(store, 1)
    body = json.loads(data)
    assert data == json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    assert set(body) == {
        "v", "seq", "time", "event", "skill", "version", "actor", "job", "details", "prev", "hash"
    }  # fmt: skip
    assert body["seq"] == 1
    assert body["prev"] == GENESIS
    assert body["actor"] == "api@host"
    assert body["details"] == {"source": "api"}
    assert body["time"].endswith("Z")
    content = {name: value for name, value in body.items() if name != "hash"}
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":")).encode()
    expected = hmac.new(
        b"audit-test-key", b"skillweave-audit-record\x00" + canonical, hashlib.sha256
    ).hexdigest()
    assert body["hash"] == expected == first.hash
    assert second.prev == first.hash
    assert second.actor == "alice"
    anchor = json.loads(await store.get_bytes(await store.stat(keys.AUDIT_HEAD_KEY)))  # type: ignore[arg-type]
    assert anchor == {"seq": 2, "hash": second.hash}


async def test_an_edited_byte_is_detected(store: ArtifactStore) -> None:
    await filled(store, 5)
    data = await stored(store, 3)
    at = data.index(b'"skill":"report"') + len(b'"skill":"r')
    await replace(store, 3, data[:at] + b"E" + data[at + 1 :])  # "report" -> "rEport"
    report = await AuditLog(store, key=KEY).verify()
    assert problems(report) == [("edited", 3)]
    assert report.problems[0].message == "record 3 was edited: its hash does not match its content"
    assert report.first_bad_seq == 3


async def test_removed_middle_records_are_detected(store: ArtifactStore) -> None:
    await filled(store, 6)
    await store.delete(keys.audit_record_key(3))
    await store.delete(keys.audit_record_key(4))
    report = await AuditLog(store, key=KEY).verify()
    assert problems(report) == [("removed", 3)]
    assert report.problems[0].message.startswith("records 3 to 4 were removed")
    assert report.records == 4


async def test_removed_newest_records_are_detected_through_the_anchor(
    store: ArtifactStore,
) -> None:
    await filled(store, 6)
    await store.delete(keys.audit_record_key(6))
    await store.delete(keys.audit_record_key(5))
    report = await AuditLog(store, key=KEY).verify()
    assert problems(report) == [("removed", 5)]
    assert "the head anchor names record 6" in report.problems[0].message
    # The next append finds the true head and leaves the anchor's evidence where it was.
    log = AuditLog(store, key=KEY)
    appended = await log.record("disable", skill="report")
    assert appended is not None
    assert appended.seq == 5
    report = await log.verify()
    assert problems(report) == [("removed", 6)]


async def test_a_replaced_tail_is_not_the_record_the_anchor_names(store: ArtifactStore) -> None:
    await filled(store, 3, key=None)
    await store.delete(keys.audit_record_key(3))
    await AuditLog(store, key=None).record("enable", skill="other")  # a new record 3
    report = await AuditLog(store, key=None).verify()
    assert problems(report) == [("edited", 3)]
    assert "not the record the head anchor names" in report.problems[0].message


async def test_swapped_records_are_reordered(store: ArtifactStore) -> None:
    await filled(store, 5)
    three, four = await stored(store, 3), await stored(store, 4)
    await replace(store, 3, four)
    await replace(store, 4, three)
    report = await AuditLog(store, key=KEY).verify()
    assert problems(report) == [("reordered", 3), ("reordered", 4), ("reordered", 5)]
    assert report.problems[0].message == "record 3 holds record 4: records were moved"


async def test_a_record_rewritten_without_the_key_is_a_forgery(store: ArtifactStore) -> None:
    await filled(store, 4)
    body = json.loads(await stored(store, 2))
    body["skill"] = "innocent"
    del body["hash"]
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    body["hash"] = hashlib.sha256(b"skillweave-audit-record\x00" + canonical).hexdigest()
    await replace(store, 2, json.dumps(body).encode())
    report = await AuditLog(store, key=KEY).verify()
    assert problems(report) == [("edited", 2), ("reordered", 3)]
    assert "forged" in report.problems[0].message
    assert report.first_bad_seq == 2


async def test_a_rewritten_record_breaks_the_next_link_without_a_key(
    store: ArtifactStore,
) -> None:
    log = await filled(store, 4, key=None)
    body = json.loads(await stored(store, 2))
    body["skill"] = "innocent"
    del body["hash"]
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    body["hash"] = hashlib.sha256(b"skillweave-audit-record\x00" + canonical).hexdigest()
    await replace(store, 2, json.dumps(body).encode())
    report = await log.verify()
    assert problems(report) == [("reordered", 3)]
    assert report.problems[0].message.startswith("record 3 does not follow record 2")


async def test_garbage_in_the_store_is_reported_not_raised(store: ArtifactStore) -> None:
    await filled(store, 6)
    await replace(store, 2, b"\xff\xfe not text")
    await replace(store, 3, b'{"seq": 3, "seq": 3}')
    await replace(store, 4, b"[" * 5000 + b"]" * 5000)
    await replace(store, 5, b'{"v": 1, "seq": 5}')
    await store.put_bytes(f"{keys.AUDIT_LOG_PREFIX}stray.json", b"{}")
    report = await AuditLog(store, key=KEY).verify()
    assert problems(report) == [
        ("unreadable", 2),
        ("unreadable", 3),
        ("unreadable", 4),
        ("unreadable", 5),
        ("unreadable", None),
    ]
    assert "not UTF-8" in report.problems[0].message
    assert "twice" in report.problems[1].message
    # Appends go on after a damaged head, chaining to what verify expects.
    await replace(store, 6, b"not json")
    log = AuditLog(store, key=KEY)
    appended = await log.record("scan", skill="report", verdict="clean")
    assert appended is not None
    assert appended.seq == 7
    assert ("reordered", 7) not in problems(await log.verify())


async def test_a_missing_anchor_is_reported_and_appends_still_find_the_head(
    store: ArtifactStore,
) -> None:
    await filled(store, 9)
    await store.delete(keys.AUDIT_HEAD_KEY)
    report = await AuditLog(store, key=KEY).verify()
    assert problems(report) == [("removed", None)]
    appended = await AuditLog(store, key=KEY).record("remove", skill="report")
    assert appended is not None
    assert appended.seq == 10  # found by doubling and bisecting, not by listing
    assert (await AuditLog(store, key=KEY).verify()).intact
    await store.put_bytes(keys.AUDIT_HEAD_KEY, b'{"seq": "ten"}')
    assert problems(await AuditLog(store, key=KEY).verify()) == [("unreadable", None)]


async def test_a_fresh_instance_continues_the_chain_from_the_anchor(
    store: ArtifactStore,
) -> None:
    await filled(store, 3)
    again = await filled(store, 2)
    head = [record async for record in again.read()]
    assert [record.seq for record in head] == [1, 2, 3, 4, 5]
    assert (await again.verify()).intact


async def test_concurrent_appenders_form_one_gapless_chain(store: ArtifactStore) -> None:
    writers, each = 8, 5

    async def write(writer: int) -> None:
        log = AuditLog(store, key=KEY, actor=f"writer-{writer}")
        for n in range(each):
            await log.record("activation", skill="report", event_id=f"{writer}-{n}")

    await asyncio.gather(*(write(writer) for writer in range(writers)))
    log = AuditLog(store, key=KEY)
    report = await log.verify()
    assert report.intact, report.problems
    assert report.records == writers * each
    ids = [record.details["event_id"] async for record in log.read()]
    assert sorted(ids) == sorted(f"{w}-{n}" for w in range(writers) for n in range(each))


async def test_read_filters_and_skips_damaged_records(store: ArtifactStore) -> None:
    start = datetime(2030, 1, 1, tzinfo=UTC)
    ticks = iter(range(100))
    log = AuditLog(store, key=KEY, clock=lambda: start + timedelta(hours=next(ticks)))
    await log.record("install", skill="alpha")  # 00:00, seq 1
    await log.record("install", skill="beta")  # 01:00
    await log.record("activation", skill="alpha", job="j1")  # 02:00
    await log.record("execution", skill="alpha", job="j1", script="a.py", args=["--pin", "1"])
    await log.record("disable", skill="alpha")  # 04:00, seq 5

    async def seqs(**filters: object) -> list[int]:
        return [record.seq async for record in log.read(**filters)]  # type: ignore[arg-type]

    assert await seqs() == [1, 2, 3, 4, 5]
    assert await seqs(skill="alpha") == [1, 3, 4, 5]
    assert await seqs(event="install") == [1, 2]
    assert await seqs(since=start + timedelta(hours=2)) == [3, 4, 5]
    assert await seqs(skill="alpha", limit=2) == [1, 3]
    [execution] = [record async for record in log.read(event="execution")]
    assert "--pin" not in json.dumps(execution.details)
    assert set(execution.details) == {"script", "args_digest"}

    data = await stored(store, 3)
    await replace(store, 3, data.replace(b'"j1"', b'"j2"'))
    damaged: list[AuditProblem] = []
    shown = [r.seq async for r in log.read(skill="alpha", on_damaged=damaged.append)]
    assert shown == [1, 4, 5]
    assert [(problem.kind, problem.seq) for problem in damaged] == [("edited", 3)]
    with pytest.raises(AuditLogError, match="aware"):
        await anext(log.read(since=datetime(2030, 1, 1)))
