"""Claims: one winner per attempt, a live holder waited for, a lapsed one taken over, and the
records of every manager version read alike."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from mcp_manager.claims import Claim, ClaimRecord, Claims
from skillweave.errors import StorageError
from skillweave.storage.local import LocalArtifactStore


class GaveUp(Exception):
    """What a test's `exhausted` or `wait` raises."""


def key_of(attempt: int) -> str:
    return "work/.claim" if attempt == 1 else f"work/.claim.{attempt}"


async def nothing_settled() -> None:
    return None


async def give_up(_: float) -> None:
    raise GaveUp("held")


@pytest.fixture
def store(tmp_path: Path) -> LocalArtifactStore:
    return LocalArtifactStore(tmp_path / "store")


async def acquire(claims: Claims, **kwargs: object) -> object:
    options: dict[str, object] = {
        "settled": nothing_settled,
        "wait": give_up,
        "exhausted": lambda: GaveUp("exhausted"),
        "what": "work",
    }
    options.update(kwargs)
    return await claims.acquire(key_of, **options)  # type: ignore[arg-type]


async def put(store: LocalArtifactStore, key: str, record: dict[str, object]) -> None:
    await store.put_bytes(key, json.dumps(record).encode(), content_type="application/json")


async def test_the_first_claim_wins_and_a_second_sees_it_alive(
    store: LocalArtifactStore,
) -> None:
    first = Claims(store, lease=20.0, holder="manager")
    second = Claims(store, lease=20.0, holder="manager")
    won = await acquire(first, fingerprint="f")
    assert isinstance(won, Claim)
    assert (won.attempt, won.key, won.taken_over) == (1, "work/.claim", False)
    waited: list[float] = []

    async def wait(left: float) -> None:
        waited.append(left)
        raise GaveUp("in progress")

    with pytest.raises(GaveUp, match="in progress"):
        await acquire(second, wait=wait)
    assert 19.0 < waited[0] <= 20.0


async def test_a_lapsed_claim_is_taken_over_by_the_next_attempt(
    store: LocalArtifactStore,
) -> None:
    stale = time.time() - 3600
    await put(store, key_of(1), {"manager": "gone", "attempt": 1, "at": stale, "renewed": stale})
    won = await acquire(Claims(store, lease=20.0, holder="manager"))
    assert isinstance(won, Claim)
    assert won.attempt == 2
    assert won.taken_over
    assert won.chain == ("work/.claim", "work/.claim.2")


async def test_after_max_attempts_lapsed_the_work_is_given_up(store: LocalArtifactStore) -> None:
    for attempt in range(1, 4):
        await put(store, key_of(attempt), {"attempt": attempt, "at": 0.0, "renewed": 0.0})
    claims = Claims(store, lease=20.0, holder="manager", max_attempts=3)
    with pytest.raises(GaveUp, match="exhausted"):
        await acquire(claims)


async def test_the_outcome_of_settled_work_is_returned_instead_of_a_claim(
    store: LocalArtifactStore,
) -> None:
    await acquire(Claims(store, lease=20.0, holder="manager"))

    async def settled() -> str:
        return "stored result"

    assert await acquire(Claims(store, lease=20.0, holder="manager"), settled=settled) == (
        "stored result"
    )


async def test_check_refuses_a_holder_before_its_lease_is_looked_at(
    store: LocalArtifactStore,
) -> None:
    await put(store, key_of(1), {"fingerprint": "other", "attempt": 1, "at": 0.0})

    def check(holder: ClaimRecord) -> None:
        if holder.fingerprint != "mine":
            raise GaveUp("a different request")

    with pytest.raises(GaveUp, match="different request"):
        await acquire(Claims(store, lease=20.0, holder="manager"), check=check)


async def test_a_waiting_builder_takes_the_claim_once_it_is_withdrawn(
    store: LocalArtifactStore,
) -> None:
    holder = Claims(store, lease=20.0, holder="builder")
    held = await acquire(holder)
    assert isinstance(held, Claim)
    waiter = Claims(store, lease=20.0, holder="builder")

    async def wait(_: float) -> None:
        await holder.release(held)  # the build is over: its claims are withdrawn

    won = await acquire(waiter, wait=wait)
    assert isinstance(won, Claim)
    assert won.attempt == 1


async def test_a_claim_is_renewed_while_the_work_runs(store: LocalArtifactStore) -> None:
    claims = Claims(store, lease=0.2, holder="manager")
    won = await acquire(claims)
    assert isinstance(won, Claim)
    first = await claims.read(won.key)
    assert first is not None
    async with claims.renewing(won):
        await asyncio.sleep(0.3)
    renewed = await claims.read(won.key)
    assert renewed is not None
    assert renewed.last_renewed > first.last_renewed


async def test_withdraw_frees_the_claim_and_release_the_whole_chain(
    store: LocalArtifactStore,
) -> None:
    await put(store, key_of(1), {"attempt": 1, "at": 0.0, "renewed": 0.0})
    claims = Claims(store, lease=20.0, holder="builder")
    won = await acquire(claims)
    assert isinstance(won, Claim)
    await claims.withdraw(won)
    assert await store.stat(key_of(2)) is None
    assert await store.stat(key_of(1)) is not None
    again = await acquire(claims)
    assert isinstance(again, Claim)
    await claims.release(again)
    assert await store.stat(key_of(1)) is None
    assert await store.stat(key_of(2)) is None


async def test_a_claim_marked_ran_says_so(store: LocalArtifactStore) -> None:
    claims = Claims(store, lease=20.0, holder="manager")
    won = await acquire(claims, fingerprint="f")
    assert isinstance(won, Claim)
    await claims.mark_ran(won)
    record = await claims.read(won.key)
    assert record is not None
    assert record.ran
    assert record.fingerprint == "f"


async def test_records_are_written_with_the_members_earlier_managers_read(
    store: LocalArtifactStore,
) -> None:
    won = await acquire(Claims(store, lease=20.0, holder="manager"), fingerprint="f")
    assert isinstance(won, Claim)
    ref = await store.stat(won.key)
    assert ref is not None
    written = json.loads(await store.get_bytes(ref))
    # `lease` is new and optional: earlier managers ignore it, and judge by their own lease.
    assert set(written) == {"fingerprint", "manager", "attempt", "at", "renewed", "lease"}
    assert written["lease"] == 20.0
    builder = Claims(store, lease=20.0, holder="builder").record(1)
    assert set(json.loads(builder.encoded())) == {"builder", "attempt", "at", "renewed", "lease"}


@pytest.mark.parametrize(
    "stored",
    [
        # an execution's claim, as executions.py wrote it before claims.py
        {"fingerprint": "f", "manager": "m", "attempt": 2, "at": 5.0, "renewed": 7.0},
        # and after its result could not be stored
        {"fingerprint": "f", "manager": "m", "attempt": 2, "at": 5.0, "renewed": 7.0, "ran": True},
        # an environment build's claim, as environments.py wrote it
        {"builder": "b", "attempt": 2, "at": 5.0, "renewed": 7.0},
    ],
)
async def test_records_of_the_earlier_code_decode(
    store: LocalArtifactStore, stored: dict[str, object]
) -> None:
    await put(store, "work/.claim", stored)
    record = await Claims(store, lease=20.0, holder="manager").read("work/.claim")
    assert record is not None
    assert record.attempt == 2
    assert record.last_renewed == 7.0
    assert record.ran is stored.get("ran")
    assert json.loads(record.encoded()) == stored


async def test_a_record_without_renewed_counts_from_when_it_was_claimed() -> None:
    assert ClaimRecord.model_validate({"at": 3.0}).last_renewed == 3.0


async def test_a_key_holding_no_claim_record_is_a_storage_error(
    store: LocalArtifactStore,
) -> None:
    await store.put_bytes("work/.claim", b"not json")
    with pytest.raises(StorageError, match="no claim record"):
        await Claims(store, lease=20.0, holder="manager").read("work/.claim")


async def test_a_claim_is_judged_by_its_own_lease_and_the_clock_skew(
    store: LocalArtifactStore,
) -> None:
    """A manager with a short lease does not take over a claim whose holder keeps a long one,
    nor one whose lease passed by less than the clock skew; it does once both have passed."""
    holder = Claims(store, lease=60.0, holder="manager", holder_id="host-a:8090")
    won = await acquire(holder, fingerprint="f")
    assert isinstance(won, Claim)
    written = json.loads(await store.get_bytes(await store.stat(won.key)))
    assert written["manager"] == "host-a:8090"

    waits: list[float] = []

    async def noted(left: float) -> None:
        waits.append(left)
        raise GaveUp("waiting")

    eager = Claims(store, lease=1.0, holder="manager", clock_skew=5.0)
    with pytest.raises(GaveUp):
        await acquire(eager, fingerprint="f", wait=noted)
    assert 60.0 < waits[0] <= 65.0  # the holder's lease and the skew, not its own 1 s

    # Renewed 62 s ago: past the holder's lease, not past lease + skew.
    stale = {**written, "at": time.time() - 62, "renewed": time.time() - 62}
    await store.put_bytes(won.key, json.dumps(stale).encode())
    waits.clear()
    with pytest.raises(GaveUp):
        await acquire(eager, fingerprint="f", wait=noted)
    assert 0 < waits[0] <= 3.0

    # Renewed 70 s ago: lapsed for everyone; the next attempt is claimed.
    lapsed = {**written, "at": time.time() - 70, "renewed": time.time() - 70}
    await store.put_bytes(won.key, json.dumps(lapsed).encode())
    taken = await acquire(eager, fingerprint="f", wait=noted)
    assert isinstance(taken, Claim)
    assert taken.attempt == 2
