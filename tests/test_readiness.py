"""The start-up waiting policy (``skillweave.readiness``): one warning while a dependency is
not up, back-off, one line when it comes; a failure that can never pass goes through at once;
``Readiness.serving`` lets a server answer while its set-up waits, and tells a later failure
to whoever runs it."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator

import pytest

from skillweave.errors import ConfigError, StorageError
from skillweave.readiness import Readiness, StartBackoff, all_ready, until_ready
from skillweave.storage.reachable import not_up_yet

FAST = StartBackoff(initial=0.01, maximum=0.02)


def refused(exc: BaseException) -> str | None:
    return "connection refused" if isinstance(exc, ConnectionRefusedError) else None


class Flaky:
    """Fails `times` times with `error`, then answers 42."""

    def __init__(self, times: int, error: Exception | None = None) -> None:
        self.left = times
        self.error = error or ConnectionRefusedError()
        self.calls = 0

    async def __call__(self) -> int:
        self.calls += 1
        if self.left > 0:
            self.left -= 1
            raise self.error
        return 42


async def test_a_dependency_not_up_yet_is_warned_once_waited_for_and_said_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    readiness = Readiness()
    attempt = Flaky(4)
    seen: list[list[str]] = []

    async def watch() -> None:
        while True:
            seen.append([wait.on for wait in readiness.waiting_for()])
            await asyncio.sleep(0.005)

    watcher = asyncio.create_task(watch())
    with caplog.at_level(logging.WARNING, logger="skillweave.readiness"):
        got = await until_ready(
            "Temporal at h:1",
            attempt,
            on="temporal",
            transient=refused,
            readiness=readiness,
            backoff=FAST,
        )
    watcher.cancel()
    assert got == 42
    assert attempt.calls == 5
    lines = [record.getMessage() for record in caplog.records]
    assert lines[0] == (
        "waiting for Temporal at h:1 (connection refused): start it; retrying with back-off"
    )
    assert len(lines) == 2, lines
    assert lines[1].startswith("Temporal at h:1 is up after ")
    assert ["temporal"] in seen
    assert readiness.waiting_for() == []


async def test_a_failure_that_never_passes_goes_through_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    attempt = Flaky(1, ConfigError("WORKFLOW__TEMPORAL_ADDRESS 'x' is not HOST:PORT"))
    with pytest.raises(ConfigError, match="not HOST:PORT"):
        await until_ready("Temporal at x", attempt, on="temporal", transient=refused, backoff=FAST)
    assert attempt.calls == 1
    assert not caplog.records


async def test_an_attempt_with_no_answer_is_tried_again() -> None:
    calls = 0

    async def slow_then_quick() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            await asyncio.sleep(10)
        return "up"

    got = await until_ready(
        "x", slow_then_quick, on="x", transient=refused, backoff=FAST, timeout=0.05
    )
    assert got == "up"
    assert calls == 2


def test_the_backoff_doubles_from_one_second_to_fifteen_jittered() -> None:
    backoff = StartBackoff()
    for attempt, nominal in ((1, 1), (2, 2), (3, 4), (4, 8), (5, 15), (9, 15)):
        delay = backoff.delay(attempt)
        assert nominal * 0.8 <= delay <= nominal * 1.2, (attempt, delay)


async def test_all_ready_cancels_the_others_when_one_fails_for_good() -> None:
    cancelled = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.sleep(60)
        finally:
            cancelled.set()

    async def bad() -> None:
        raise ConfigError("no such namespace")

    with pytest.raises(ConfigError, match="no such namespace"):
        await all_ready(forever(), bad())
    assert cancelled.is_set()


def test_only_a_store_that_is_not_up_yet_is_waited_for() -> None:
    assert not_up_yet(StorageError("x", code="ConnectionError")) == "no connection"
    assert not_up_yet(StorageError("x", code="HTTP503")) == "it answers HTTP503"
    assert not_up_yet(StorageError("x", code="SlowDown")) is not None
    for code in ("AccessDenied", "InvalidAccessKeyId", "NoSuchBucket", "SignatureDoesNotMatch"):
        assert not_up_yet(StorageError("x", code=code)) is None, code
    assert not_up_yet(StorageError("x")) is None
    assert not_up_yet(ConfigError("bad endpoint")) is None


@contextlib.asynccontextmanager
async def set_up(readiness: Readiness, attempt: Flaky, log: list[str]) -> AsyncIterator[None]:
    await until_ready(
        "the store", attempt, on="store", transient=refused, readiness=readiness, backoff=FAST
    )
    log.append("set up")
    try:
        yield
    finally:
        log.append("torn down")


async def test_a_server_answers_while_its_set_up_waits_then_is_ready() -> None:
    readiness = Readiness()
    log: list[str] = []
    async with readiness.serving(set_up(readiness, Flaky(3), log)):
        # Entered once the set-up began to wait: not ready, and it says what for.
        body = readiness.health()
        assert body["ready"] is False
        assert [wait["on"] for wait in body["waiting_for"]] == ["store"]  # type: ignore[index,union-attr]
        while not readiness.ready:
            await asyncio.sleep(0.01)
        assert readiness.health() == {"ready": True, "waiting_for": []}
        assert log == ["set up"]
    assert log == ["set up", "torn down"]


async def test_a_set_up_that_fails_before_it_waits_raises_where_it_is_entered() -> None:
    readiness = Readiness()
    with pytest.raises(ConfigError, match="never"):
        async with readiness.serving(set_up(readiness, Flaky(1, ConfigError("never")), [])):
            pytest.fail("entered")
    gc.collect()


async def test_a_set_up_that_fails_after_it_waited_is_told_to_who_runs_the_server() -> None:
    readiness = Readiness()
    told: list[BaseException] = []
    readiness.on_failure(told.append)
    attempt = Flaky(2)

    @contextlib.asynccontextmanager
    async def failing() -> AsyncIterator[None]:
        await until_ready(
            "the store", attempt, on="store", transient=refused, readiness=readiness, backoff=FAST
        )
        raise StorageError("bucket 'b' does not exist", code="NoSuchBucket")
        yield  # pragma: no cover

    async with readiness.serving(failing()):
        while not told:
            await asyncio.sleep(0.01)
    assert isinstance(told[0], StorageError)
    assert readiness.failure is told[0]
    assert readiness.ready is False
    assert readiness.health()["failed"] == "bucket 'b' does not exist"
